"""The suite against each semantic mutant of an in-house design: the kill matrix (mutant × rules that caught it),
the mutation score, the time to kill (median and max) and the length of the shortest case shown.

A run as a user makes it: first the witnesses (every rule's shortest case, all replayed); if they kill the
mutant, that is its time to kill. Otherwise the Hypothesis search follows (rounds, shrinking included) and the
time to kill is the witnesses' plus the whole search's. The Redis design's mutants share one redis-server on
127.0.0.1, started here and stopped by its pid.

    python benchmarks/mutants.py [--design redisq|example] [--examples 30] [--seed 1] [--shrink-seconds 30]
                                 [--mutant NAME]...
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.runner import run  # noqa: E402


def designs() -> dict[str, list[tuple[str, str, object]]]:
    """Per design: (name, profile, a factory of the target) for each mutant."""
    from adapters.examples import mutants as example
    from adapters.redisq import mutants as redisq

    return {
        "redisq": [(m.name, m.profile, m.target) for m in redisq.MUTANTS],
        "example": [(m.__name__, "sqs-standard", m) for m in example.MUTANTS],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--design", choices=["redisq", "example"], default="redisq")
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mutant", action="append", default=[], help="only this one (repeatable)")
    parser.add_argument("--shrink-seconds", type=float, default=30.0,
                        help="at most this long shrinking a search round's divergences (Hypothesis' own: 300)")
    args = parser.parse_args()
    catalogue = designs()[args.design]
    chosen = [m for m in catalogue if not args.mutant or m[0] in args.mutant]
    if args.mutant and len(chosen) != len(set(args.mutant)):
        sys.exit(f"no such mutant; known: {', '.join(m[0] for m in catalogue)}")
    server = None
    if args.design == "redisq" and "SQS_CONFORMANCE_REDIS_URL" not in os.environ:
        from adapters.redisq.server import start_redis

        server = start_redis()
        os.environ["SQS_CONFORMANCE_REDIS_URL"] = f"redis://127.0.0.1:{server.port}/0"
    try:
        measure(chosen, args.examples, args.seed, args.shrink_seconds)
        if args.design == "example" and not args.mutant:
            from adapters.examples.mutants import EQUIVALENT

            for mutant, why in EQUIVALENT.items():
                print(f"not counted, equivalent to what the documents permit: {mutant.__name__} ({why})")
    finally:
        if server is not None:
            server.stop()


def measure(chosen, examples: int, seed: int, shrink_seconds: float) -> None:
    killed, times, lengths = 0, [], []
    print(f"{'mutant':30s} {'profile':13s} {'killed by':>9s} {'seconds':>8s} {'steps':>5s}  rules that caught it")
    for name, profile, factory in chosen:
        target = factory(profile)
        try:
            start = time.perf_counter()
            result = run(target, profile, seed=seed, search=False)
            by = "witness"
            if not result.findings:
                result = run(target, profile, examples=examples, seed=seed, shrink_seconds=shrink_seconds)
                by = "search"
            seconds = time.perf_counter() - start
        finally:
            target.close()
        shortest = min((len(f.steps) for f in result.findings.values()), default=0)
        if result.findings:
            killed += 1
            times.append(seconds)
            lengths.append(shortest)
        print(f"{name:30s} {profile:13s} {by if result.findings else 'NOTHING':>9s} {seconds:8.2f} "
              f"{shortest if result.findings else '-':>5}  {', '.join(sorted(result.findings)) or '-'}", flush=True)
    print(f"\nmutation score: {killed}/{len(chosen)}")
    if times:
        print(f"time to kill: median {statistics.median(times):.2f} s, max {max(times):.2f} s")
        print(f"shortest case: median {statistics.median(lengths):.0f} steps, max {max(lengths)} steps")


if __name__ == "__main__":
    main()
