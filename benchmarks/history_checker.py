"""The history checker's throughput on stored concurrent histories: 8 clients on one queue (the model as the
queue, so that every history conforms and the whole of it is searched), sizes 1e4 and 1e5 operations by default.
For each: operations, parts, the operations left unjudged in parts whose search ran out of budget (the figures
mean nothing unless that is 0), the processes its parts were searched by (`spread.py`: every core from 20,000
operations), seconds to check, operations per second, and the cost per operation against the smallest size's (1.0 is
linear). The baseline in the same process: the same operations judged one by one in the
order recorded by a single model with no search (what the checker would cost if nothing overlapped).

    python3 -m benchmarks.history_checker [--sizes 10000 100000 1000000] [--profile sqs-standard]
"""

from __future__ import annotations

import argparse
import time

from benchmarks.record import recorded
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.concurrent.checker import check_history
from sqs_conformance.conformance.concurrent.clients import clients_of, close_shared, threads
from sqs_conformance.conformance.concurrent.history import History
from sqs_conformance.conformance.concurrent.spread import workers_for
from sqs_conformance.conformance.concurrent.path import judge
from sqs_conformance.conformance.concurrent.workload import VIRTUAL, RandomDraw, draw_workload
from sqs_conformance.conformance.translate import IdMap
from sqs_conformance.model import Model
from sqs_conformance.model.state import Timing

OPERATIONS_PER_ROUND = 15  # about: 8 clients, 1..3 actions each, some changes and deletes with nothing held


def recorded_history(profile: str, size: int) -> History:
    target = ModelTarget(profile)
    connections = clients_of(target, 8)
    try:
        rounds = max(1, size // OPERATIONS_PER_ROUND)
        return threads(connections, profile, draw_workload(RandomDraw(size), 8, rounds, profile == "sqs-fifo",
                                                           VIRTUAL))
    finally:
        close_shared(connections)


def in_recorded_order(history: History) -> float:
    """Seconds to judge every operation once, in invoke order, on one model: no parts, no search."""
    model, ids = Model(history.profile, Timing(windowed=True), indexed=True), IdMap()
    started = time.perf_counter()
    for o in history.ops:
        judge(model, ids, o)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--profile", default="sqs-standard")
    args = parser.parse_args()
    print(f"profile {args.profile}, 8 clients, virtual clock (the model as the queue)\n")
    print("| operations | parts | overlapping pairs | undecided ops | processes | check s | ops/s | µs/op ÷ smallest's "
          "| one model, recorded order, ops/s | conforms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    first_cost = None
    for size in args.sizes:
        history = recorded_history(args.profile, size)
        overlapping = sum(1 for a, b in zip(history.ops, history.ops[1:], strict=False) if not a.precedes(b))
        started = time.perf_counter()
        verdict = check_history(history)
        seconds = time.perf_counter() - started
        cost = seconds / len(history.ops)
        first_cost = first_cost or cost
        plain = in_recorded_order(history)
        undecided = sum(len(part.ops) for part in verdict.undecided)
        print(f"| {len(history.ops):,} | {len(verdict.decomposed.parts):,} | {overlapping:,} | {undecided:,} | "
              f"{workers_for(len(history.ops))} | {seconds:.1f} | "
              f"{len(history.ops) / seconds:,.0f} | {cost / first_cost:.2f} | {len(history.ops) / plain:,.0f} | "
              f"{verdict.conforms} |")
    print("\nGoal (issue 46): 1e6 operations in 30 s, about 33,000 ops/s, linear.")


if __name__ == "__main__":
    with recorded("history_checker", __doc__):
        main()
