"""pytest plugin: `pytest --sqs-target=moto` runs the conformance machines as tests, one per profile.

Each test is a whole run (all rounds); it fails with every diverging rule and its minimal case. Under
pytest-xdist every worker collects the same tests, and each runs in its own process.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sqs-conformance")
    group.addoption("--sqs-target", default=None, help="run the conformance suite against this target (model, moto)")
    group.addoption("--sqs-profile", action="append", default=None,
                    help="profile(s) to check (default: the ones the target speaks among sqs-standard, sqs-fifo)")
    group.addoption("--sqs-examples", type=int, default=100, help="generated cases per round")
    group.addoption("--sqs-seed", type=int, default=None, help="seed for a reproducible run")
    group.addoption("--sqs-out", default="runs", help="where traces and minimal cases go")


class ConformanceFailure(Exception):
    pass


class ConformanceItem(pytest.Item):
    def __init__(self, *, target_spec: str, profile: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.target_spec = target_spec
        self.profile = profile

    def runtest(self) -> None:
        from adapters.registry import make_target
        from conformance import report, runner

        options = self.config.option
        target = make_target(self.target_spec, self.profile)
        try:
            result = runner.run(target, self.profile, examples=options.sqs_examples, seed=options.sqs_seed,
                                out_dir=Path(options.sqs_out) / f"{self.target_spec}-{self.profile}")
        finally:
            target.close()
        problems = [report.describe_finding(f) for f in result.findings.values()] + result.errors
        if problems:
            raise ConformanceFailure("\n\n".join(problems))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"sqs-conformance {self.target_spec} {self.profile}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    spec = config.getoption("sqs_target")
    if not spec:
        return
    profiles = config.getoption("sqs_profile") or ["sqs-standard", "sqs-fifo"]
    for profile in profiles:
        items.append(ConformanceItem.from_parent(session, name=f"sqs-conformance[{spec}-{profile}]",
                                                 target_spec=spec, profile=profile))
