"""Known divergences: a baseline file checked in beside a CI job, so that the job fails on a new divergence but
not on the ones a team already knows its emulator has (as LocalStack's parity tests and s3-tests mark known
failures). Each known divergence keeps its minimal case, so that the file says what was known, not only which
rule.

    {"profile": "sqs-standard", "target": "moto 5.2.1",
     "known": {"VIS-RANGE": {"expected": "...", "observed": "...", "steps": [{"advance": 0.0, "operation": {...}}]}}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.cases import encode_steps
from model.profiles import PROFILES
from model.rules import RULES


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message names it."""


@dataclass
class Baseline:
    profile: str
    target: str
    known: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule id -> what was seen, with its case

    def to_json(self) -> str:
        return json.dumps({"profile": self.profile, "target": self.target,
                           "known": dict(sorted(self.known.items()))}, indent=1)

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            baseline = cls(data["profile"], data.get("target", "?"), dict(data["known"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise BaselineError(f"{path}: not a baseline file ({type(error).__name__}: {error})") from None
        if baseline.profile not in PROFILES:
            raise BaselineError(f"{path}: unknown profile {baseline.profile!r}")
        unknown = sorted(set(baseline.known) - set(RULES))
        if unknown:
            raise BaselineError(f"{path}: no such rule {', '.join(unknown)} (see `sqs-conformance rules`)")
        return baseline


def from_result(result) -> Baseline:
    """The run's divergences as a baseline: each with its minimal case."""
    return Baseline(result.profile, f"{result.target} {result.target_version}", {
        rule_id: {"expected": finding.divergence.expected, "observed": finding.divergence.observed,
                  "steps": encode_steps([(step.advanced, step.op) for step in finding.steps])}
        for rule_id, finding in result.findings.items()})


@dataclass
class Comparison:
    """A run against its baseline: what is new (fails the job), what was known, what no longer diverges."""

    new: list[str]
    known: list[str]
    fixed: list[str]  # known, and decided without a divergence this time
    unchecked: list[str]  # known, but this run never decided the rule: no word on it

    @property
    def passes(self) -> bool:
        return not self.new


def compare(baseline: Baseline, result) -> Comparison:
    found = set(result.findings)
    known = set(baseline.known)
    not_found = known - found
    return Comparison(
        new=sorted(found - known), known=sorted(found & known),
        fixed=sorted(r for r in not_found if result.verdict(r) == "conforms"),
        unchecked=sorted(r for r in not_found if result.verdict(r) != "conforms"))
