"""The full rule catalogue against a real-clock endpoint: wall time and requests, one job against several.

Starts moto's server on 127.0.0.1 (stopped by its pid at the end) and checks every reachable rule against it
through the endpoint adapter, as against AWS: real sleeps, short timeouts. The catalogue is each rule's witness
(`run --witnesses-only`); with `--examples N` the Hypothesis search follows, N cases a round. The same run is
timed with one job and with `--jobs` concurrent jobs in the same session: wall time, and requests per second
(what overlapping the waits buys).

    python3 -m benchmarks.realtime [--jobs 8] [--examples 0] [--profile sqs-standard]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqs_conformance.adapters.registry import close_all, make_targets  # noqa: E402
from sqs_conformance.conformance.machine import unreachable  # noqa: E402
from sqs_conformance.conformance.runner import RunOptions, run  # noqa: E402
from sqs_conformance.model.rules import rules_for  # noqa: E402


def timed(profile: str, jobs: int, examples: int, out: Path) -> tuple[float, int, int, int, int]:
    targets = make_targets("moto-server", profile, jobs=jobs)
    start = time.perf_counter()
    try:
        result = run(targets, profile, RunOptions(examples=max(examples, 1), seed=1, out_dir=out, shrink=False,
                                                  search=examples > 0))
    finally:
        seconds = time.perf_counter() - start
        requests = targets[0].requests_billed()
        close_all(targets)
    reachable = [r.id for r in rules_for(profile) if r.id not in unreachable(profile)]
    decided = result.tallies.decided() | set(result.findings)  # a rule counts where a step could have caught it
    exercised = sum(1 for rule_id in reachable if rule_id in decided)
    return seconds, requests, exercised, len(reachable), len(result.findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--examples", type=int, default=0, help="then search, this many cases a round")
    parser.add_argument("--profile", default="sqs-standard")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = {}
        for jobs in (1, args.jobs):
            seconds, requests, exercised, reachable, diverging = timed(args.profile, jobs, args.examples,
                                                                       Path(tmp) / str(jobs))
            figures[jobs] = (seconds, requests / seconds)
            print(f"{jobs} job(s): {seconds:6.1f} s wall, {requests:,} requests ({requests / seconds:,.1f}/s), "
                  f"{exercised}/{reachable} reachable rules decided, {diverging} diverging")
        # With a search, jobs get at least 10 cases a round each, so the two runs may not do the same work.
        print(f"wall time, 1 job / {args.jobs} jobs = {figures[1][0] / figures[args.jobs][0]:.2f}; "
              f"requests/s, {args.jobs} jobs / 1 job = {figures[args.jobs][1] / figures[1][1]:.2f}")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("realtime", __doc__):
        main()
