"""The suite against each semantic mutant of an in-house design: the kill matrix (mutant × rules that caught it),
the mutation score, the time to kill (median and max) and the length of the shortest case shown.

A run as a user makes it: first the witnesses (every rule's shortest case, all replayed); if they kill the
mutant, that is its time to kill. Otherwise the default run follows (the witnesses, then the Hypothesis search
for `run`'s default budget on a virtual clock, shrinking included) and the time to kill is both runs'. The Redis
design's mutants share one redis-server on 127.0.0.1, started here and stopped by its pid.

    python3 -m benchmarks.mutants [--design redisq|example|sqliteq|eventlogq|wheelq|leaseq] [--examples 30] [--seed 1]
                                  [--shrink-seconds 30] [--mutant NAME]... [--witnesses-only | --search-only]

`--search-only` measures the search without the witnesses, which kill every mutant of every design on their own:
one round of `--examples` examples (Hypothesis' `max_examples`; 100 here), seeded, not shrunk, for each mutant; it
prints the mutants the search finds by itself and how many cases and seconds it took. The cases are the
machine-independent figure (the same seed draws the same cases, so two versions of the machine compare by them);
they count the cases Hypothesis set aside too (rejected, or past its size limit), so may pass 100.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqs_conformance.conformance.runner import DEFAULT_BUDGET, RunOptions, run  # noqa: E402


# Designs whose mutants were written beside the witnesses that kill them (the suite's tuning), and designs
# written independently, from the documents alone, with bugs written before the suite ran on them (its power).
TUNED = ("redisq", "example")
INDEPENDENT = ("sqliteq", "eventlogq", "wheelq", "leaseq")
# wheelq's and leaseq's mutants that only a FIFO queue shows, by their names (the rest are measured on a standard one)
FIFO_ONLY = ("fifo-", "attempt-", "dedup-")
DEFAULT_EXAMPLES, SEARCH_ONLY_EXAMPLES = 30, 100  # a search round's examples: the default run's, the search alone's


def correct_design(design: str):
    """The design each mutant is one edit of, which may diverge itself (a choice the documents do not permit). A
    witness kills a mutant where it diverges and the correct design's same witness did not, at that step, on that
    rule (the witnesses are replayed alike on both); the search, whose cases differ from run to run, tolerates the
    rules the correct design's own default run diverges on (counted, not kills)."""
    from benchmarks.reference_designs.eventlogq.target import EventLogQueueTarget
    from benchmarks.reference_designs.leaseq.target import LeaseQueueTarget
    from benchmarks.reference_designs.redisq.target import RedisQueueTarget
    from benchmarks.reference_designs.sqliteq.target import SqliteQueueTarget
    from benchmarks.reference_designs.wheelq.target import WheelQueueTarget
    from examples.inhouse_queue import InHouseQueue

    return {"redisq": RedisQueueTarget, "example": InHouseQueue, "sqliteq": SqliteQueueTarget,
            "eventlogq": EventLogQueueTarget, "wheelq": WheelQueueTarget, "leaseq": LeaseQueueTarget}[design]


