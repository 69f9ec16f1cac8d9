"""The suite against each semantic mutant of the in-house example queue: the kill matrix (mutant × rules that
caught it), the mutation score, the time of the whole run that killed it (median and max; shrinking included)
and the length of its shortest shrunk case.

    python benchmarks/mutants.py [--examples 30] [--seed 1] [--mutant NAME]...
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.examples.mutants import MUTANTS  # noqa: E402
from conformance.runner import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mutant", action="append", default=[], help="only this one (repeatable)")
    args = parser.parse_args()
    chosen = [m for m in MUTANTS if not args.mutant or m.__name__ in args.mutant]
    if args.mutant and len(chosen) != len(set(args.mutant)):
        sys.exit(f"no such mutant; known: {', '.join(m.__name__ for m in MUTANTS)}")
    killed, times, lengths = 0, [], []
    print(f"{'mutant':34s} {'killed':>6s} {'seconds':>8s} {'steps':>5s}  rules that caught it")
    for mutant in chosen:
        start = time.perf_counter()
        # A run as a user makes it (rounds until nothing new, then coverage rounds), divergences shrunk.
        result = run(mutant("sqs-standard"), "sqs-standard", examples=args.examples, seed=args.seed)
        seconds = time.perf_counter() - start
        shortest = min((len(f.steps) for f in result.findings.values()), default=0)
        if result.findings:
            killed += 1
            times.append(seconds)
            lengths.append(shortest)
        print(f"{mutant.__name__:34s} {'yes' if result.findings else 'NO':>6s} {seconds:8.1f} "
              f"{shortest if result.findings else '-':>5}  {', '.join(sorted(result.findings)) or '-'}")
    print(f"\nmutation score: {killed}/{len(chosen)}")
    if times:
        print(f"time to kill: median {statistics.median(times):.1f} s, max {max(times):.1f} s")
        print(f"shortest case: median {statistics.median(lengths):.0f} steps, max {max(lengths)} steps")


if __name__ == "__main__":
    main()
