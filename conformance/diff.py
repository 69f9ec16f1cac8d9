"""What someone moving from one queue service to another must know: the shortest operation sequences on which
two profiles' outcomes disagree, one per differing rule.

Each profile in turn behaves as the queue (the model of that profile as a target) and is judged by the other's
model, with the same Hypothesis machines a run uses: a divergence is an answer the first gives that the second
does not permit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.runner import Finding, RunOptions, merged, run
from sqs_conformance.conformance.witnesses import Replayed, fewest_steps, replay_case


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
        shown = run(target, judge, RunOptions(search=False))
        searched = run(target, judge, RunOptions(examples=examples, seed=seed, steps_per_case=steps_per_case,
                                                 coverage_rounds=0, witnesses=False))
        result = merged(searched.run_id, target, judge, [shown, searched])
        found += [Difference(behaves, judge, _trimmed(behaves, judge, f)) for f in result.findings.values()]
    return sorted(found, key=lambda d: (d.finding.rule, d.behaves))


def _trimmed(behaves: str, judge: str, finding: Finding) -> Finding:
    """The finding without every step the difference does not need: Hypothesis shrinks a search's case by whole
    machine steps (a send of two messages, say), and a model replays in milliseconds."""
    target = ModelTarget(behaves)

    def still_shows(case) -> list | None:
        shown, _ = replay_case(target, judge, case, Replayed(), "diff", None, 1, frozenset())
        return next((steps for divergence, steps in shown if divergence.rule == finding.rule), None)

    return replace(finding, steps=fewest_steps(finding.steps, still_shows))
