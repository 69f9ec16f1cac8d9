"""Instructions an operation of the reference model costs, counted under callgrind.

A figure the machine's drift does not move (model_ops' timings move by a few percent from one run to the next),
for telling what a change to the model does to its cost. On benchmarks.model_ops' workload: its operations made by
the model as a queue, then checked by a fresh model as the engine checks answers (`observe`). One process checks
them once, another twice: the difference is the work of one check, whatever starting Python and loading them
cost. The baseline: model_ops' dict queue, a message's visible-at and nothing else, counted the same way over the
same drawn operations. Needs valgrind (Debian: apt-get install valgrind).

    python3 -m benchmarks.model_instructions [--ops N] [--profile NAME] [--backlog N]
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.model_ops import run_baseline, run_model, workload  # noqa: E402
from sqs_conformance.model import Model  # noqa: E402

_COLLECTED = re.compile(r"Collected : (\d+)")
_CHILD = "--count-in-child"  # the run valgrind counts: `_CHILD <what> <times> <pickled arguments>`


def _child(what: str, times: int, arguments: Path) -> None:
    """The work counted: `what` ("checker" or "baseline") done `times` times over the pickled arguments."""
    profile, backlog, ops, recorded = pickle.loads(arguments.read_bytes())
    for _ in range(times):
        if what == "checker":
            checker = Model(profile)
            for op, at, response in recorded:
                checker.observe(op, at, response)
        else:
            run_baseline(ops, backlog)


def _instructions(what: str, times: int, arguments: Path, folder: Path) -> int:
    """Instructions the process doing `what` `times` times ran, all of its start included."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder / f'{what}-{times}.out'}",
         sys.executable, "-m", "benchmarks.model_instructions", _CHILD, what, str(times), str(arguments)],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "PYTHONHASHSEED": "0"})  # the same hashes, the same dict probes: the same count each run
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        last = (done.stderr.strip().splitlines() or ["it printed nothing"])[-1]
        raise SystemExit(f"model_instructions: the counted run failed: {last}")
    return int(found.group(1))


def _per_run(what: str, arguments: Path, folder: Path) -> int:
    """Instructions one more run of `what` adds."""
    return _instructions(what, 2, arguments, folder) - _instructions(what, 1, arguments, folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=12_000, help="operations drawn [default: 12,000]")
    parser.add_argument("--profile", default="sqs-standard")
    parser.add_argument("--backlog", type=int, default=10, help="messages the queue holds at most [default: 10]")
    args = parser.parse_args()
    if args.ops < 1 or args.backlog < 1:
        parser.error("--ops and --backlog must be at least 1")
    if shutil.which("valgrind") is None:
        raise SystemExit("model_instructions: valgrind is not installed (Debian: apt-get install valgrind)")
    ops = workload(args.ops)
    _, _, recorded = run_model(args.profile, ops, args.backlog)
    with tempfile.TemporaryDirectory(prefix="model-instructions-") as folder:
        arguments = Path(folder) / "arguments.pickle"
        arguments.write_bytes(pickle.dumps((args.profile, args.backlog, ops, recorded)))
        checker = _per_run("checker", arguments, Path(folder)) / len(recorded)
        baseline = _per_run("baseline", arguments, Path(folder)) / args.ops
    print(f"{args.profile}, backlog {args.backlog}: {len(recorded):,} operations made of {args.ops:,} drawn")
    print(f"  the model as a checker: {checker:,.0f} instructions an operation made")
    print(f"  the baseline dict queue: {baseline:,.0f} an operation drawn; the checker {checker / baseline:,.0f} x it")


if __name__ == "__main__":
    if sys.argv[1:2] == [_CHILD]:
        _child(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
    else:
        from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

        with recorded("model_instructions", __doc__):
            main()
