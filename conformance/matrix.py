"""The emulator matrix: every emulator the suite can start, checked against each profile, as one rule × emulator
table. Each emulator is moved in time under libfaketime where its timers follow the wall clock, and checked on a
real clock (with concurrent jobs) where they do not."""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.emulators import EMULATORS
from sqs_conformance.adapters.endpoint import TimeTravelUnsupported
from sqs_conformance.adapters.registry import TIME_TRAVEL, EndpointOptions, close_all, make_targets
from sqs_conformance.conformance import report, runner
from sqs_conformance.model.rules import rules_for

PAGE = Path("docs") / "emulators.md"  # the page `sqs-conformance matrix` writes, whole
PROFILES = ("sqs-standard", "sqs-fifo")
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
    # Where and when it was measured, so that a page made from saved cells (--merge) says so.
    checked: str = ""  # when the check ended, ISO 8601 in UTC
    command: str = ""  # the command that checked it
    suite: str = ""  # this suite's version (and commit, where it runs from a git checkout)
    machine: str = ""  # cores, memory, OS, Python
    # How far the witnesses got: a budget spent before they all played leaves rules unjudged (say so on the page).
    witnesses_played: int = 0
    witnesses_in_all: int = 0
    ran_out_in: str = ""  # the phase the budget ran out in: "witnesses", "search", or "" (it did not)
    # Many consumers on one queue (`matrix --clients N`): the concurrent run's verdicts, on a real clock
    clients: int = 0
    concurrent: dict[str, str] = field(default_factory=dict)  # rule id -> verdict, as `verdicts`
    concurrent_cases: int = 0
    concurrent_operations: int = 0
    concurrent_seconds: float = 0.0
    concurrent_findings: str = ""
    concurrent_error: str = ""
    concurrent_checked: str = ""  # when the clients' check ended, ISO 8601 in UTC
    concurrent_command: str = ""  # the command that checked it


def check(emulator: str, profile: str, *, examples: int, steps: int, seed: int | None, out_dir: Path,
          real_clock: bool = False, search: bool = True, budget: float | None = None,
          say=lambda message: None) -> Cell:
    """Start `emulator` (moved in time if it can be and not `real_clock`), run the suite on it as `run` does
    (the witnesses, then, if `search`, the search for `budget` seconds, the run's default when None), stop it.
    A failure to install or start is the cell's error, not the matrix's."""
    cell = Cell(emulator, profile, suite=suite_version(), machine=machine())
    started = time.monotonic()
    try:
        targets = None
        if not real_clock:
            try:
                # its witnesses' servers of their own started while the first is probed
                spares = EndpointOptions(moved_spares=runner.MOVED_CLOCK_SERVERS - 1)
                targets = make_targets(emulator + TIME_TRAVEL, profile, options=spares, say=say)
                cell.clock = "libfaketime"
            except TimeTravelUnsupported as why:
                say(f"{why}; checking it on a real clock with {REAL_CLOCK_JOBS} jobs")
        if targets is None:
            targets = make_targets(emulator, profile, jobs=REAL_CLOCK_JOBS, say=say)
            cell.clock = "real"
        try:
            cell.version = targets[0].version()
            how = runner.RunOptions(examples=examples, seed=seed, steps_per_case=steps,
                                    out_dir=out_dir / emulator / profile, search=search,
                                    budget=runner.search_budget(targets[0].clock.kind, budget))
            result = runner.run(targets, profile, how)
        finally:
            close_all(targets)
    except TargetError as error:
        cell.error = str(error)
        cell.seconds = time.monotonic() - started
        cell.checked = _now().isoformat(timespec="seconds")
        return cell
    cell.seconds = time.monotonic() - started
    cell.checked = _now().isoformat(timespec="seconds")
    cell.cases = result.cases
    cell.witnesses_played, cell.witnesses_in_all = result.spent.witnesses_played, result.spent.witnesses_in_all
    cell.ran_out_in = result.spent.ran_out_in or ""
    findings = report.write_findings(result, out_dir / emulator / profile)
    cell.findings = str(findings) if findings is not None else ""
    cell.verdicts = {r.id: result.verdict(r.id) for r in rules_for(profile)}
    return cell


