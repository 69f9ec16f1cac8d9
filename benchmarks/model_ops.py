"""Operations per second of the reference model on a mixed workload.

The model sits inside every step of every run, so it must be cheap. Three figures, same operation mix, same
process: the model acting as a queue (`step`), the model checking those answers (`observe`, what the engine
does at every step), and a bare dict-based queue with none of the semantics as the baseline. Per receive, it
also prints how many messages were returned and how many the model looked at one by one (model/settled.py).
Then the same mix with receives of one message, its operations replayed through fresh models: what an operation
costs as the backlog grows when the work it does does not (issue 16 asks for that cost to stay flat). With
`--replays N`, also the fastest of N replays of the same operations through fresh models, as a queue and as a
checker: the figure the machine's drift moves least, for comparing two versions of the model.

    python3 -m benchmarks.model_ops [--ops N] [--profile NAME] [--backlog N ...] [--full-look] [--replays N]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqs_conformance.conformance.translate import IdMap  # noqa: E402
from sqs_conformance.model import Model  # noqa: E402
from sqs_conformance.model.profiles import get_profile  # noqa: E402
from sqs_conformance.model.values import (  # noqa: E402
    ChangeMessageVisibility, CreateQueue, DeleteMessage, GetQueueAttributes, ReceiveMessage, SendMessage,
)


BACKLOGS = (10, 100, 1000)  # messages a queue holds at most (sends stop past it): a run holds about ten; the
# cost of an operation should not grow with the messages it does not touch


def workload(n: int, seed: int = 7):
    """(kind, argument, time advance) triples: sends, receives, changes, deletes, attribute reads."""
    rng = random.Random(seed)
    kinds = ["send"] * 3 + ["receive"] * 3 + ["change"] * 2 + ["delete"] * 2 + ["attributes"]
    return [(rng.choice(kinds), rng.choice([0, 5, 30, 60, 600]), rng.choice([0, 0.5, 1, 10])) for _ in range(n)]


def run_model(profile: str, ops, backlog: int, indexed: bool = True, per_receive: int = 10
              ) -> tuple[float, float, list]:
    """Seconds for the model acting as the queue, then for a second model checking those answers; and the
    operations with their times and answers (in model space: `in_model_space`). Each receive asks for up to
    `per_receive` messages."""
    target = Model(profile, indexed=indexed)
    attrs = {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if target.profile.fifo else {}
    handles: list[str] = []
    now = 0.0
    receive_kw = {"max_messages": per_receive} if target.profile.validates_receive_params else {}
    recorded = []

    def do(op):
        response, _ = target.step(op, now)
        recorded.append((op, now, response))
        return response

    do(CreateQueue("q", attrs))
    gc.collect()  # each timing starts with no garbage of the runs before it
    start = time.perf_counter()
    for i, (kind, value, advance) in enumerate(ops):
        now += advance
        if kind == "send":
            if len(target.queues["q"].message_ids) < backlog:
                do(SendMessage("q", f"m{i}", group_id=f"g{i % 8}" if target.profile.fifo else None))
        elif kind == "receive":
            handles += [m.receipt_handle for m in do(ReceiveMessage("q", **receive_kw)).messages]
        elif kind == "change" and handles:
            do(ChangeMessageVisibility("q", handles[-1 - i % min(4, len(handles))], value or 1))
        elif kind == "delete" and handles:
            do(DeleteMessage("q", handles.pop()))
        elif kind == "attributes":
            do(GetQueueAttributes("q"))
    as_queue = time.perf_counter() - start

    recorded = in_model_space(profile, recorded)
    return as_queue, checked(profile, recorded, indexed), recorded


def in_model_space(profile: str, recorded: list) -> list:
    """The answers as the engine hands them to its checker (conformance/translate.py): an id the target returns
    for the first time reads as None, until the check binds it to the one the checker minted. Made outside the
    timings, by a model checking through an id map as a session does; untranslated, every send and every receipt
    a receive returned would be judged a divergence, and the checker's figure would time those. Raises if the
    model diverged from itself."""
    ids, checker, translated = IdMap(), Model(profile), []
    for op, at, response in recorded:
        observed = ids.response_for_model(response)
        verdict = checker.observe(op, at, observed)
        if verdict.divergences:
            raise AssertionError(f"the model diverged from itself at {op}: {verdict.divergences}")
        ids.bind_fresh(verdict.outcome, response)
        translated.append((op, at, observed))
    return translated


def replayed(profile: str, recorded) -> float:
    """Seconds for a fresh model stepping through the recorded operations as a queue (its answers are its own, and
    the same: the model is deterministic)."""
    queue = Model(profile)
    gc.collect()
    start = time.perf_counter()
    for op, at, _ in recorded:
        queue.step(op, at)
    return time.perf_counter() - start


def checked(profile: str, recorded, indexed: bool = True) -> float:
    """Seconds for a fresh model checking the recorded answers."""
    checker = Model(profile, indexed=indexed)
    gc.collect()  # each timing starts with no garbage of the runs before it
    start = time.perf_counter()
    for op, at, response in recorded:
        checker.observe(op, at, response)
    return time.perf_counter() - start


def fastest_replays(profile: str, recorded, replays: int) -> tuple[float, float]:
    """Seconds an operation as a queue and as a checker, each the fastest of `replays` replays of the same
    operations through fresh models: on a machine whose speed drifts, the figure least moved by it."""
    as_queue = min(replayed(profile, recorded) for _ in range(replays))
    as_checker = min(checked(profile, recorded) for _ in range(replays))
    return as_queue / len(recorded), as_checker / len(recorded)


def per_receive(profile: str, recorded) -> tuple[float, float]:
    """What an average receive did: messages it returned, and messages it looked at one by one (its candidates:
    neither settled nor surely hidden through it, nor behind where a FIFO group stops or past its reach). Counted on
    a third model, outside the timings."""
    counter = Model(profile)
    receives = returned = looked_at = 0
    for op, at, response in recorded:
        if isinstance(op, ReceiveMessage):
            receives += 1
            returned += len(response.messages)
            looked_at += len(counter.expect(op, at).candidates)
        counter.observe(op, at, response)
    return returned / max(receives, 1), looked_at / max(receives, 1)


def run_baseline(ops, backlog: int) -> float:
    """The same mix on a dict of message -> visible-at, with no outcome sets, rules or validation."""
    visible_at: dict[str, float] = {}
    in_flight: dict[str, str] = {}
    handles: list[str] = []
    now = 0.0
    gc.collect()  # each timing starts with no garbage of the runs before it
    start = time.perf_counter()
    for i, (kind, value, advance) in enumerate(ops):
        now += advance
        if kind == "send":
            if len(visible_at) < backlog:
                visible_at[f"m{i}"] = now
        elif kind == "receive":
            got = [m for m, t in visible_at.items() if t <= now][:10]
            for m in got:
                visible_at[m] = now + 30
                handle = f"h{i}-{m}"
                in_flight[handle] = m
                handles.append(handle)
        elif kind == "change" and handles:
            m = in_flight.get(handles[-1 - i % min(4, len(handles))])
            if m in visible_at:
                visible_at[m] = now + (value or 1)
        elif kind == "delete" and handles:
            visible_at.pop(in_flight.get(handles.pop(), ""), None)
        elif kind == "attributes":
            sum(1 for t in visible_at.values() if t <= now)
    return time.perf_counter() - start


def target_receives_one(profile: str) -> bool:
    """Whether the profile's receives take a message count (the 2008 API's and SMQ's do not here)."""
    return get_profile(profile).validates_receive_params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=50_000)
    parser.add_argument("--profile", default="all")
    parser.add_argument("--backlog", type=int, action="append", help=f"[default: {', '.join(map(str, BACKLOGS))}]")
    parser.add_argument("--full-look", action="store_true",
                        help="also time sqs-standard with Model(indexed=False), every message looked at (the baseline; "
                             "a queue is indexed from model.core.INDEX_FROM messages)")
    parser.add_argument("--replays", type=int, default=0,
                        help="also the fastest of this many replays of the same operations (queue and checker)")
    args = parser.parse_args()
    if args.ops < 1 or args.replays < 0:
        parser.error("--ops must be at least 1 and --replays at least 0")
    ops = workload(args.ops)
    profiles = ["sqs-standard", "sqs-fifo", "sqs-2008", "smq"] if args.profile == "all" else [args.profile]
    for backlog in args.backlog or BACKLOGS:
        baseline = args.ops / run_baseline(ops, backlog)
        print(f"backlog {backlog:5d}: baseline dict queue {baseline:,.0f} ops/s ({args.ops:,} ops drawn)")
        for profile in profiles:
            as_queue, checking, recorded = run_model(profile, ops, backlog)
            # per operation made (sends past the backlog and changes or deletes with no handle are drawn, not made);
            # the queue's first, CreateQueue, is made before its timing starts, and checked within the checker's
            step, observe = (len(recorded) - 1) / as_queue, len(recorded) / checking
            returned, looked_at = per_receive(profile, recorded)
            print(f"  {profile:13s} model as queue: {step:9,.0f} ops/s ({1e6 / step:5.1f} us/op)   "
                  f"as checker: {observe:9,.0f} ops/s ({1e6 / observe:5.1f} us/op)   "
                  f"(queue = {args.ops / as_queue / baseline:.3f} x baseline, on the ops drawn)   "
                  f"a receive returns {returned:.1f}, "
                  f"looks at {looked_at:.1f} one by one")
            if args.replays:
                queue_op, checker_op = fastest_replays(profile, recorded, args.replays)
                print(f"  {'':13s} fastest of {args.replays} replays: as queue {1e6 * queue_op:5.1f} us "
                      f"({1 / queue_op:,.0f} ops/s), as checker {1e6 * checker_op:5.1f} us ({1 / checker_op:,.0f} "
                      f"ops/s) an operation ({len(recorded):,} made)")
            if target_receives_one(profile):
                # A deeper backlog also fills each receive (up to 10 messages, each handled): with one message a
                # receive, what is left is what the messages it does not touch cost. The operations made (under a
                # small cap more of the drawn sends are skipped), replayed through a fresh model as a queue and as a
                # checker: the model's own time, none of the loop drawing them.
                _, one_checking, made = run_model(profile, ops, backlog, per_receive=1)
                one_queue = replayed(profile, made)
                print(f"  {'':13s} one message a receive, replayed: as queue {1e6 * one_queue / len(made):5.1f} us, "
                      f"as checker {1e6 * one_checking / len(made):5.1f} us an operation ({len(made):,} made)")
            if profile == "sqs-standard" and args.full_look:
                full_queue, full_checking, full_made = run_model(profile, ops, backlog, indexed=False)
                print(f"  {'  no index':13s} model as queue: {(len(full_made) - 1) / full_queue:9,.0f} ops/s   "
                      f"as checker: {len(full_made) / full_checking:9,.0f} ops/s   (the index makes the queue "
                      f"{full_queue / as_queue:.2f} x as fast)")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("model_ops", __doc__):
        main()
