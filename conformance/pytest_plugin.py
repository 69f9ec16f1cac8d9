"""pytest plugin: `pytest --sqs-target=TARGET` adds one test per profile, each a whole conformance run.

It is meant for another project's test suite, beside its own tests: `--sqs-target=python:mypackage.queue:MyQueue`
checks the team's in-house queue on every `pytest` run. Each test has the marker `sqs_conformance` (`-m
sqs_conformance` runs only them, `-m "not sqs_conformance"` leaves them out), runs as `sqs-conformance run` does
with the same defaults (witnesses, then the search for its default budget), writes the trace, the summary and each
divergence's minimal case (RULE.txt, RULE.py, RULE.json) under `--sqs-out`, and fails with every diverging rule
and where its case is. `--junitxml` reports one test case per profile. Under pytest-xdist each test runs in one
worker. A profile the target does not speak (an in-house queue without FIFO) is skipped, with the reason.
`--sqs-clients N` adds one test per profile with N consumers on one queue (`run --clients N`), failing with each
finding's per-client timeline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sqs_conformance.conformance.defaults import DEFAULT_EXAMPLES, DEFAULT_STEPS

MARKER = "sqs_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sqs-conformance")
    group.addoption("--sqs-target", default=None,
                    help="run the conformance suite against this target (model, moto, python:MODULE:CLASS, ...)")
    group.addoption("--sqs-profile", action="append", default=None,
                    help="profile(s) to check (default: the ones the target speaks among sqs-standard, sqs-fifo)")
    group.addoption("--sqs-examples", type=int, default=DEFAULT_EXAMPLES, help="generated cases per round")
    group.addoption("--sqs-steps", type=int, default=DEFAULT_STEPS, help="operations per case at most")
    group.addoption("--sqs-budget", type=float, default=None,
                    help="seconds of search, as `run --budget` [default: run's, 40 on a virtual clock]")
    group.addoption("--sqs-witnesses-only", action="store_true", help="as `run --witnesses-only`")
    group.addoption("--sqs-seed", type=int, default=None, help="seed for a reproducible run")
    group.addoption("--sqs-out", default="runs", help="where traces and minimal cases go")
    group.addoption("--sqs-clients", type=int, default=1,
                    help="also one test per profile with this many consumers on one queue (2..8), as "
                         "`run --clients N`")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a whole sqs-conformance run against --sqs-target")


class ConformanceFailure(Exception):
    pass


class ConformanceItem(pytest.Item):
    def __init__(self, *, target_spec: str, profile: str, clients: int = 1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.target_spec = target_spec
        self.profile = profile
        self.clients = clients
        self.add_marker(MARKER)

    def runtest(self) -> None:
        from sqs_conformance.adapters.base import ProfileNotSpoken, TargetError
        from sqs_conformance.adapters.registry import make_target

        options = self.config.option
        suffix = f"-{self.clients}-clients" if self.clients > 1 else ""
        out = Path(options.sqs_out) / f"{self.target_spec.replace(':', '-')}-{self.profile}{suffix}"
        try:
            target = make_target(self.target_spec, self.profile)
        except ProfileNotSpoken as error:
            pytest.skip(str(error))
        except TargetError as error:
            raise ConformanceFailure(f"sqs-conformance: {error}") from None
        if self.profile not in target.profiles:
            target.close()
            pytest.skip(f"{target.name} speaks {', '.join(sorted(target.profiles))}, not {self.profile}")
        if self.clients > 1:
            self._concurrent(target, out)
        else:
            self._single(target, out)

    def _concurrent(self, target, out: Path) -> None:
        from sqs_conformance.adapters.base import TargetError
        from sqs_conformance.conformance.concurrent.command import default_cases, run_clients
        from sqs_conformance.conformance.concurrent.finding import timeline
        from sqs_conformance.conformance.concurrent.run import ConcurrentOptions

        options = self.config.option
        how = ConcurrentOptions(clients=self.clients, cases=default_cases(target.clock.kind), seed=options.sqs_seed,
                                budget=options.sqs_budget or None)  # 0: no limit, as run's
        try:
            result = run_clients(target, self.profile, how, out)
        except TargetError as error:
            raise ConformanceFailure(f"sqs-conformance: {error}") from None
        finally:
            target.close()
        if result.findings:
            raise ConformanceFailure("\n\n".join(timeline(f) for f in result.findings.values())
                                     + f"\n\nfindings: {out / 'concurrent'}/ (TIMELINE.txt, history.jsonl, RULE.py)")

    def _single(self, target, out: Path) -> None:
        from sqs_conformance.conformance import report, runner

        options = self.config.option
        try:
            how = runner.RunOptions(examples=options.sqs_examples, seed=options.sqs_seed,
                                    steps_per_case=options.sqs_steps, out_dir=out,
                                    budget=runner.search_budget(target.clock.kind, options.sqs_budget),
                                    search=not options.sqs_witnesses_only)
            result = runner.run(target, self.profile, how)
        finally:
            target.close()
        findings = report.write_findings(result, out)
        problems = [report.describe_finding(f) for f in result.findings.values()] + result.errors
        if problems:
            where = f"\n\nminimal cases: {findings}/ (RULE.txt, RULE.py, RULE.json)" if findings else ""
            raise ConformanceFailure("\n\n".join(problems) + where)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return "sqs-conformance", None, f"sqs-conformance {self.target_spec} {self.profile}"


@pytest.hookimpl(tryfirst=True)  # before pytest's own `-m` and `-k` selection, so that they apply to these too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    spec = config.getoption("sqs_target")
    if not spec:
        return
    profiles = config.getoption("sqs_profile") or ["sqs-standard", "sqs-fifo"]
    # Ids as a test file's: `sqs-conformance::TARGET::PROFILE` (JUnit: class `sqs-conformance.TARGET`, name PROFILE)
    added: list[pytest.Item | pytest.Collector] = [
        ConformanceItem.from_parent(session, name=profile, nodeid=f"sqs-conformance::{spec}::{profile}",
                                    target_spec=spec, profile=profile) for profile in profiles]
    clients = config.getoption("sqs_clients")
    if clients > 1:  # and each profile with many consumers on one queue: `PROFILE-N-clients`
        added += [ConformanceItem.from_parent(session, name=f"{profile}-{clients}-clients",
                                              nodeid=f"sqs-conformance::{spec}::{profile}-{clients}-clients",
                                              target_spec=spec, profile=profile, clients=clients)
                  for profile in profiles]
    items.extend(added)
    # Counted as collected, as a collector's items are (pytest's "collected N items")
    config.hook.pytest_collectreport(report=pytest.CollectReport("sqs-conformance", "passed", None, added))
