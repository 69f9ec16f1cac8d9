"""How long Ctrl-C takes to stop a run, and how long a run takes past its budget.

Stop: `run --target moto-server --jobs 8` (a real clock), in a process group of its own, is sent SIGINT to the
group once its trace has a few hundred steps; the figure is the wall time from the signal to the exit (the guide's
goal: within 2 s). The baseline, in the same session: a bare `sqs-conformance --version`, the cost of starting and
ending the interpreter with the suite imported, which no stop can avoid.

Budget: `run --target moto-server --jobs 8 --budget B`; the figure is the wall time past B (the goal: no more than
the longest single request's timeout, 25 s), beside the time the server takes to start.

    python3 -m benchmarks.interrupt [--trials 3] [--budget 30]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from tests.cli import SQS_CONFORMANCE

ROOT = Path(__file__).resolve().parent.parent
RUN = [*SQS_CONFORMANCE, "run", "--target", "moto-server", "--jobs", "8"]


def seconds_to_stop(out: Path, steps: int) -> tuple[float, int]:
    """Wall seconds from SIGINT (to the run's group) to its exit, and its exit code."""
    process = subprocess.Popen([*RUN, "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    trace = out / "trace.jsonl"
    while not (trace.exists() and trace.read_text().count("\n") >= steps):
        if process.poll() is not None:
            raise SystemExit(f"the run ended before {steps} steps (exit {process.returncode})")
        time.sleep(0.1)
    sent = time.perf_counter()
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait(timeout=300)
    return time.perf_counter() - sent, code


def seconds_of(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="stops measured (default 3)")
    parser.add_argument("--budget", type=float, default=30.0, help="the budget of the budget run (default 30 s)")
    parser.add_argument("--steps", type=int, default=300, help="steps in the trace before the signal (default 300)")
    args = parser.parse_args()
    if args.trials < 1 or args.budget <= 0 or args.steps < 1:
        parser.error("--trials and --steps take a whole number of at least 1, --budget a positive number")
    with tempfile.TemporaryDirectory() as tmp:
        startup = min(seconds_of([*SQS_CONFORMANCE, "--version"]) for _ in range(3))
        stops = []
        for trial in range(args.trials):
            seconds, code = seconds_to_stop(Path(tmp) / f"stop{trial}", args.steps)
            stops.append(seconds)
            print(f"stop {trial + 1}: {seconds:5.2f} s from SIGINT to exit {code}")
        print(f"stop: median {statistics.median(stops):.2f} s, max {max(stops):.2f} s "
              f"({statistics.median(stops) / startup:.1f}x a bare start and exit, {startup:.2f} s); goal 2 s")
        wall = seconds_of([*RUN, "--budget", f"{args.budget:g}", "--out", str(Path(tmp) / "budget")])
        print(f"budget {args.budget:g} s: the run took {wall:.1f} s, {wall - args.budget:+.1f} s past it, the server's "
              f"start and the report of the results included; goal: at most one request's timeout (25 s) past it")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("interrupt", __doc__):
        main()
