"""What someone moving from one queue service to another must know: the shortest operation sequences on which
two profiles' outcomes disagree, one per differing rule.

Each profile in turn behaves as the queue (the model of that profile as a target) and is judged by the other's
model, with the same Hypothesis machines a run uses: a divergence is an answer the first gives that the second
does not permit.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.model_target import ModelTarget
from conformance.runner import Finding, merged, run


@dataclass
class Difference:
    behaves: str  # the profile whose answer it is
    judged_by: str  # the profile that does not permit it
    finding: Finding


def differences(first: str, second: str, *, examples: int = 30, seed: int | None = None,
                steps_per_case: int = 20) -> list[Difference]:
    found = []
    for behaves, judge in ((first, second), (second, first)):
        # The judge's witnesses: each is already the shortest case of one branch of a rule, so a branch the
        # other profile answers differently shows at once, however rarely a random case reaches it. And the
        # search, for what no witness shows; it runs as if no witness had (once a common difference is
        # tolerated, most random cases would be abandoned at it, and the search would end early).
        # No coverage rounds: what is wanted is every difference, not every rule exercised.
        target = ModelTarget(behaves)
        shown = run(target, judge, search=False)
        searched = run(target, judge, examples=examples, seed=seed, steps_per_case=steps_per_case,
                       coverage_rounds=0, witnesses=False)
        result = merged(searched.run_id, target, judge, [shown, searched])
        found += [Difference(behaves, judge, finding) for finding in result.findings.values()]
    return sorted(found, key=lambda d: (d.finding.rule, d.behaves))