def designs() -> dict[str, list[tuple[str, str, object]]]:
    """Per design: (name, profile, a factory of the target) for each mutant."""
    from benchmarks.reference_designs.eventlogq import mutants as eventlogq
    from benchmarks.reference_designs import example_mutants as example
    from benchmarks.reference_designs.leaseq import mutants as leaseq
    from benchmarks.reference_designs.redisq import mutants as redisq
    from benchmarks.reference_designs.sqliteq import mutants as sqliteq
    from benchmarks.reference_designs.wheelq import mutants as wheelq

    return {
        "redisq": [(m.name, m.profile, m.target) for m in redisq.MUTANTS],
        "example": [(m.__name__, "sqs-standard", m) for m in example.MUTANTS],
        "sqliteq": [(m.name, "sqs-standard", m.target) for m in sqliteq.MUTANTS],
        "eventlogq": [(m.name, "sqs-standard", m.target) for m in eventlogq.MUTANTS],
        "wheelq": [(m.name, "sqs-fifo" if m.name.startswith(FIFO_ONLY) else "sqs-standard", m.target)
                   for m in wheelq.MUTANTS],
        "leaseq": [(m.name, "sqs-fifo" if m.name.startswith(FIFO_ONLY) else "sqs-standard", m.target)
                   for m in leaseq.MUTANTS],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--design", choices=[*TUNED, *INDEPENDENT], default="redisq",
                        help=f"tuned: {', '.join(TUNED)}; independent: {', '.join(INDEPENDENT)}")
    parser.add_argument("--examples", type=int, help=f"examples a search round runs [default: {DEFAULT_EXAMPLES}; "
                                                     f"{SEARCH_ONLY_EXAMPLES} with --search-only]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mutant", action="append", default=[], help="only this one (repeatable)")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--witnesses-only", action="store_true", help="the witnesses alone: no default run after")
    only.add_argument("--search-only", action="store_true", help="the search alone: one round, no witnesses")
    parser.add_argument("--shrink-seconds", type=float, default=30.0,
                        help="at most this long shrinking a search round's divergences (Hypothesis' own: 300)")
    args = parser.parse_args()
    if args.examples is not None and args.examples < 1:
        parser.error("--examples must be at least 1")
    catalogue = designs()[args.design]
    chosen = [m for m in catalogue if not args.mutant or m[0] in args.mutant]
    if args.mutant and len(chosen) != len(set(args.mutant)):
        sys.exit(f"no such mutant; known: {', '.join(m[0] for m in catalogue)}")
    server = None
    if args.design == "redisq" and "SQS_CONFORMANCE_REDIS_URL" not in os.environ:
        from benchmarks.reference_designs.redisq.server import start_redis

        server = start_redis()
        os.environ["SQS_CONFORMANCE_REDIS_URL"] = f"redis://127.0.0.1:{server.port}/0"
    try:
        if args.search_only:
            search_alone(chosen, args.examples or SEARCH_ONLY_EXAMPLES, args.seed)
        else:
            measure(chosen, args.examples or DEFAULT_EXAMPLES, args.seed, args.shrink_seconds,
                    search=not args.witnesses_only, correct=correct_design(args.design))
        if args.design == "example" and not args.mutant:
            from benchmarks.reference_designs.example_mutants import EQUIVALENT

            for mutant, why in EQUIVALENT.items():
                print(f"not counted, equivalent to what the documents permit: {mutant.__name__} ({why})")
    finally:
        if server is not None:
            server.stop()


def measure(chosen, examples: int, seed: int, shrink_seconds: float, search: bool = True, correct=None) -> None:
    killed, by_witnesses, times, lengths = 0, 0, [], []
    profiles = dict.fromkeys(p for _, p, _ in chosen)
    own = {profile: _own_divergences(correct, profile, examples, seed, shrink_seconds)
           for profile in profiles} if correct is not None else {}
    own_witnesses = {profile: _closed_after(correct(profile), lambda t, p=profile: _witness_divergences(t, p, seed))
                     for profile in profiles} if correct is not None else {}
    for profile, rules in own.items():
        print(f"the correct design on {profile} diverges itself on: {', '.join(sorted(rules)) or 'nothing'} "
              f"(the search tolerates them: no kill; a witness kills where it diverges and the correct design's "
              f"same witness did not, at that step on that rule)")
    print(f"{'mutant':30s} {'profile':13s} {'killed by':>9s} {'seconds':>8s} {'steps':>5s}  rules that caught it")
    for name, profile, factory in chosen:
        target = factory(profile)
        tolerate = own.get(profile, frozenset())
        try:
            start = time.perf_counter()
            by, (rules, shortest) = "witness", _witness_kills(target, profile, seed, own_witnesses.get(profile))
            if not rules and search:  # the default run: witnesses, then the search for its default budget
                result = run(target, profile, RunOptions(examples=examples, seed=seed, shrink_seconds=shrink_seconds,
                                                         budget=DEFAULT_BUDGET["virtual"], tolerate=tolerate))
                by, rules = "search", sorted(result.findings)
                shortest = min((len(f.steps) for f in result.findings.values()), default=0)
            seconds = time.perf_counter() - start
        finally:
            target.close()
        if rules:
            killed += 1
            by_witnesses += by == "witness"
            times.append(seconds)
            lengths.append(shortest)
        print(f"{name:30s} {profile:13s} {by if rules else 'NOTHING':>9s} {seconds:8.2f} "
              f"{shortest if shortest else '-':>5}  {', '.join(rules) or '-'}", flush=True)
    print(f"\nmutation score: {killed}/{len(chosen)} (witnesses alone: {by_witnesses}/{len(chosen)}"
          + (f"; witnesses then the search: {killed}/{len(chosen)})" if search else ")"))
    if times:
        print(f"time to kill: median {statistics.median(times):.2f} s, max {max(times):.2f} s")
        print(f"shortest case: median {statistics.median(lengths):.0f} steps, max {max(lengths)} steps")



