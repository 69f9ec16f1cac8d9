"""`sqs-conformance`: run the suite against a target, re-check traces, list the rules.

Exit codes: 0 the target conforms (or the traces re-check clean), 1 divergences were found, 2 bad input.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.emulators import EMULATORS
from sqs_conformance.adapters.registry import (
    AWS_NOT_MOVED, SPECS, TIME_TRAVEL, EndpointOptions, close_all, is_known, is_real_clock, make_targets,
)
from sqs_conformance.conformance.defaults import DEFAULT_EXAMPLES, DEFAULT_STEPS
from sqs_conformance.reports.folders import NotWritable, remove_if_empty, writable
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.rules import CATALOGUE, rules_for

REPLAY_TRIES = 10  # replays of a concurrent finding `confirm` tries before saying it does not reproduce
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)  # piped: a page wide enough
errors = Console(stderr=True, highlight=False, soft_wrap=True)  # an error stays on one line


class OneLineError(click.ClickException):
    def show(self, file=None) -> None:
        errors.print(f"sqs-conformance: error: {self.message}", markup=False)


TARGET_HELP = f"{' | '.join(SPECS)} (an emulator's name takes {TIME_TRAVEL})"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sqs-conformance", prog_name="sqs-conformance")
def main() -> None:
    """Conformance suite for message-queue visibility-timeout semantics."""


def endpoint_options(command):
    """The options of targets on a real clock, shared by `run` and `cleanup`."""
    for option in reversed([
        click.option("--endpoint-url", multiple=True, metavar="URL",
                     help="an SQS-compatible endpoint (--target endpoint); `run` takes several, each with its "
                          "--faketime-file in the same order: servers on moved clocks of their own, the witnesses "
                          "shared out between them"),
        click.option("--faketime-file", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
                     metavar="FILE", help="--target endpoint on a moved clock: its server was started under "
                                          "libfaketime reading FILE (`sqs-conformance faketime-env FILE` prints "
                                          "how); the suite moves its clock by writing offsets there"),
        click.option("--region", default=None, help="AWS region (default: the boto3 chain's, else us-east-1)"),
        click.option("--aws-profile", default=None, help="a named profile of the AWS config files"),
        click.option("--allow-real-aws", is_flag=True, help="required by --target aws: it costs money"),
        click.option("--max-requests", type=click.IntRange(1, 10**9), default=None,
                     help="stop once this many requests were sent (cleanup is never refused)"),
        click.option("--tolerance", type=click.FloatRange(0, 60), default=None,
                     help="seconds a deadline may show early or late under a real clock "
                          "[default: 0.5, from docs/evidence.md row 'timing-precision']"),
    ]):
        command = option(command)
    return command


def _options(kwargs: dict, several: str | None = None) -> EndpointOptions:
    """The endpoint options, the first --endpoint-url and --faketime-file as the server; `several`: what more
    servers (further pairs, each a server on a moved clock of its own) are for here, None where they are refused."""
    urls, files = tuple(kwargs.pop("endpoint_url", ())), tuple(kwargs.pop("faketime_file", ()))
    if len(urls) > 1 or len(files) > 1:
        if several is None:
            raise OneLineError("this command takes one server: give one --endpoint-url (and --faketime-file)")
        if len(urls) != len(files):
            raise OneLineError(f"{len(urls)} --endpoint-url and {len(files)} --faketime-file: several servers are "
                               f"each on a moved clock of its own, one --faketime-file for each --endpoint-url, in "
                               f"the same order ({several})")
    return EndpointOptions(endpoint_url=urls[0] if urls else None, faketime_file=files[0] if files else None,
                           more_moved=tuple(zip(urls[1:], files[1:], strict=True)),
                           **{k: kwargs.pop(k) for k in list(kwargs) if k in EndpointOptions.__dataclass_fields__})


def _open_targets(target_spec: str, profile: str, options: EndpointOptions, jobs: int = 1) -> list:
    if not is_known(target_spec):
        raise OneLineError(f"unknown target {target_spec!r}; known targets: {', '.join(SPECS)} "
                           f"(an emulator's name takes {TIME_TRAVEL})")
    try:
        return make_targets(target_spec, profile, options, jobs, say=lambda message: console.print(message))
    except TargetError as error:
        raise OneLineError(str(error)) from None


@main.command()
@click.option("--target", "target_spec", required=True, help=TARGET_HELP)
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="sqs-standard", show_default=True)
@click.option("--examples", type=click.IntRange(1, 100_000), default=DEFAULT_EXAMPLES, show_default=True,
              help="generated cases per round")
@click.option("--steps", type=click.IntRange(1, 1000), default=DEFAULT_STEPS, show_default=True,
              help="operations per case at most")
@click.option("--seed", type=click.IntRange(0, 2**63), default=None, help="the same seed gives the same run")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"),
              show_default=True, help="where the trace, summary and minimal cases go")
@click.option("--tolerate", multiple=True, metavar="RULE",
              help="a divergence already known: counted, not reported or shrunk (repeatable)")
@click.option("--no-shrink", is_flag=True, help="report divergences as first found (faster, longer cases)")
@click.option("--shrink-seconds", type=click.FloatRange(1, 3600), default=None,
              help="at most this long shrinking each round's divergences [default: Hypothesis' 300 on a virtual "
                   "clock, 30 on a real one, where every replay waits]")
@click.option("--report", "report_dir", default=None, metavar="DIR",
              help="then build the conformance report (Spark) from every trace under --out into DIR")
@click.option("--jobs", type=click.IntRange(1, 64), default=None,
              help="concurrent jobs, each on its own queues, so that real-clock waits overlap "
                   "[default: 8 on a real clock, else 1]")
@click.option("--witnesses/--no-witnesses", default=True, show_default=True,
              help="first replay each rule's witness, the shortest case that exercises it, all at once")
@click.option("--witnesses-only", is_flag=True,
              help="only the witnesses: every reachable rule checked once, in about a minute on a real clock")
@click.option("--budget", type=click.FloatRange(0, 7 * 86400), default=None, metavar="SECONDS",
              help="the run ends within this many seconds of its start, plus one request's timeout: the "
                   "witnesses, then the search past coverage for more divergences, then (virtual clock) trimming; "
                   "what is under way then is cut, and the run says where; 0: no limit, the search stops once no "
                   "round finds anything new [default: 40 on a virtual clock, 180 on a real or moved one]")
@click.option("--clients", type=click.IntRange(1, 8), default=1, show_default=True,
              help="consumers on one queue at once (2..8): concurrent cases judged by the history checker "
                   "[cases: --examples, default 20 on a virtual clock, 3 on a real one]")
@click.option("--interleaving", type=click.Choice(["auto", "threads", "drawn"]), default="auto", show_default=True,
              help="with --clients: real threads, an order drawn by Hypothesis (virtual clocks), or both (auto: "
                   "half each on a virtual clock, threads on a real one)")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="known divergences: exit 1 only on a divergence not in FILE (a new rule, or a "
                                   "known rule in a new shape); where FILE does not exist yet, this run writes it")
@click.option("--write-baseline", "write_baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="add this run's divergences, with their minimal cases, to the baseline FILE "
                                   "(made if missing): they are known from now on; exit 0 unless the run failed")
@endpoint_options
def run(target_spec: str, profile: str, examples: int, steps: int, seed: int | None, out_dir: Path,
        tolerate: tuple[str, ...], no_shrink: bool, shrink_seconds: float | None, report_dir: str | None,
        jobs: int | None, witnesses: bool, witnesses_only: bool, budget: float | None, clients: int,
        interleaving: str, baseline_file: Path | None, write_baseline: Path | None, **endpoint) -> None:
    """Replay each rule's witness, then generate operation sequences; send them to TARGET and to the model,
    report every divergence."""
    from sqs_conformance.conformance import baseline, report, runner
    from sqs_conformance.conformance.witnesses import WitnessError

    known = None
    if baseline_file is not None and baseline_file.exists():
        try:
            known = baseline.Baseline.load(baseline_file)
        except baseline.BaselineError as error:
            raise OneLineError(f"--baseline {error}") from None
        if known.profile != profile:
            raise OneLineError(f"--baseline {baseline_file} is for {known.profile}, this run checks {profile}")

    if clients > 1:
        _run_clients(target_spec, profile, clients, interleaving, seed, out_dir, budget, report_dir, endpoint)
    unknown_rules = sorted(set(tolerate) - {r.id for r in CATALOGUE})
    if unknown_rules:
        raise OneLineError(f"--tolerate: no such rule {', '.join(unknown_rules)} (see `sqs-conformance rules`)")
    options = _options(endpoint, several="the witnesses are shared out between them")
    if witnesses_only and not witnesses:
        raise OneLineError("--witnesses-only and --no-witnesses leave nothing to run")
    default_jobs = 8 if is_real_clock(target_spec, options) else 1  # waits that are slept overlap across jobs
    if witnesses:  # on a moved emulator clock they take servers of their own, started while the first is probed
        options = dataclasses.replace(options, moved_spares=runner.MOVED_CLOCK_SERVERS - 1)
    targets, _ = _opened_for_run(target_spec, profile, options, out_dir, report_dir, jobs or default_jobs)
    target_spec = _as_given(target_spec, options)  # what `confirm` and `cleanup` are told to take
    target = targets[0]
    budget = runner.search_budget(target.clock.kind, budget)
    searching = f", searching for {budget:.0f} s" if budget and not witnesses_only else ""
    # The report's Spark starts beside the run, not after it; not beside a run on a real or moved clock, whose
    # target's timing another busy process on the machine could disturb.
    early = _early_report(out_dir, report_dir) if report_dir is not None and target.clock.kind == "virtual" else None
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("starting")

        def on_case(shared) -> None:
            progress.update(task, description=f"{target.name} {profile}: {shared.cases} cases, {shared.steps} steps, "
                                              f"{len(shared.tolerated)} diverging rules{searching}")

        try:
            how = runner.RunOptions(examples=examples, seed=seed, out_dir=out_dir, steps_per_case=steps,
                                    database_dir=Path(".sqs-conformance") / "examples", shrink=not no_shrink,
                                    tolerate=frozenset(tolerate), shrink_seconds=shrink_seconds,
                                    witnesses=witnesses, search=not witnesses_only, budget=budget)
            result = runner.run(targets, profile, how, on_progress=on_case)
        except KeyboardInterrupt as stop:
            progress.stop()
            _stopped(stop, targets, early, out_dir, target_spec)
        except BaseException as error:
            if early is not None:
                early.stop()  # no report will take the session
            close_all(targets)
            if isinstance(error, (TargetError, WitnessError)):
                raise OneLineError(str(error)) from None
            raise
    close_all(targets)
    findings = report.write_findings(result, out_dir)
    _print_result(result, report)
    billed, cost = target.requests_billed(), target.cost_estimate(PROFILES[profile].fifo)
    if billed is not None and cost is not None:  # a service that bills by the request
        console.print(f"{billed:,} requests sent; at public SQS pricing about ${cost:.4f}")
    if report_dir is not None:
        _report([str(out_dir)], report_dir, None, early=early)
    accepted = {path: _accepted(result, path, option) for path, option in (
        (write_baseline, "--write-baseline"), (baseline_file if known is None else None, "--baseline"))
        if path is not None}  # --write-baseline's file, and --baseline's where a first run writes it
    _where_to_look(result, out_dir, findings, report_dir, target_spec, profile)
    for path, written in accepted.items():
        console.print(f"baseline: {path} now knows {written}; commit it: later runs with --baseline {path} fail "
                      f"only on a divergence not in it")
    if known is not None and baseline_file is not None:
        sys.exit(_against_baseline(result, known, baseline_file))  # a baseline that was there gates the run
    if accepted:
        sys.exit(1 if result.errors else 0)
    sys.exit(0 if result.conforms else 1)


def _as_given(target_spec: str, options: EndpointOptions) -> str:
    """The target as the user gave it, with the options that name it (an endpoint's URL, its offset file, a region),
    for the commands a run's last lines suggest; never a credential."""
    import shlex

    named = [("--endpoint-url", options.endpoint_url), ("--faketime-file", options.faketime_file),
             ("--region", options.region), ("--aws-profile", options.aws_profile)]
    return shlex.join([target_spec, *(word for option, value in named if value is not None
                                      for word in (option, str(value)))])


def _opened_for_run(target_spec: str, profile: str, options: EndpointOptions, out_dir: Path,
                    report_dir: str | None, jobs: int = 1) -> tuple[list, list[Path]]:
    """A run's targets, and the folders it made for --out; refused in one line, before the run and leaving no folder
    behind, where --out cannot be written, the report could not be built or the target does not speak the
    profile."""
    made = _writable(out_dir, "--out")
    try:
        if report_dir is not None:
            _can_report()  # before the run, not after it
        targets = _open_targets(target_spec, profile, options, jobs)
    except BaseException:
        remove_if_empty(made)
        raise
    if profile not in targets[0].profiles:
        _refused(targets, made, f"target {targets[0].name} cannot be checked against profile {profile} "
                                f"(it speaks {', '.join(sorted(targets[0].profiles))})")
    return targets, made


def _refused(targets: list, made: list[Path], message: str) -> NoReturn:
    """A run refused once its targets are open: they are closed, the folders made for it removed."""
    close_all(targets)
    remove_if_empty(made)
    raise OneLineError(message)


def _run_clients(target_spec: str, profile: str, clients: int, interleaving: str, seed: int | None, out_dir: Path,
                 budget: float | None, report_dir: str | None, endpoint: dict) -> NoReturn:
    """`run --clients N`: concurrent cases on one queue (conformance/concurrent/)."""
    from click.core import ParameterSource

    from sqs_conformance.conformance.concurrent.command import default_cases, print_result, run_clients
    from sqs_conformance.conformance.concurrent.run import ConcurrentOptions

    context = click.get_current_context()
    given = _options(endpoint)
    targets, made = _opened_for_run(target_spec, profile, given, out_dir, report_dir)
    target_spec = _as_given(target_spec, given)  # what `confirm` and `cleanup` are told to take
    target = targets[0]
    if interleaving == "drawn" and target.clock.kind != "virtual":
        _refused(targets, made, "--interleaving drawn needs a virtual clock (a real one's requests race as they "
                                "will): use threads")
    explicit = context.get_parameter_source("examples") is not ParameterSource.DEFAULT
    cases = context.params["examples"] if explicit else default_cases(target.clock.kind)
    options = ConcurrentOptions(clients=clients, cases=cases, seed=seed, mode=interleaving, budget=budget or None)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("starting")

        def on_case(result) -> None:
            progress.update(task, description=f"{target.name} {profile}, {clients} clients: {result.cases} of "
                                              f"{cases} cases, {result.operations} operations, "
                                              f"{len(result.findings)} diverging rules")

        try:
            result = run_clients(target, profile, options, out_dir, on_case)
        except KeyboardInterrupt as stop:
            progress.stop()
            _stopped(stop, targets, None, out_dir, target_spec)
        except TargetError as error:
            close_all(targets)
            raise OneLineError(str(error)) from None
        except BaseException:
            close_all(targets)
            raise
    close_all(targets)
    print_result(result, console, out_dir, target_spec)
    if report_dir is not None:
        _report([str(out_dir)], report_dir, None)
    sys.exit(0 if result.conforms else 1)


def _accepted(result, path: Path, option: str) -> str:
    """The run's divergences added to the baseline at `path` (made if missing); what it now knows, in words."""
    from sqs_conformance.conformance import baseline

    found = baseline.from_result(result)
    try:
        earlier = baseline.Baseline.load(path) if path.exists() else None
    except baseline.BaselineError as error:
        raise OneLineError(f"{option} {error}") from None
    if earlier is not None and earlier.profile != result.profile:
        raise OneLineError(f"{option} {path} is for {earlier.profile}, this run checks {result.profile}")
    merged = found if earlier is None else earlier.merged_with(found)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(merged.to_json() + "\n")
    except OSError as error:
        raise OneLineError(f"{option} {path}: cannot write there ({error.strerror})") from None
    shapes = sum(len(entries) for entries in merged.known.values())
    return f"{len(merged.known)} diverging rule(s) in {shapes} shape(s)"


def _stopped(stop: KeyboardInterrupt, targets: list, early, out_dir: Path, target_spec: str) -> NoReturn:
    """Ctrl-C or SIGTERM: the run's threads are left to stop at their next step, the queues it created deleted
    within a bounded wait, the findings so far written; then one line, exit 130."""
    from sqs_conformance.adapters import interrupt
    from sqs_conformance.conformance import report
    from sqs_conformance.conformance.concurrent.command import ClientsInterrupted
    from sqs_conformance.conformance.runner import CLEANUP_SECONDS, RunInterrupted
    from sqs_conformance.conformance.threads import within

    interrupt.request()
    deleted = within(CLEANUP_SECONDS, lambda: close_all(targets), "cleanup")
    if early is not None:
        within(CLEANUP_SECONDS, early.stop, "report-session")
    done = ""
    if isinstance(stop, (RunInterrupted, ClientsInterrupted)):
        findings, found = (report.write_findings(stop.result, out_dir), len(stop.result.findings)) \
            if isinstance(stop, RunInterrupted) else (stop.folder, stop.found)
        done = f"; {found} divergence(s) so far in {findings}" if findings is not None else "; no divergence so far"
    queues = ("the queues it created were deleted" if deleted else
              f"some queues it created may be left: sqs-conformance cleanup --target {target_spec} --delete")
    errors.print(f"sqs-conformance: interrupted ({queues}; the trace so far is kept in {out_dir / 'trace.jsonl'}"
                 f"{done})", markup=False)
    sys.exit(130)


def _against_baseline(result, known, path: Path) -> int:
    """The verdict against the known divergences, last: exit 1 only on a new one (or a run that failed)."""
    from sqs_conformance.conformance.baseline import compare

    comparison = compare(known, result)
    if comparison.known:
        console.print(f"known divergences (in {path}): {', '.join(comparison.known)}")
    if comparison.fixed:
        console.print(f"[green]no longer diverging (remove them from {path}):[/green] {', '.join(comparison.fixed)}")
    if comparison.unchecked:
        console.print(f"[yellow]known but not decided by this run:[/yellow] {', '.join(comparison.unchecked)}")
    if result.errors:
        console.print(f"[red]the run had errors: {'; '.join(result.errors)}[/red]")
        return 1
    for rule_id, seen in comparison.new_shapes.items():  # texts of the model's patterns: no rich markup in them
        console.print(f"{rule_id} diverged in a shape not in {path}: {seen['operation']}: expected "
                      f"{seen['expected']}; observed {seen['observed']}", style="red", markup=False)
    if not comparison.passes:
        new = comparison.new + [f"{rule_id} (a new shape)" for rule_id in comparison.new_shapes]
        console.print(f"new divergences, not in {path}: {', '.join(new)}", style="red", markup=False)
        return 1
    console.print(f"[green]no divergence beyond the {len(comparison.known)} known in {path}[/green]")
    return 0


def _where_to_look(result, out_dir: Path, findings: Path | None, report_dir: str | None, target_spec: str,
                   profile: str) -> None:
    """The run's last lines: where to look first, then the verdict."""
    console.print(f"trace: {out_dir / 'trace.jsonl'}")
    if report_dir is not None:
        console.print(f"report: {Path(report_dir) / 'report.html'}")
    if findings is not None:
        first = sorted(result.findings)[0]
        console.print(f"minimal cases: {findings}/ (RULE.txt to read, RULE.py to reproduce with boto3)")
        console.print(f"re-run one: sqs-conformance confirm --target {target_spec} {findings / (first + '.json')}",
                      soft_wrap=True)  # a command to copy: never cut in two
    console.print(f"[green]{result.target} conforms to {profile}[/green]" if result.conforms else
                  f"[red]{result.target} diverges from {profile} on {len(result.findings)} rule(s)[/red]")


def _writable(folder: Path, option: str) -> list[Path]:
    """A folder the command can write into (made if missing), or a one-line error before anything runs. Returns
    the folders it made, innermost first."""
    try:
        return writable(folder, option)
    except NotWritable as error:
        raise OneLineError(str(error)) from None


def _early_report(out_dir: Path, report_dir: str):
    """The report's session, starting now (reports/early.py)."""
    from sqs_conformance.reports.early import EarlySession

    return EarlySession.start([str(out_dir)], report_dir)


def _can_report() -> None:
    """The report needs PySpark and a Java it can start: say so before a run whose report would fail after it."""
    try:
        from sqs_conformance.reports.spark import ReportError, java_version
    except ImportError as error:
        raise OneLineError(f"the reports need PySpark ({error}); pip install -e . installs it") from None
    try:
        java_version()
    except ReportError as error:
        raise OneLineError(str(error)) from None


def _print_result(result, report) -> None:
    table = Table(title=f"{result.target} ({result.target_version}) against {result.profile}: "
                        f"{result.cases} cases, {result.steps} steps, {result.rounds} rounds")
    table.add_column("rule", no_wrap=True, min_width=max(len(r.id) for r in rules_for(result.profile)))
    for column in ("exercised", "decisive", "conforming", "diverging", "counted redeliveries"):
        table.add_column(column, justify="right")
    table.add_column("verdict")
    shown = {"diverges": "[red]DIVERGES[/red]", "not exercised": "[yellow]not exercised[/yellow]",
             "undecided": "[yellow]never decisive[/yellow]", "conforms": "[green]conforms[/green]"}
    for r in rules_for(result.profile):
        t = result.tallies.rules.get(r.id)
        table.add_row(r.id, *(str(getattr(t, k, 0)) for k in ("exercised", "decisive", "conforming", "diverging",
                                                                "notes")), shown[result.verdict(r.id)])
    console.print(table)
    for finding in result.findings.values():
        console.rule(f"[red]{finding.rule}[/red]")
        console.print(report.describe_finding(finding), markup=False)
    for message in result.errors:
        console.print(f"[red]error:[/red] {message}")
    missing = result.gaps()
    if missing:
        console.print(f"[yellow]rules never exercised decisively (no verdict):[/yellow] {', '.join(missing)}")
    for line in result.spent.lines(result.rounds):
        console.print(line, markup=False)


@main.command()
@click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(traces: tuple[Path, ...]) -> None:
    """Re-check stored TRACES against the current model; exit 1 on any divergence."""
    from sqs_conformance.conformance.check import check_traces
    from sqs_conformance.conformance.trace import TraceError

    for path in traces:
        if not path.is_file():
            raise OneLineError(f"no trace file at {path}")
    try:
        cases = check_traces(traces)
    except (TraceError, ValueError) as error:
        raise OneLineError(str(error)) from None
    if not any(c.steps for c in cases):
        raise OneLineError(f"no steps in {', '.join(map(str, traces))}: nothing was checked")
    diverging = [c for c in cases if c.divergences]
    for case in diverging:
        for step, d in case.divergences:
            console.print(f"{case.path} run {case.run_id} case {case.case} step {step}: {d.rule}: "
                          f"expected {d.expected}; observed {d.observed}", markup=False)
    steps = sum(c.steps for c in cases)
    console.print(f"{len(cases)} cases, {steps} steps re-checked: "
                  + (f"{len(diverging)} cases diverge" if diverging else "no divergence"))
    sys.exit(1 if diverging else 0)


@main.command()
@click.option("--target", "target_spec", required=True, help=TARGET_HELP)
@click.option("--max-waiting", type=click.FloatRange(0, None), default=120.0, show_default=True,
              help="on a real clock, replay only cases that wait at most this many seconds in all")
@endpoint_options
@click.argument("cases", nargs=-1, required=True, type=click.Path(path_type=Path))
def confirm(target_spec: str, max_waiting: float, cases: tuple[Path, ...], **endpoint) -> None:
    """Replay minimal CASES (findings/RUN/RULE.json files, or their directories; a concurrent finding's
    history.jsonl) against TARGET; exit 1 if any reproduces there."""
    from sqs_conformance.conformance.cases import CaseError, FoundCase
    from sqs_conformance.conformance.confirm import case_files, confirm as replay

    histories = [path for path in cases if path.name.endswith(".jsonl")]
    if histories:
        _confirm_histories(target_spec, histories, endpoint)
    try:
        loaded = [FoundCase.load(path) for path in case_files(list(cases))]
    except CaseError as error:
        raise OneLineError(str(error)) from None
    (target,) = _open_targets(target_spec, loaded[0].profile, _options(endpoint))
    table = Table(title=f"minimal cases replayed on {target.name} ({target.version()})")
    for column in ("rule", "profile", "found on", "steps", "reproduces", "detail"):
        table.add_column(column)
    reproduced = 0
    try:
        for case in loaded:
            outcome = replay(target, case, max_waiting)
            reproduced += outcome.reproduced is True
            mark = {True: "[red]yes[/red]", False: "[green]no[/green]", None: "[yellow]no verdict[/yellow]"}
            table.add_row(case.rule, case.profile, case.found_on, str(len(case.steps)), mark[outcome.reproduced],
                          outcome.detail)
    except TargetError as error:
        raise OneLineError(str(error)) from None
    finally:
        target.close()
    console.print(table)
    sys.exit(1 if reproduced else 0)


def _confirm_histories(target_spec: str, paths: list[Path], endpoint: dict) -> NoReturn:
    """`confirm` of concurrent findings: each history.jsonl replayed with its clients as threads
    (conformance/concurrent/replay.py), up to REPLAY_TRIES times, for the rule its finding.json names."""
    from sqs_conformance.conformance.concurrent.replay import REPRODUCED, confirm as replay_history, load
    from sqs_conformance.conformance.trace import TraceError

    table = Table(title="concurrent findings replayed")
    for column in ("rule", "history", "reproduces"):
        table.add_column(column)
    reproduced = 0
    for path in paths:
        try:
            history = load(path)
            rule_id = json.loads(path.with_name("finding.json").read_text())["rule"]
        except (OSError, ValueError, KeyError, TraceError) as error:
            raise OneLineError(f"{path}: not a concurrent finding's history.jsonl beside its finding.json "
                               f"({error})") from None
        (target,) = _open_targets(target_spec, history.profile, _options(dict(endpoint)))
        try:
            outcome = replay_history(history, rule_id, target, REPLAY_TRIES, say=lambda _: None)
        except TargetError as error:
            raise OneLineError(str(error)) from None
        finally:
            target.close()
        reproduced += outcome == REPRODUCED
        table.add_row(rule_id, str(path), {1: "[red]yes[/red]", 0: "[green]no[/green]"}.get(
            outcome, "[yellow]cannot tell[/yellow]"))
    console.print(table)
    sys.exit(1 if reproduced else 0)


@main.command()
@click.option("--target", "target_spec", type=click.Choice(["endpoint", "aws"]), required=True)
@click.option("--older-than", type=click.FloatRange(0, None), default=3600.0, show_default=True,
              help="only queues created at least this many seconds ago")
@click.option("--delete", is_flag=True, help="delete them (without it, only list: a dry run)")
@endpoint_options
def cleanup(target_spec: str, older_than: float, delete: bool, **endpoint) -> None:
    """List (or --delete) queues earlier runs left behind: the suite's name prefix and run tag, both."""
    import botocore.exceptions

    from sqs_conformance.adapters.base import redact
    from sqs_conformance.adapters.endpoint import leftovers
    from sqs_conformance.adapters.servers import offset_in

    options = _options(endpoint)
    if options.faketime_file is not None and target_spec == "aws":
        raise OneLineError(AWS_NOT_MOVED)
    try:  # a server on a moved clock: the queues' ages are counted on it, and its clock is left where it is
        ahead = offset_in(options.faketime_file) if options.faketime_file is not None else 0.0
    except TargetError as error:
        raise OneLineError(str(error)) from None
    (target,) = _open_targets(target_spec, "sqs-standard", dataclasses.replace(options, faketime_file=None))
    target.clock.epoch_zero += ahead
    try:
        found = leftovers(target, older_than)
        for url, name, age in found:
            if delete:
                target.client.delete_queue(QueueUrl=url)
            console.print(f"{'deleted' if delete else 'would delete'} {name} (created {age / 3600:.1f} h ago)",
                          markup=False)
    except (TargetError, botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
        raise OneLineError(f"cleanup stopped: {redact(str(error))}") from None
    finally:
        target.close()
    console.print(f"{len(found)} leftover queue(s)" + ("" if delete or not found else "; --delete to delete them"))


@main.command("faketime-env")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def faketime_env(file: Path) -> None:
    """Print the environment to start your own SQS server with, so that `run --target endpoint --faketime-file
    FILE` can move its clock: libfaketime's thread-safe build found on this machine, reading FILE (made with the
    offset +0 if missing) on every call. One NAME=VALUE a line, e.g. `env $(sqs-conformance faketime-env FILE)
    python3 -m moto.server -H 127.0.0.1 -p 5000`."""
    from sqs_conformance.adapters.servers import FakeTime

    if any(c.isspace() for c in str(file.resolve())):
        raise OneLineError(f"{file}: a path without spaces, please (the lines are read as NAME=VALUE words)")
    try:
        faketime = FakeTime.given(file.resolve())
    except TargetError as error:
        raise OneLineError(str(error)) from None
    for name, value in faketime.env.items():
        click.echo(f"{name}={value}")


@main.command()
@click.option("--profile", "profiles", multiple=True, required=True, type=click.Choice(sorted(PROFILES)),
              help="give it twice: the two profiles to compare")
@click.option("--examples", type=click.IntRange(1, 100_000), default=30, show_default=True,
              help="generated cases per round, in each direction")
@click.option("--seed", type=click.IntRange(0, 2**63), default=None)
def diff(profiles: tuple[str, ...], examples: int, seed: int | None) -> None:
    """The shortest sequences on which two profiles' permitted outcomes disagree, one per differing rule."""
    from sqs_conformance.conformance import report
    from sqs_conformance.conformance.diff import differences

    if len(profiles) != 2 or profiles[0] == profiles[1]:
        raise OneLineError("diff compares two different profiles: --profile A --profile B")
    found = differences(*profiles, examples=examples, seed=seed)
    table = Table(title=f"{profiles[0]} against {profiles[1]}: {len(found)} differing rule(s)")
    for column in ("rule", "answer of", "not permitted by", "steps", "answer", "permitted"):
        table.add_column(column, justify="right" if column == "steps" else "left")
    for d in found:
        table.add_row(d.finding.rule, d.behaves, d.judged_by, str(len(d.finding.steps)),
                      str(d.finding.divergence.observed), str(d.finding.divergence.expected))
    console.print(table)
    for d in found:
        console.rule(f"{d.finding.rule}: what {d.behaves} does and {d.judged_by} does not permit")
        console.print(report.timeline(d.finding), markup=False)


@main.command()
@click.option("--emulator", "emulators", multiple=True, metavar="NAME",
              help=f"only this emulator (repeatable) [default: all of {', '.join(EMULATORS)}]")
@click.option("--profile", "profiles", multiple=True, type=click.Choice(["sqs-standard", "sqs-fifo"]),
              help="only this profile (repeatable) [default: both]")
@click.option("--examples", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="generated cases per round")
@click.option("--steps", type=click.IntRange(1, 1000), default=40, show_default=True,
              help="operations per case at most")
@click.option("--seed", type=click.IntRange(0, 2**63), default=None)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs/matrix"),
              show_default=True, help="traces, minimal cases and matrix.json")
@click.option("--page", type=click.Path(dir_okay=False, path_type=Path), default=Path("docs/emulators.md"),
              show_default=True, help="the page written, whole, after every emulator and profile: dated, with the "
                                      "command, the emulators' versions and the machine")
@click.option("--no-page", is_flag=True, help="write no page (matrix.json and the tables printed only)")
@click.option("--merge", "merged", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              metavar="MATRIX.json", help="write the matrix from these earlier results, checking nothing but what "
                                          "--clients asks (repeatable; a later file's cell of an emulator and "
                                          "profile replaces an earlier one's)")
@click.option("--real-clock", is_flag=True, help="never move an emulator in time: check each on a real clock")
@click.option("--witnesses-only", is_flag=True, help="as `run --witnesses-only`: no search after the witnesses")
@click.option("--budget", type=click.FloatRange(0, 7 * 86400), default=None, metavar="SECONDS",
              help="as `run --budget`, per emulator and profile [default: run's, 180 on a real or moved clock]")
@click.option("--clients", type=click.IntRange(0, 8), default=0, metavar="N",
              help="also check each emulator with N consumers on one queue (`run --clients N`, real clock); with "
                   "--merge, add those checks to an earlier matrix's cells")
@click.option("--client-cases", type=click.IntRange(1, 1000), default=3, show_default=True,
              help="cases of each --clients check (a real clock's case takes about 15 s)")
def matrix(emulators: tuple[str, ...], profiles: tuple[str, ...], examples: int, steps: int, seed: int | None,
           out_dir: Path, page: Path, no_page: bool, merged: tuple[Path, ...], real_clock: bool,
           witnesses_only: bool, budget: float | None, clients: int, client_cases: int) -> None:
    """Install, start on 127.0.0.1, check and stop each SQS emulator; write the rule × emulator matrix."""
    import datetime
    import shlex

    from sqs_conformance.conformance import matrix as emulator_matrix

    try:
        names = emulator_matrix.known(emulators)
        cells = emulator_matrix.load(list(merged))
    except TargetError as error:
        raise OneLineError(str(error)) from None
    command = shlex.join(["sqs-conformance", "matrix", *sys.argv[2:]])

    def publish() -> str:
        text = emulator_matrix.page(cells, command, datetime.datetime.now(datetime.UTC))
        if not no_page:
            try:
                emulator_matrix.write_page(page, text)
            except OSError as error:
                raise OneLineError(f"cannot write the page {page}: {error.strerror or error}") from None
        return text

    if not no_page and not merged:
        try:  # refused now, not after an hour of checking
            page.parent.mkdir(parents=True, exist_ok=True)
            if not os.access(page.parent, os.W_OK):
                raise PermissionError(13, "Permission denied")
        except OSError as error:
            raise OneLineError(f"cannot write the page {page}: {error.strerror or error}") from None

    def with_clients(cell) -> None:
        if clients < 2 or cell.error:
            return
        console.print(f"{cell.emulator} against {cell.profile} with {clients} clients …")
        emulator_matrix.check_clients(cell, clients, cases=client_cases, seed=seed, out_dir=out_dir,
                                      say=lambda message: console.print(f"  {message}"))
        cell.concurrent_command = command
        console.print(f"  {cell.concurrent_error}" if cell.concurrent_error else
                      f"  {cell.concurrent_cases} cases, {cell.concurrent_operations} operations, "
                      f"{cell.concurrent_seconds:.0f} s: "
                      f"{sum(v == 'diverges' for v in cell.concurrent.values())} diverging rules")

    def keep() -> None:  # after every cell, so that an interrupted matrix keeps what it has
        emulator_matrix.save(cells, out_dir / "matrix.json")
        publish()

    for cell in cells if merged and clients > 1 else []:  # an earlier matrix, given the clients' checks
        if cell.emulator in names and (not profiles or cell.profile in profiles):
            with_clients(cell)
            keep()
    for name in [] if merged else names:
        for profile in profiles or ("sqs-standard", "sqs-fifo"):
            console.print(f"{name} against {profile} …")
            cell = emulator_matrix.check(name, profile, examples=examples, steps=steps, seed=seed,
                                         out_dir=out_dir, real_clock=real_clock, search=not witnesses_only,
                                         budget=budget, say=lambda message: console.print(f"  {message}"))
            cell.command = command
            cells.append(cell)
            console.print(f"  {cell.error}" if cell.error else
                          f"  {cell.clock} clock, {cell.cases} cases, {cell.seconds:.0f} s: "
                          f"{sum(v == 'diverges' for v in cell.verdicts.values())} diverging rules")
            with_clients(cell)
            keep()
    console.print(publish(), markup=False)
    sys.exit(1 if any(c.error for c in cells) else 0)


@main.command()
@click.argument("traces", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, metavar="DIR",
              help="where the tables (Parquet), report.html and junit.xml go; kept and updated by later runs")
@click.option("--master", default=None, metavar="URL",
              help="a Spark master: local[N] on this machine, or a cluster (spark://…, yarn, k8s://…) "
                   "[default: local[*] on 127.0.0.1]")
@click.option("--jvm-archive", "archive_dir", default=None, metavar="DIR",
              help="keep a class archive of the driver JVM here: built once (about 30 s, 200 MB), later reports "
                   "start faster with it")
def report(traces: tuple[str, ...], out_dir: str, master: str | None, archive_dir: str | None) -> None:
    """Build the conformance report from TRACES (files, directories, globs; any Hadoop path such as s3a://…)."""
    _report(list(traces), out_dir, master, Path(archive_dir) if archive_dir else None)


def _report(traces: list[str], out_dir: str, master: str | None, archive_dir: Path | None = None,
            early=None) -> None:
    """The report of `traces` into `out_dir` (reports/job.py `build_report`), in the session `early` started
    (reports/early.py) if given; its refusals as one line."""
    try:
        from sqs_conformance.reports.job import build_report
        from sqs_conformance.reports.spark import ReportError
    except ImportError as error:
        raise OneLineError(f"the reports need PySpark ({error}); pip install -e . installs it") from None
    try:
        summary = build_report(traces, out_dir, master=master, archive_dir=archive_dir, early=early,
                               say=lambda line: console.print(line, markup=False, soft_wrap=True))
    except ReportError as error:
        raise OneLineError(str(error)) from None
    for line in summary.said():
        console.print(line, markup=False, soft_wrap=True)


@main.command()
@click.option("--profile", "profiles", multiple=True, type=click.Choice(sorted(PROFILES)),
              help="[default: every profile] (repeatable)")
@click.option("--pace", "paces", multiple=True, type=click.Choice(["virtual", "shifted", "real"]),
              help="the clock the witnesses are for [default: all three] (repeatable)")
@click.option("--seed", type=click.IntRange(1, 2**63), default=1, show_default=True)
@click.option("--check", "check_only", is_flag=True, help="only check the stored witnesses against today's model")
@click.option("--update", is_flag=True,
              help="keep the stored witnesses that still reach their aims; search only for what they leave")
def witnesses(profiles: tuple[str, ...], paces: tuple[str, ...], seed: int, check_only: bool, update: bool) -> None:
    """Search each rule's witness (the shortest case that exercises it) on the model, and store them with the
    suite; run it again after a change of the model or the machine. Exit 1 if --check finds one stale."""
    from sqs_conformance.conformance import witnesses as found

    pairs = [(p, k) for p, k in found.profiles_and_paces()
             if (not profiles or p in profiles) and (not paces or k in paces)]
    stale = 0
    for profile, pace in pairs:
        if check_only:
            try:
                problems = found.stale(found.load(profile, pace))
            except found.WitnessError as error:
                raise OneLineError(str(error)) from None
            stale += len(problems)
            for problem in problems:
                console.print(f"[red]{profile} ({pace} clock)[/red] {problem}", markup=True)
            continue

        def shown(aim, witness, profile: str = profile, pace: str = pace) -> None:
            console.print(f"{profile} ({pace} clock) {aim}: {len(witness.steps)} steps, {witness.waiting:g} s waiting",
                          markup=False)

        try:
            kept = found.load(profile, pace) if update else None
        except found.WitnessError as error:
            raise OneLineError(str(error)) from None
        catalogue = found.search_catalogue(profile, pace, seed=seed, on_aim=shown, kept=kept)
        console.print(f"wrote {found.save(catalogue)}: {len(catalogue.witnesses)} witnesses"
                      + (f"; no witness for {', '.join(catalogue.missing)}" if catalogue.missing else ""))
    if check_only:
        verdict = f"[red]{stale} stale[/red]" if stale else "all hold"
        console.print(f"{len(pairs)} witness file(s) checked: {verdict}")
    sys.exit(1 if stale else 0)


@main.command()
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default=None, help="only this profile's rules")
def rules(profile: str | None) -> None:
    """Print the rule catalogue."""
    for r in CATALOGUE if profile is None else rules_for(profile):
        click.echo(f"{r.id}  [{', '.join(sorted(r.profiles))}]{'  (hedged)' if r.certainty.value == 'hedged' else ''}")
        click.echo(f"    {r.statement}")
        click.echo(f"    source: {r.source}\n")


