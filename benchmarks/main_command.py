"""Time to a verdict, as a user feels it: the README's main command on moto in-process, wall time per phase.

Runs, in one session and each in a fresh process, `sqs-conformance run --target moto` as the README does
(the witnesses, then the search for the default budget, then the report with Spark), and the same with
`--witnesses-only` and without `--report`, so that the figures say where the time goes. Prints each wall time and
its ratio to the witnesses-only run (the baseline of this session), and what the report adds after the run's results.

    python3 -m benchmarks.main_command
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path
from tests.cli import SQS_CONFORMANCE

ROOT = Path(__file__).resolve().parent.parent


def timed(*args: str) -> tuple[float, int, str, float | None]:
    """Wall seconds, exit code and last line of `run --target moto ARGS`, and the seconds from the run's results
    (its table) to the report's line: what the report adds after the run (None without a report)."""
    start = time.perf_counter()
    command = [*SQS_CONFORMANCE, "run", "--target", "moto", *args]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT) as done:
        assert done.stdout is not None
        lines, results_at, report_at = [], None, None
        for line in done.stdout:
            lines.append(line.rstrip())
            if results_at is None and " against " in line and " cases, " in line:  # the results table's title
                results_at = time.perf_counter()
            if report_at is None and line.startswith("report: "):
                report_at = time.perf_counter()
        code = done.wait(timeout=1800)
    kept = [line for line in lines if line.strip()]
    report = report_at - results_at if report_at is not None and results_at is not None else None
    return time.perf_counter() - start, code, kept[-1] if kept else "", report


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = [
            ("witnesses only", ["--witnesses-only", "--out", f"{tmp}/a"]),
            ("witnesses + default search", ["--out", f"{tmp}/b"]),
            ("the README's command (+ report)", ["--out", f"{tmp}/c", "--report", f"{tmp}/c/report"]),
        ]
        baseline = None
        for label, args in runs:
            seconds, code, last, report = timed(*args)
            baseline = baseline or seconds
            print(f"{label:34s} {seconds:7.1f} s  ({seconds / baseline:4.1f}x witnesses only)  exit {code}: {last}")
            if report is not None:
                print(f"{'  of which the report, after the run':34s} {report:7.1f} s")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("main_command", __doc__):
        main()