def check_clients(cell: Cell, clients: int, *, cases: int, seed: int | None, out_dir: Path,
                  say=lambda message: None) -> None:
    """The emulator of `cell` started again, on a real clock, and checked with `clients` consumers on one queue
    (`run --clients N`, threads); its verdicts and findings added to the cell."""
    from sqs_conformance.conformance.concurrent.command import run_clients
    from sqs_conformance.conformance.concurrent.run import ConcurrentOptions

    started = time.monotonic()
    cell.clients = clients
    folder = out_dir / cell.emulator / cell.profile / f"{clients}-clients"
    try:
        (target,) = make_targets(cell.emulator, cell.profile, say=say)
        try:
            result = run_clients(target, cell.profile, ConcurrentOptions(
                clients=clients, cases=cases, seed=seed, mode="threads"), folder)
        finally:
            target.close()
    except TargetError as error:
        cell.concurrent_error = str(error)
        return
    finally:
        cell.concurrent_seconds = time.monotonic() - started
        cell.concurrent_checked = _now().isoformat(timespec="seconds")
    cell.concurrent = {rule_id: verdict.value for rule_id, verdict in result.verdicts().items()}
    cell.concurrent_cases, cell.concurrent_operations = result.cases, result.operations
    cell.concurrent_findings = str(folder / "concurrent") if result.findings else ""


def load(paths: list[Path]) -> list[Cell]:
    """Cells saved by earlier matrix runs (say, one per emulator, run side by side), in the order given; a later
    file's cell of an emulator and profile replaces an earlier one's, in its place (one emulator checked again)."""
    cells: dict[tuple[str, str], Cell] = {}
    for path in paths:
        try:
            saved = json.loads(path.read_text())
            if not isinstance(saved, list) or not saved:
                raise ValueError("expected a list of cells")
            for cell in (Cell(**c) for c in saved):
                cells[cell.emulator, cell.profile] = cell
        except (OSError, ValueError, TypeError) as error:
            raise TargetError(f"{path} is not a matrix.json written by `sqs-conformance matrix`: {error}") from None
    return list(cells.values())


def save(cells: list[Cell], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(c) for c in cells], indent=1) + "\n")


def _now() -> datetime:
    return datetime.now(UTC)


@functools.cache
def machine() -> str:
    """This machine in one line: cores, memory, processor, OS, Python. Figures are only comparable on one."""
    parts = [f"{os.cpu_count()} cores"]
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        parts.append(f"{memory / 2**30:.1f} GiB memory")
    except (ValueError, OSError, AttributeError):
        pass
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), None)
        if cpu:
            parts.append(cpu)
    except OSError:
        pass
    try:
        system = platform.freedesktop_os_release()["PRETTY_NAME"] + f" ({platform.system()} {platform.release()})"
    except (OSError, KeyError):
        system = f"{platform.system()} {platform.release()}"
    parts += [system, f"{platform.python_implementation()} {platform.python_version()}"]
    return ", ".join(parts)


@functools.cache
def suite_version() -> str:
    """The suite's version, and its commit where it runs from a git checkout (marked where files differ from it)."""
    try:
        version = f"sqs-conformance {metadata.version('sqs-conformance')}"
    except metadata.PackageNotFoundError:
        version = "sqs-conformance (not installed)"
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=10)
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                                 capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return version
    if commit.returncode or changed.returncode:
        return version
    dirty = " with uncommitted changes" if changed.stdout.strip() else ""
    return f"{version}, commit {commit.stdout.strip()}{dirty}"


def _legend() -> str:
    return (f"{SYMBOL['conforms']} conforms (decided by a step that could have caught the rule broken), "
            f"{SYMBOL['diverges']} diverges (a minimal case was found), "
            f"{SYMBOL['undecided']} undecided (exercised only where any answer was permitted), "
            f"{SYMBOL['not exercised']} not exercised, — not checked.")


def _commands(cells: list[Cell]) -> list[str]:
    return list(dict.fromkeys(c.command for c in cells if c.command))


def _witnesses(c: Cell) -> str:
    if c.error:
        return "—"
    return f"{c.witnesses_played} of {c.witnesses_in_all}" if c.witnesses_in_all else "not recorded"


