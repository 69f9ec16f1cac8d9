"""Time to a verdict, as a user feels it: the README's main command on moto in-process, wall time per phase.

Runs, in one session and each in a fresh process, `python3 -m conformance run --target moto` as the README does
(the witnesses, then the search for the default budget, then the report with Spark), and the same with
`--witnesses-only` and without `--report`, so that the figures say where the time goes. Prints each wall time and
its ratio to the witnesses-only run (the baseline of this session).

    python benchmarks/main_command.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(*args: str) -> tuple[float, int, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "conformance", "run", "--target", "moto", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=1800)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    return time.perf_counter() - start, done.returncode, last


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = [
            ("witnesses only", ["--witnesses-only", "--out", f"{tmp}/a"]),
            ("witnesses + default search", ["--out", f"{tmp}/b"]),
            ("the README's command (+ report)", ["--out", f"{tmp}/c", "--report", f"{tmp}/c/report"]),
        ]
        baseline = None
        for label, args in runs:
            seconds, code, last = timed(*args)
            baseline = baseline or seconds
            print(f"{label:34s} {seconds:7.1f} s  ({seconds / baseline:4.1f}x witnesses only)  exit {code}: {last}")


if __name__ == "__main__":
    main()