# A witness's divergence: the witness's steps up to it (each operation's kind and time in its case: case numbers
# shift where a run adds cases of its own, a finding's replay say), and the rule named first
WitnessDivergence = tuple[tuple[tuple[str, float], ...], str]


def _closed_after(target, use):
    try:
        return use(target)
    finally:
        target.close()


def _witness_divergences(target, profile: str, seed: int) -> frozenset[WitnessDivergence]:
    """Where the witnesses diverge on `target`, as its trace records it."""
    with tempfile.TemporaryDirectory() as out:
        run(target, profile, RunOptions(seed=seed, search=False, out_dir=Path(out)))
        lines = [json.loads(line) for line in (Path(out) / "trace.jsonl").read_text().splitlines()]
    cases: dict[int, list[dict]] = {}
    for line in lines:
        cases.setdefault(line["case"], []).append(line)
    found = set()
    for steps in cases.values():
        steps.sort(key=lambda line: line["step"])
        for index, line in enumerate(steps):
            if line["verdict"] != "behind":
                prefix = tuple((s["operation"]["type"], round(s["invoke"], 3)) for s in steps[:index + 1])
                found |= {(prefix, d["rules"][0]) for d in line["divergences"]}
    return frozenset(found)


def _witness_kills(target, profile: str, seed: int,
                   correct: frozenset[WitnessDivergence] | None) -> tuple[list[str], int]:
    """The rules of the witnesses that kill the mutant `target`, where it diverges and the correct design's same
    witness did not (with no correct design: wherever they diverge), and the steps of the shortest such case up to
    its divergence (0: not killed)."""
    kills = _witness_divergences(target, profile, seed) - (correct or frozenset())
    return sorted({rule for _, rule in kills}), min((len(steps) for steps, _ in kills), default=0)


def _own_divergences(correct, profile: str, examples: int, seed: int, shrink_seconds: float) -> frozenset[str]:
    """The rules the correct design diverges from on `profile` in the default run (witnesses, then the search)."""
    target = correct(profile)
    try:
        result = run(target, profile, RunOptions(examples=examples, seed=seed, shrink_seconds=shrink_seconds,
                                                 budget=DEFAULT_BUDGET["virtual"]))
    finally:
        target.close()
    return frozenset(result.findings)


def search_alone(chosen, examples: int, seed: int) -> None:
    """Each mutant against one seeded round of the search, no witnesses, no shrinking."""
    found, cases, times = 0, [], []
    print(f"{'mutant':30s} {'profile':13s} {'found':>5s} {'cases':>5s} {'seconds':>8s}  rules that caught it")
    for name, profile, factory in chosen:
        target = factory(profile)
        try:
            start = time.perf_counter()
            result = run(target, profile, RunOptions(examples=examples, seed=seed, witnesses=False, shrink=False,
                                                     max_rounds=1, coverage_rounds=0))
            seconds = time.perf_counter() - start
        finally:
            target.close()
        if result.findings:
            found += 1
            cases.append(result.cases)
            times.append(seconds)
        print(f"{name:30s} {profile:13s} {'yes' if result.findings else 'no':>5s} {result.cases:5d} {seconds:8.2f}  "
              f"{', '.join(sorted(result.findings)) or '-'}", flush=True)
    print(f"\nthe search alone found {found}/{len(chosen)} in one round of {examples} examples (seed {seed})")
    if cases:
        print(f"cases to the finding: median {statistics.median(cases):.0f}, max {max(cases)}; "
              f"seconds: median {statistics.median(times):.2f}, max {max(times):.2f}")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("mutants", __doc__):
        main()
