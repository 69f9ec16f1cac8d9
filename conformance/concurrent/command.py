"""`sqs-conformance run --clients N`: the concurrent run as the command line shows it, and what it leaves in --out.

--out/trace.jsonl gets every case's lines (with `client` and `round`), --out/concurrent/<RULE>/ each finding:
TIMELINE.txt (one column per client), history.jsonl (for `check` and `confirm`) and RULE.py (a threaded replay).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sqs_conformance.adapters.base import Target
from sqs_conformance.conformance.concurrent.finding import timeline, write_finding
from sqs_conformance.conformance.concurrent.run import ConcurrentOptions, ConcurrentResult, run_concurrent
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.model.rules import rules_for

FINDINGS = "concurrent"
DEFAULT_CASES = {"virtual": 20, "real": 3}  # a real clock's case waits out its rounds: about 15 s each


def default_cases(clock_kind: str) -> int:
    return DEFAULT_CASES["virtual" if clock_kind == "virtual" else "real"]


class ClientsInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a concurrent run: where the findings made before the stop were written."""

    def __init__(self, folder: Path | None, found: int) -> None:
        super().__init__()
        self.folder, self.found = folder, found


def run_clients(target: Target, profile: str, options: ConcurrentOptions, out_dir: Path,
                on_case=None) -> ConcurrentResult:
    """The run, its trace in `out_dir` and its findings written, also those of a run stopped (Ctrl-C, SIGTERM):
    as far as it got."""
    trace = TraceWriter(out_dir / "trace.jsonl")
    so_far: list[ConcurrentResult] = []  # the run's result, filled case by case

    def noted(result: ConcurrentResult) -> None:
        so_far[:] = [result]
        if on_case is not None:
            on_case(result)

    try:
        result = run_concurrent(target, profile, options, trace, noted)
    except KeyboardInterrupt as stop:
        found = so_far[0].findings if so_far else {}
        raise ClientsInterrupted(write_findings(so_far[0], out_dir, target) if so_far else None,
                                 len(found)) from stop
    finally:
        trace.close()
    write_findings(result, out_dir, target)
    return result


def write_findings(result: ConcurrentResult, out_dir: Path, target: Target) -> Path | None:
    folder = out_dir / FINDINGS
    if folder.exists():
        shutil.rmtree(folder)  # an earlier run's findings would read as this one's
    if not result.findings:
        return None
    for rule_id, finding in result.findings.items():
        write_finding(finding, folder / rule_id, target.name, target.version())
    (folder / "summary.json").write_text(json.dumps({
        "run_id": result.run_id, "target": result.target, "profile": result.profile, "clients": result.clients,
        "seed": result.seed, "cases": result.cases, "operations": result.operations,
        "diverging": sorted(result.findings)}, indent=2) + "\n", encoding="utf-8")
    return folder


def print_result(result: ConcurrentResult, console: Console, out_dir: Path, target_spec: str) -> None:
    table = Table(title=f"{result.target} against {result.profile}, {result.clients} clients on one queue: "
                        f"{result.cases} cases, {result.operations} operations (seed {result.seed})")
    table.add_column("rule", no_wrap=True)
    for column in ("exercised", "decisive", "diverging"):
        table.add_column(column, justify="right")
    table.add_column("verdict")
    shown = {"diverges": "[red]DIVERGES[/red]", "not exercised": "[yellow]not exercised[/yellow]",
             "undecided": "[yellow]never decisive[/yellow]", "conforms": "[green]conforms[/green]"}
    verdicts = result.verdicts()
    for r in rules_for(result.profile):
        t = result.tallies.get(r.id)
        if t is None:
            continue
        table.add_row(r.id, str(t.exercised), str(t.decisive), str(t.diverging), shown[verdicts[r.id].value])
    console.print(table)
    if result.budget_spent:
        console.print(f"[yellow]the budget ended the run after {result.cases} cases[/yellow]")
    if result.unordered:
        console.print(f"[yellow]{result.unordered} operations in parts of histories the checker could not order "
                      f"within its budget: judged neither way[/yellow]")
    for finding in result.findings.values():
        console.rule(f"[red]{finding.rule}[/red]")
        console.print(timeline(finding), markup=False, soft_wrap=True)
    console.print(f"trace: {out_dir / 'trace.jsonl'}")
    if result.findings:
        first = sorted(result.findings)[0]
        folder = out_dir / FINDINGS
        console.print(f"findings: {folder}/ (TIMELINE.txt to read, RULE.py to replay with threads)")
        console.print(f"re-run one: sqs-conformance confirm --target {target_spec} {folder / first / 'history.jsonl'}",
                      soft_wrap=True)  # a command to copy: never cut in two
    console.print(f"[green]{result.target} conforms to {result.profile} with {result.clients} clients[/green]"
                  if result.conforms else
                  f"[red]{result.target} diverges from {result.profile} with {result.clients} clients on "
                  f"{len(result.findings)} rule(s)[/red]")
