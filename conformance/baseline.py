"""Known divergences: a baseline file checked in beside a CI job, so that the job fails on a new divergence but
not on the ones a team already knows its emulator has (as LocalStack's parity tests and s3-tests mark known
failures). A divergence is known by its rule and its shape: the operation that diverged, what the model
permitted there and what the target answered (its kind: an error's code, and whether its text was the one
permitted). A new shape of a known rule is a new divergence. Each shape keeps its minimal case, so that the file
says what was known, not only which rule.

    {"format": 2, "profile": "sqs-standard", "target": "moto 5.2.1",
     "known": {"VIS-RANGE": [{"shape": {"operation": "ReceiveMessage", "expected": "error InvalidParameterValue",
                                        "observed": "ReceiveOk"},
                              "expected": "...", "observed": "...", "steps": [{"advance": 0.0, ...}]}]}}

A file of the first format (one entry a rule, no shape) is read too: each entry's shape is worked out from its case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqs_conformance.conformance.cases import decode_steps, encode_steps
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.rules import RULES

FORMAT = 2


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message names it."""


def shape(operation: str, expected: str, observed: str) -> dict[str, str]:
    """What makes one divergence of a rule another: the operation; what was expected, its numbers left out (a
    count, a time, a value sent vary from run to run); and the kind of answer observed, not its text (which may
    hold a handle or an id), but whether the text was the one an expected error of the same code has."""
    words = observed.split(" ", 2)
    kind = " ".join(words[:2]) if words[0] == "error" else words[0]
    if words[0] == "error" and f"error {words[1]} /" in expected:
        kind += " (another text)"
    return {"operation": operation, "expected": re.sub(r"\d+(\.\d+)?", "#", expected), "observed": kind}


def shape_of_finding(finding) -> dict[str, str]:
    return shape(type(finding.steps[-1].op).__name__, finding.divergence.expected, finding.divergence.observed)


@dataclass
class Baseline:
    profile: str
    target: str
    # rule id -> the shapes known, each with what was seen and its minimal case
    known: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "profile": self.profile, "target": self.target,
                           "known": dict(sorted(self.known.items()))}, indent=1)

    def shapes(self, rule_id: str) -> list[dict[str, str]]:
        return [entry["shape"] for entry in self.known.get(rule_id, [])]

    def merged_with(self, other: Baseline) -> Baseline:
        """This baseline and the shapes of `other` it does not have yet (a run accepting what it saw)."""
        known = {rule_id: list(entries) for rule_id, entries in self.known.items()}
        for rule_id, entries in other.known.items():
            mine = known.setdefault(rule_id, [])
            mine += [e for e in entries if e["shape"] not in [m["shape"] for m in mine]]
        return Baseline(self.profile, other.target, known)

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            profile, known = data["profile"], dict(data["known"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise BaselineError(f"{path}: not a baseline file ({type(error).__name__}: {error})") from None
        if profile not in PROFILES:
            raise BaselineError(f"{path}: unknown profile {profile!r}")
        unknown = sorted(set(known) - set(RULES))
        if unknown:
            raise BaselineError(f"{path}: no such rule {', '.join(unknown)} (see `sqs-conformance rules`)")
        try:
            return cls(profile, data.get("target", "?"), {rule_id: _entries(e) for rule_id, e in known.items()})
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
            raise BaselineError(f"{path}: not a baseline file ({type(error).__name__}: {error})") from None


def _entries(entries: Any) -> list[dict[str, Any]]:
    """A rule's known shapes; the first format's single entry gets its shape from its case."""
    if isinstance(entries, list):
        for entry in entries:
            entry["shape"] = dict(entry["shape"])
        return entries
    entry = dict(entries)
    last = decode_steps(entry["steps"])[-1][1]
    return [{**entry, "shape": shape(type(last).__name__, entry["expected"], entry["observed"])}]


def from_result(result) -> Baseline:
    """The run's divergences as a baseline: each with its shape and minimal case."""
    return Baseline(result.profile, f"{result.target} {result.target_version}", {
        rule_id: [{"shape": shape_of_finding(finding), "expected": finding.divergence.expected,
                   "observed": finding.divergence.observed,
                   "steps": encode_steps([(step.advanced, step.op) for step in finding.steps])}]
        for rule_id, finding in result.findings.items()})


@dataclass
class Comparison:
    """A run against its baseline: what is new (fails the job), what was known, what no longer diverges."""

    new: list[str]  # rules not known at all
    new_shapes: dict[str, dict[str, str]]  # known rules that diverged in a shape not known: rule -> that shape
    known: list[str]
    fixed: list[str]  # known, and decided without a divergence this time
    unchecked: list[str]  # known, but this run never decided the rule: no word on it

    @property
    def passes(self) -> bool:
        return not self.new and not self.new_shapes


def compare(baseline: Baseline, result) -> Comparison:
    found = set(result.findings)
    known = set(baseline.known)
    not_found = known - found
    shapes = {rule_id: shape_of_finding(result.findings[rule_id]) for rule_id in found & known}
    return Comparison(
        new=sorted(found - known),
        new_shapes={r: s for r, s in sorted(shapes.items()) if s not in baseline.shapes(r)},
        known=sorted(r for r, s in shapes.items() if s in baseline.shapes(r)),
        fixed=sorted(r for r in not_found if result.verdict(r) == "conforms"),
        unchecked=sorted(r for r in not_found if result.verdict(r) != "conforms"))
