"""How long Ctrl-C takes to stop a run, and how long a run takes past its budget.

Stop: `run --target moto-server --jobs 8` (a real clock), in a process group of its own, is sent SIGINT to the
group once its trace has a few hundred steps; the figure is the wall time from the signal to the exit (the guide's
goal: within 2 s). The same for `run --target moto-server --clients 8` (eight consumers on one queue, a real clock),
and for `check` of a stored concurrent history of 100,000 operations (`--check-size`), signalled once its parts are
being searched by its processes (the process has children), and for `run --target moto-server:faketime --witnesses-only`
(a moved clock), signalled once its witnesses play while its other servers are still opening. The baseline, in
the same session: a bare `sqs-conformance --version`, the cost of starting and ending the interpreter with the
suite imported, which no stop can avoid.

Budget: `run --target moto-server --jobs 8 --budget B`; the figure is the wall time past B (the goal: no more than
the longest single request's timeout, 25 s), beside the time the server takes to start.

    python3 -m benchmarks.interrupt [--trials 3] [--budget 30] [--check-size 100000]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from sqs_conformance.conformance.concurrent.spread import SPREAD_FROM
from tests.cli import SQS_CONFORMANCE

ROOT = Path(__file__).resolve().parent.parent
RUN = [*SQS_CONFORMANCE, "run", "--target", "moto-server", "--jobs", "8"]
CLIENTS = [*SQS_CONFORMANCE, "run", "--target", "moto-server", "--clients", "8", "--examples", "50"]
MOVED = [*SQS_CONFORMANCE, "run", "--target", "moto-server:faketime", "--witnesses-only"]
MOVED_STEPS = 5  # steps in the trace: the first server plays, the others still open (about a second each)
CHECK_SIZE = 100_000  # operations: spread over every core (conformance/concurrent/spread.py), about 5 s to check
UnderWay = Callable[[subprocess.Popen], bool]


def seconds_to_stop(command: list[str], under_way: UnderWay) -> tuple[float, int]:
    """Wall seconds from SIGINT (to the command's group, as Ctrl-C sends it) to its exit, once `under_way()`, and
    its exit code."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    while not under_way(process):
        if process.poll() is not None:
            raise SystemExit(f"{' '.join(command[-4:])} ended before the signal (exit {process.returncode})")
        time.sleep(0.1)
    sent = time.perf_counter()
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait(timeout=300)
    return time.perf_counter() - sent, code


def has_steps(trace: Path, steps: int) -> UnderWay:
    return lambda _: trace.exists() and trace.read_text().count("\n") >= steps


def has_children(process: subprocess.Popen) -> bool:
    """Whether the process has started others (a check's pool of searching processes)."""
    tasks = Path(f"/proc/{process.pid}/task")
    try:
        return any((task / "children").read_text().strip() for task in tasks.iterdir())
    except OSError:  # it ended, or a thread did meanwhile
        return False


def stored_history(path: Path, size: int = CHECK_SIZE) -> Path:
    """A conforming concurrent history of about `size` operations (8 clients, the model as the queue), as trace
    lines."""
    from benchmarks.history_checker import recorded_history
    from sqs_conformance.conformance.concurrent.checker import check_history
    from sqs_conformance.conformance.concurrent.records import records
    from sqs_conformance.conformance.trace import dumps

    history = recorded_history("sqs-standard", size)
    lines = records(history, check_history(history), run_id="stop", target="model", target_version="", case=1)
    path.write_text("".join(dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def stops(name: str, trials: int, start: Callable[[int], tuple[list[str], UnderWay]],
          startup: float) -> None:
    seconds = []
    for trial in range(trials):
        took, code = seconds_to_stop(*start(trial))
        seconds.append(took)
        print(f"{name} {trial + 1}: {took:5.2f} s from SIGINT to exit {code}")
    print(f"{name}: median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s "
          f"({statistics.median(seconds) / startup:.1f}x a bare start and exit, {startup:.2f} s); goal 2 s")


def seconds_of(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="stops measured (default 3)")
    parser.add_argument("--budget", type=float, default=30.0, help="the budget of the budget run (default 30 s)")
    parser.add_argument("--steps", type=int, default=300, help="steps in the trace before the signal (default 300)")
    parser.add_argument("--check-size", type=int, default=CHECK_SIZE,
                        help=f"operations in the history whose check is stopped (default {CHECK_SIZE:,}; from "
                             f"{SPREAD_FROM:,} on, searched by several processes)")
    args = parser.parse_args()
    if args.trials < 1 or args.budget <= 0 or args.steps < 1:
        parser.error("--trials and --steps take a whole number of at least 1, --budget a positive number")
    if args.check_size < SPREAD_FROM:
        parser.error(f"--check-size must be at least {SPREAD_FROM:,}: a smaller check has no processes to end")
    with tempfile.TemporaryDirectory() as tmp:
        startup = min(seconds_of([*SQS_CONFORMANCE, "--version"]) for _ in range(3))
        out = Path(tmp)

        def jobs(trial: int) -> tuple[list[str], UnderWay]:
            return [*RUN, "--out", str(out / f"stop{trial}")], has_steps(out / f"stop{trial}" / "trace.jsonl",
                                                                          args.steps)

        def clients(trial: int) -> tuple[list[str], UnderWay]:
            return [*CLIENTS, "--out", str(out / f"clients{trial}")], has_steps(
                out / f"clients{trial}" / "trace.jsonl", args.steps)

        history = stored_history(out / "history.jsonl", args.check_size)

        def check(trial: int) -> tuple[list[str], UnderWay]:
            return [*SQS_CONFORMANCE, "check", str(history)], has_children

        stops("stop", args.trials, jobs, startup)
        stops("stop of 8 clients on one queue", args.trials, clients, startup)
        def moved(trial: int) -> tuple[list[str], UnderWay]:
            return [*MOVED, "--out", str(out / f"moved{trial}")], has_steps(out / f"moved{trial}" / "trace.jsonl",
                                                                            MOVED_STEPS)

        stops(f"stop of a check of {args.check_size:,} operations", args.trials, check, startup)
        stops("stop of a moved-clock run while its servers open", args.trials, moved, startup)
        wall = seconds_of([*RUN, "--budget", f"{args.budget:g}", "--out", str(Path(tmp) / "budget")])
        print(f"budget {args.budget:g} s: the run took {wall:.1f} s, {wall - args.budget:+.1f} s past it, the server's "
              f"start and the report of the results included; goal: at most one request's timeout (25 s) past it")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("interrupt", __doc__):
        main()
