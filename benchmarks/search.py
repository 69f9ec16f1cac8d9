"""The search's time to its findings on moto in-process, against the same search with Hypothesis' `explain` phase
put back (as the suite ran it until 2026-11-26), alternately in one process.

The search alone: no witnesses and no budget (rounds until one finds no new rule, then coverage rounds), seeded,
so both start from the same draws. For each profile and seed, each way: wall time, rounds, cases, steps, how many
of moto's requests ran under a tracer (`explain` traces every case once a round has failed), the rules found and
the total length of their minimal cases; then the ratio of the times. First, what a call to moto costs traced.

    python3 -m benchmarks.search [--profiles sqs-standard sqs-fifo] [--seeds 1 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import Phase  # noqa: E402

from sqs_conformance.adapters.moto_target import MotoTarget  # noqa: E402
from sqs_conformance.conformance import runner  # noqa: E402

WAYS = ("with explain", "now")
TRACER_MIX = ["SendMessage", "ReceiveMessage", "ChangeMessageVisibility", "DeleteMessage", "GetQueueAttributes"]


def tracer_cost(rounds: int = 120) -> str:
    """A plain boto3 loop on moto in-process, then the same under the tracer Hypothesis' `explain` phase installs:
    what a traced case pays for each of its calls."""
    from hypothesis.internal.scrutineer import Tracer  # internal, as `explain` uses it; here only to measure it

    from throughput import raw_loop  # benchmarks/throughput.py, beside this script

    calls = TRACER_MIX * rounds
    plain = len(calls) / raw_loop(calls, fifo=False)
    with Tracer(should_trace=True):
        traced = len(calls) / raw_loop(calls, fifo=False)
    return f"plain boto3 on moto {plain:,.0f} calls/s, under Hypothesis' tracer {traced:,.0f} ({len(calls)} calls)"


def search(profile: str, seed: int, explain: bool) -> tuple[str, float]:
    """One seeded search on a fresh moto, described on one line, and its seconds."""
    phases = runner.search_phases
    if explain:
        runner.search_phases = lambda shrink: [*phases(shrink), Phase.explain]  # type: ignore[assignment]
    target = MotoTarget()
    requests = traced = 0
    execute = target.execute

    def counted(op):
        nonlocal requests, traced
        requests += 1
        traced += sys.gettrace() is not None
        return execute(op)

    target.execute = counted  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            result = runner.run(target, profile, runner.RunOptions(seed=seed, out_dir=Path(out), witnesses=False))
            seconds = time.perf_counter() - start
    finally:
        runner.search_phases = phases  # type: ignore[assignment]
        target.close()
    lengths = sum(len(f.steps) for f in result.findings.values())
    return (f"{seconds:6.1f} s  {result.rounds} rounds, {result.cases:,} cases, {result.steps:,} steps, "
            f"{traced:,} of {requests:,} requests traced; {len(result.findings)} rules found, minimal cases "
            f"{lengths} steps in all"), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", nargs="+", default=["sqs-standard", "sqs-fifo"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    args = parser.parse_args()
    print(tracer_cost(), flush=True)
    for profile in args.profiles:
        for seed in args.seeds:
            times = {}
            for way in WAYS:
                line, times[way] = search(profile, seed, explain=way == "with explain")
                print(f"{profile:12s} seed {seed}  {way:12s} {line}", flush=True)
            print(f"{profile:12s} seed {seed}  now / with explain = {times['now'] / times['with explain']:.2f}",
                  flush=True)


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("search", __doc__):
        main()