def side_by_side(cells: list[Cell]) -> list[Cell]:
    """The cells in their order, but each current release's (an entry with `current_of`) right after the cell of
    the pinned entry it stands beside on its profile, where that is there: pinned and current in adjacent columns."""
    current_of = {e.name: e.current_of for e in EMULATORS.values() if e.current_of}
    present = {(c.emulator, c.profile) for c in cells}
    beside = [c for c in cells if (current_of.get(c.emulator), c.profile) in present]
    ordered: list[Cell] = []
    for c in cells:
        if any(c is d for d in beside):
            continue  # placed after its pinned entry's cell
        ordered.append(c)
        ordered += [d for d in beside if current_of[d.emulator] == c.emulator and d.profile == c.profile]
    return ordered


def _day(checked: str) -> str:
    """The day (UTC) of a check's end, ISO 8601."""
    return datetime.fromisoformat(checked).astimezone(UTC).strftime("%Y-%m-%d") if checked else "not recorded"


def markdown(cells: list[Cell]) -> str:
    """The matrix as tables: per profile, rules (rows) by emulator (columns), each column's version and the day it
    was measured at its head; a current release's column beside its pinned one's."""
    lines = [_legend(), ""]
    commands = _commands(cells)
    for profile in dict.fromkeys(c.profile for c in cells):
        row = side_by_side([c for c in cells if c.profile == profile])
        lines += [f"## {profile}", "",
                  "| rule | " + " | ".join(f"{c.emulator} {c.version}".strip() for c in row) + " |",
                  "|---|" + "---|" * len(row),
                  "| measured | " + " | ".join(_day(c.checked) for c in row) + " |"]
        if len(commands) > 1:  # cells merged from several commands: which checked each
            lines.append("| checked by | " + " | ".join(
                str(commands.index(c.command) + 1) if c.command else "—" for c in row) + " |")
        lines += ["| clock | " + " | ".join(c.clock or "—" for c in row) + " |",
                  "| witnesses played | " + " | ".join(_witnesses(c) for c in row) + " |",
                  "| cases | " + " | ".join(str(c.cases) for c in row) + " |",
                  "| minutes | " + " | ".join(f"{c.seconds / 60:.1f}" for c in row) + " |"]
        for r in rules_for(profile):
            lines.append(f"| {r.id} | " + " | ".join(
                "—" if c.error else SYMBOL[c.verdicts.get(r.id, "not exercised")] for c in row) + " |")
        lines.append("| diverging rules | " + " | ".join(
            "—" if c.error else str(sum(v == "diverges" for v in c.verdicts.values())) for c in row) + " |")
        lines.append("")
        lines += _clients_table(row, profile)
        for c in row:
            if c.concurrent_error:
                lines.append(f"- {c.emulator} ({profile}) with {c.clients} clients was not checked: "
                             f"{c.concurrent_error}")
            if c.error:
                lines.append(f"- {c.emulator} ({profile}) was not checked: {c.error}")
            elif c.ran_out_in == "witnesses":
                lines.append(f"- {c.emulator} ({profile}): the budget ran out during the witnesses "
                             f"({_witnesses(c)} played): a rule they did not reach is judged on fewer steps or not "
                             "at all here; check it again with a larger `--budget`.")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _clients_table(row: list[Cell], profile: str) -> list[str]:
    """Many consumers on one queue: each emulator's concurrent run, rule by rule where any of them exercised it."""
    checked = [c for c in row if c.clients]
    if not checked:
        return []
    exercised = [r.id for r in rules_for(profile) if any(r.id in c.concurrent for c in checked)]
    when = _when([(c.concurrent_checked, c.concurrent_seconds) for c in checked])
    commands = list(dict.fromkeys(f"`{c.concurrent_command}`" for c in checked if c.concurrent_command))
    lines = [f"### {profile}: {_one_or_each([str(c.clients) for c in checked], '?')} clients on one queue", "",
             "Each emulator again, on a real clock, with that many consumers sending at once "
             "(`run --clients N`, threads), judged by the history checker "
             f"([many consumers on one queue](guide/concurrency.md)). Checked {when} by "
             f"{'; '.join(commands) or 'a command not recorded'}.", "",
             "| rule | " + " | ".join(f"{c.emulator} {c.version}".strip() for c in checked) + " |",
             "|---|" + "---|" * len(checked),
             "| measured | " + " | ".join(_day(c.concurrent_checked) for c in checked) + " |",
             "| cases | " + " | ".join(str(c.concurrent_cases) for c in checked) + " |",
             "| operations | " + " | ".join(f"{c.concurrent_operations:,}" for c in checked) + " |",
             "| minutes | " + " | ".join(f"{c.concurrent_seconds / 60:.1f}" for c in checked) + " |"]
    for rule_id in exercised:
        lines.append(f"| {rule_id} | " + " | ".join(
            "—" if c.concurrent_error else SYMBOL[c.concurrent.get(rule_id, "not exercised")] for c in checked) + " |")
    lines.append("| diverging rules | " + " | ".join(
        "—" if c.concurrent_error else str(sum(v == "diverges" for v in c.concurrent.values())) for c in checked)
        + " |")
    return lines + [""]


