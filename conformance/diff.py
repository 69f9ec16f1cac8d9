"""What someone moving from one queue service to another must know: the shortest operation sequences on which
two profiles' outcomes disagree, one per differing rule.

Each profile in turn behaves as the queue (the model of that profile as a target) and is judged by the other's
model, with the same Hypothesis machines a run uses: a divergence is an answer the first gives that the second
does not permit.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.model_target import ModelTarget
from conformance.runner import Finding, run


@dataclass
class Difference:
    behaves: str  # the profile whose answer it is
    judged_by: str  # the profile that does not permit it
    finding: Finding


def differences(first: str, second: str, *, examples: int = 30, seed: int | None = None,
                steps_per_case: int = 20) -> list[Difference]:
    found = []
    for behaves, judge in ((first, second), (second, first)):
        # No coverage rounds and no witnesses: what is wanted is every difference found and shrunk to its
        # shortest, not every rule exercised.
        result = run(ModelTarget(behaves), judge, examples=examples, seed=seed, steps_per_case=steps_per_case,
                     coverage_rounds=0, witnesses=False)
        found += [Difference(behaves, judge, finding) for finding in result.findings.values()]
    return sorted(found, key=lambda d: (d.finding.rule, d.behaves))
