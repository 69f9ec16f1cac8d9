"""The emulator matrix: every emulator the suite can start, checked against each profile, as one rule × emulator
table. Each emulator is moved in time under libfaketime where its timers follow the wall clock, and checked on a
real clock (with concurrent jobs) where they do not."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.emulators import EMULATORS
from sqs_conformance.adapters.endpoint import TimeTravelUnsupported
from sqs_conformance.adapters.registry import TIME_TRAVEL, close_all, make_targets
from sqs_conformance.conformance import report, runner
from sqs_conformance.model.rules import rules_for

START, END = "<!-- emulator-matrix:start -->", "<!-- emulator-matrix:end -->"
REAL_CLOCK_JOBS = 4
SYMBOL = {"conforms": "✓", "diverges": "**✗**", "undecided": "○", "not exercised": "·"}


@dataclass
class Cell:
    """One emulator checked against one profile."""

    emulator: str
    profile: str
    version: str = ""
    clock: str = ""  # "libfaketime" or "real"
    seconds: float = 0.0
    cases: int = 0
    verdicts: dict[str, str] = field(default_factory=dict)  # rule id -> conforms | diverges | undecided | not exercised
    findings: str = ""  # the folder of its minimal cases
    error: str = ""


def check(emulator: str, profile: str, *, examples: int, steps: int, seed: int | None, out_dir: Path,
          real_clock: bool = False, search: bool = True, budget: float | None = None,
          say=lambda message: None) -> Cell:
    """Start `emulator` (moved in time if it can be and not `real_clock`), run the suite on it as `run` does
    (the witnesses, then, if `search`, the search for `budget` seconds, the run's default when None), stop it.
    A failure to install or start is the cell's error, not the matrix's."""
    cell = Cell(emulator, profile)
    started = time.monotonic()
    try:
        targets = None
        if not real_clock:
            try:
                targets = make_targets(emulator + TIME_TRAVEL, profile, say=say)
                cell.clock = "libfaketime"
            except TimeTravelUnsupported as why:
                say(f"{why}; checking it on a real clock with {REAL_CLOCK_JOBS} jobs")
        if targets is None:
            targets = make_targets(emulator, profile, jobs=REAL_CLOCK_JOBS, say=say)
            cell.clock = "real"
        try:
            cell.version = targets[0].version()
            result = runner.run(targets, profile, examples=examples, seed=seed, steps_per_case=steps,
                                out_dir=out_dir / emulator / profile, search=search,
                                budget=runner.search_budget(targets[0].clock.kind, budget))
        finally:
            close_all(targets)
    except TargetError as error:
        cell.error = str(error)
        cell.seconds = time.monotonic() - started
        return cell
    cell.seconds = time.monotonic() - started
    cell.cases = result.cases
    findings = report.write_findings(result, out_dir / emulator / profile)
    cell.findings = str(findings) if findings is not None else ""
    cell.verdicts = {r.id: result.verdict(r.id) for r in rules_for(profile)}
    return cell


def load(paths: list[Path]) -> list[Cell]:
    """Cells saved by earlier matrix runs (say, one per emulator, run side by side), in the order given."""
    cells = []
    for path in paths:
        try:
            saved = json.loads(path.read_text())
            if not isinstance(saved, list) or not saved:
                raise ValueError("expected a list of cells")
            cells += [Cell(**c) for c in saved]
        except (OSError, ValueError, TypeError) as error:
            raise TargetError(f"{path} is not a matrix.json written by `sqs-conformance matrix`: {error}") from None
    return cells


def save(cells: list[Cell], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(c) for c in cells], indent=1) + "\n")


def markdown(cells: list[Cell], command: str, on: date) -> str:
    """The matrix as README text: per profile, a table of rules (rows) by emulator (columns)."""
    lines = [f"Checked on {on.isoformat()} with `{command}`. "
             f"{SYMBOL['conforms']} conforms, {SYMBOL['diverges']} diverges (a minimal case was found), "
             f"{SYMBOL['undecided']} exercised only where any answer was permitted (no verdict), "
             f"{SYMBOL['not exercised']} not exercised.", ""]
    for profile in dict.fromkeys(c.profile for c in cells):
        row = [c for c in cells if c.profile == profile]
        lines += [f"**{profile}**", "",
                  "| rule | " + " | ".join(f"{c.emulator} {c.version}".strip() for c in row) + " |",
                  "|---|" + "---|" * len(row),
                  "| clock | " + " | ".join(c.clock or "—" for c in row) + " |",
                  "| cases | " + " | ".join(str(c.cases) for c in row) + " |"]
        for r in rules_for(profile):
            lines.append(f"| {r.id} | " + " | ".join(
                "—" if c.error else SYMBOL[c.verdicts.get(r.id, "not exercised")] for c in row) + " |")
        lines.append("| diverging rules | " + " | ".join(
            "—" if c.error else str(sum(v == "diverges" for v in c.verdicts.values())) for c in row) + " |")
        lines.append("")
        for c in row:
            if c.error:
                lines.append(f"- {c.emulator} ({profile}) was not checked: {c.error}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_into(readme: Path, text: str) -> None:
    """Replace the matrix between its markers, or add it as a section at the end; the rest is left as it was."""
    old = readme.read_text() if readme.exists() else ""
    block = f"{START}\n{text}{END}"
    if START in old and END in old:
        head, rest = old.split(START, 1)
        new = head + block + rest.split(END, 1)[1]
    else:
        new = old.rstrip() + f"\n\n## Emulator matrix\n\n{block}\n"
    readme.write_text(new)


def known(emulators: tuple[str, ...]) -> list[str]:
    unknown = [e for e in emulators if e not in EMULATORS]
    if unknown:
        raise TargetError(f"unknown emulator {', '.join(unknown)}; known: {', '.join(EMULATORS)}")
    return list(emulators) or list(EMULATORS)