def entry() -> None:
    """The console script: click's usage errors become one line on stderr, exit 2. Ctrl-C and SIGTERM stop a run
    (every thread at its next step, adapters/interrupt.py), so that the queues it created are deleted either way;
    a second one exits at once."""
    import signal

    from sqs_conformance.adapters import interrupt
    from sqs_conformance.conformance.concurrent.forked import WorkerLost

    def on_signal(*_) -> None:
        if interrupt.requested():
            os.write(2, b"sqs-conformance: stopped at once (a second interrupt); queues it created may be left: "
                        b"sqs-conformance cleanup finds them\n")
            os._exit(130)
        interrupt.request()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        main.main(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        errors.print("sqs-conformance: interrupted (the queues it created were deleted; the trace so far is kept)")
        _exit_at_once(130)
    except SystemExit as exit_:
        if interrupt.requested():  # a stopped run, which said what it kept (`_stopped`)
            _exit_at_once(exit_.code if isinstance(exit_.code, int) else 130)
        raise
    except click.UsageError as error:
        errors.print(f"sqs-conformance: error: {error.format_message()}", markup=False)
        sys.exit(2)
    except click.ClickException as error:
        error.show()
        sys.exit(2)
    except WorkerLost as error:  # a checking process killed under it (out of memory?) or failed
        errors.print(f"sqs-conformance: error: {error}", markup=False)
        sys.exit(1)


def _exit_at_once(code: int) -> NoReturn:
    """Exit a stopped command without tearing its heap down object by object (4 s after a check of a million
    operations): every file it wrote was closed on the way out, each in its own `finally`, and the servers it
    started stopped; only the console's streams are left to flush."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
