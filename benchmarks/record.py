"""The one writer of docs/benchmarks.md: each benchmark writes its own section there, the figures it printed, dated,
with the versions it ran with and the machine, so that no figure on that page is written by hand.

A benchmark's `__main__` block runs its `main()` under `recorded`:

    if __name__ == "__main__":
        with recorded("main_command", __doc__):
            main()

Everything `main()` prints goes to the terminal as before and, once it has ended without an error, replaces that
benchmark's section of the page (the other sections are kept as they are). `--help` records nothing, and
`--no-record` (taken out of the arguments before the benchmark reads them) runs it without touching the page.
"""

from __future__ import annotations

import io
import os
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"
NO_RECORD = "--no-record"

# Every benchmark, in the page's order, with the command that fills its section.
BENCHMARKS: dict[str, str] = {
    "main_command": "python3 -m benchmarks.main_command",
    "interrupt": "python3 -m benchmarks.interrupt",
    "model_ops": "python3 -m benchmarks.model_ops",
    "model_instructions": "python3 -m benchmarks.model_instructions",
    "throughput": "python3 -m benchmarks.throughput",
    "realtime": "python3 -m benchmarks.realtime",
    "moved_clock": "python3 -m benchmarks.moved_clock",
    "search": "python3 -m benchmarks.search",
    "mutants": "python3 -m benchmarks.mutants --design sqliteq",
    "races": "python3 -m benchmarks.races",
    "history_checker": "python3 -m benchmarks.history_checker",
    "pipeline": "python3 -m benchmarks.pipeline",
    "class_path": "python3 -m benchmarks.class_path",
}
VERSIONS = ("moto", "pyspark", "hypothesis")


def _start(name: str) -> str:
    return f"<!-- benchmark:{name} -->"


def _end(name: str) -> str:
    return f"<!-- /benchmark:{name} -->"


def versions() -> str:
    from sqs_conformance.conformance.matrix import suite_version

    found = [f"Python {sys.version.split()[0]}", suite_version(), model_build()]
    for package in VERSIONS:
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} not installed")
    return ", ".join(found)


def model_build() -> str:
    """Whether the model ran compiled (setup.py): figures of the two are not comparable."""
    import sqs_conformance.model.core  # noqa: F401 - imported, so that compiled_modules counts it
    from sqs_conformance.model.compiled import compiled_modules

    count = len(compiled_modules())
    return f"the model compiled ({count} modules)" if count else "the model as plain Python"


def machine(load: tuple[float, float, float] | None) -> str:
    from sqs_conformance.conformance.matrix import machine as this_machine

    busy = f"; load average {load[0]:.2f} (1 min), {load[1]:.2f} (5 min) as it started" if load else ""
    return this_machine() + busy


def sections(text: str) -> dict[str, str]:
    """The sections of a page, by benchmark name, each with its markers."""
    found = {}
    for name in BENCHMARKS:
        start, end = _start(name), _end(name)
        if start in text and end in text.split(start, 1)[1]:
            found[name] = start + text.split(start, 1)[1].split(end, 1)[0] + end
    return found


def placeholder(name: str) -> str:
    return (f"{_start(name)}\n## {name}\n\nNot measured yet: `{BENCHMARKS[name]}` writes this section.\n"
            f"{_end(name)}")


def section(name: str, about: str, command: str, output: str, started: datetime, seconds: float,
            load: tuple[float, float, float] | None) -> str:
    fence = "````" if "```" in output else "```"
    return "\n".join([
        _start(name), f"## {name}", "",
        about, "",
        "| | |", "|---|---|",
        f"| measured | {started.strftime('%Y-%m-%d %H:%M')} UTC, for {seconds / 60:.1f} min |",
        f"| command | `{command}` |",
        f"| versions | {versions()} |",
        f"| machine | {machine(load)} |",
        "", fence + "text", output.rstrip("\n"), fence,
        _end(name)])


def page(kept: dict[str, str]) -> str:
    head = ["# Benchmarks", "",
            "<!-- Written by benchmarks/record.py: each section by the benchmark it names, when it runs. Do not edit "
            "by hand; run the benchmark again. -->", "",
            "What the suite costs, measured by the benchmarks under `benchmarks/`, run from the repository's root. "
            "Each section is what one benchmark printed the last time it ran, with when, the versions it ran with "
            "and the machine: figures of two sections are comparable only where those match, and a busy machine "
            "(its load average is given) moves them. The benchmarks print figures; they never assert them.", ""]
    body = [kept.get(name) or placeholder(name) for name in BENCHMARKS]
    return "\n".join(head) + "\n" + "\n\n".join(body) + "\n"


def write(name: str, text: str, path: Path = PAGE) -> None:
    """Replace `name`'s section of the page at `path` (made, with every other section a placeholder, if missing)."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}: add it to benchmarks/record.py's BENCHMARKS")
    kept = sections(path.read_text()) if path.is_file() else {}
    kept[name] = text
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.writing")
    aside.write_text(page(kept))
    aside.replace(path)


class _Tee(io.TextIOBase):
    def __init__(self, through) -> None:
        self.through = through
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.through.write(text)

    def flush(self) -> None:
        self.through.flush()

    def isatty(self) -> bool:
        return False


@contextmanager
def recorded(name: str, doc: str | None = None, path: Path = PAGE) -> Iterator[None]:
    """Run the block with its printed output kept; write it as `name`'s section if the block ends without error."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}: add it to benchmarks/record.py's BENCHMARKS")
    record = NO_RECORD not in sys.argv[1:] and not {"-h", "--help"} & set(sys.argv[1:])
    sys.argv[1:] = [a for a in sys.argv[1:] if a != NO_RECORD]
    command = shlex.join([*BENCHMARKS[name].split()[:3], *sys.argv[1:]])
    about = (doc or "").strip().split("\n\n")[0].replace("\n", " ")
    started, clock = datetime.now(UTC), time.monotonic()
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        yield
    except SystemExit as exit:
        if exit.code not in (None, 0):
            record = False
        raise
    except BaseException:
        record = False
        raise
    finally:
        sys.stdout = tee.through
        if record:
            write(name, section(name, about, command, tee.kept.getvalue(), started, time.monotonic() - clock, load),
                  path)
            print(f"(recorded in {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}, section {name})")