def _checked_by(cells: list[Cell]) -> str:
    commands = _commands(cells)
    if not commands:
        return "not recorded"
    if len(commands) == 1:
        return f"`{commands[0]}`"
    return "; ".join(f"{n}. `{command}`" for n, command in enumerate(commands, 1)) + " (each cell's below)"


def _one_or_each(values: list[str], unknown: str) -> str:
    """A heading's value: the one value all cells share, or each distinct one (cells merged from several runs)."""
    distinct = list(dict.fromkeys(v or unknown for v in values))
    return distinct[0] if len(distinct) == 1 else "; ".join(distinct)


def page(cells: list[Cell], command: str, written: datetime) -> str:
    """The whole page the matrix writes (docs/emulators.md): headed with when and by which command it was measured,
    the emulators' versions and the machine, then the tables. Nothing on it is written by hand."""
    when = _when([(c.checked, c.seconds) for c in cells])
    versions = ", ".join(dict.fromkeys(f"{c.emulator} {c.version}".strip() for c in side_by_side(cells)
                                       if c.version)) or "—"
    lines = ["# Emulator matrix", "",
             "<!-- Written by `sqs-conformance matrix`: do not edit by hand, run it again "
             "(see docs/guide/emulators.md). -->", "",
             "Each SQS emulator the suite starts itself, checked against the two SQS profiles: the witnesses, then "
             "(unless `--witnesses-only`) the search for the run's budget, as `sqs-conformance run` does. An "
             "emulator is moved in time under libfaketime where the time-travel probe passes, else checked on a "
             f"real clock with {REAL_CLOCK_JOBS} jobs. How to read it: [the emulator guide](guide/emulators.md).",
             "",
             "| | |", "|---|---|",
             f"| written | {written.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC by `{command}` |",
             f"| checked | {when} |",
             f"| checked by | {_checked_by(cells)} |",
             f"| emulators | {versions} |",
             f"| suite | {_one_or_each([c.suite for c in cells], 'not recorded')} |",
             f"| machine | {_one_or_each([c.machine for c in cells], 'not recorded')} |",
             ""]
    missing = [f"{e} on {p}" for p in PROFILES for e in EMULATORS
               if not any(c.emulator == e and c.profile == p for c in cells)]
    if missing:
        lines += [f"**Incomplete:** not checked: {', '.join(missing)} (the command was given other emulators or "
                  "profiles, or stopped before them).", ""]
    return "\n".join(lines) + "\n" + markdown(cells)


def _when(checks: list[tuple[str, float]]) -> str:
    """From the first start to the last end of these checks (each when it ended, ISO 8601, and how long it took)."""
    ended = [datetime.fromisoformat(at) for at, _ in checks if at]
    if not ended:
        return "not recorded"
    began = [datetime.fromisoformat(at) - timedelta(seconds=seconds) for at, seconds in checks if at]
    return f"{_minute(min(began))} to {_minute(max(ended))} UTC"


def _minute(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def write_page(path: Path, text: str) -> None:
    """Write the page whole (its folder made if missing), through a file renamed over it: never half a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.writing")
    aside.write_text(text)
    aside.replace(path)


def known(emulators: tuple[str, ...]) -> list[str]:
    unknown = [e for e in emulators if e not in EMULATORS]
    if unknown:
        raise TargetError(f"unknown emulator {', '.join(unknown)}; known: {', '.join(EMULATORS)}")
    return list(emulators) or list(EMULATORS)
