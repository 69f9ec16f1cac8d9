"""Searching witnesses on the model with Hypothesis: random cases find what there is to aim at, a search per
aim finds (and shrinks) the shortest case that reaches it, trimmed, then probed.
"""

from __future__ import annotations

import hypothesis
from collections.abc import Callable

from hypothesis import HealthCheck, Phase, Verbosity, settings

from sqs_conformance.adapters.base import Unsupported
from sqs_conformance.conformance.cases import Case
from sqs_conformance.conformance.machine import REAL_MAX_WAIT, Run, build_machine, run_machine, unreachable
from sqs_conformance.conformance.session import Step
from sqs_conformance.conformance.witnesses.catalogue import Aim, Catalogue, Witness, aims_of
from sqs_conformance.conformance.witnesses.judged import (
    aims_covered, aims_reached, judged_model, reached_when_busy, replayed_on_model,
)
from sqs_conformance.conformance.witnesses.probes import with_probes
from sqs_conformance.conformance.witnesses.trimming import case_of, fewest_steps
from sqs_conformance.model.rules import rules_for

EXPLORE_EXAMPLES = 1000  # random cases to find what there is to aim at
SEARCH_EXAMPLES = 150  # cases to reach one aim (and shrink it), at most
RULE_EXAMPLES = 1000  # cases to reach a rule no random case reached, with each of RULE_SEEDS seeds
RULE_SEEDS = 3
SEARCH_STEPS = 20


class _Reached(Exception):
    def __init__(self, steps: list[Step]) -> None:
        super().__init__(f"reached in {len(steps)} steps")
        self.steps = steps


def _machine(profile: str, pace: str, on_step: Callable[[Step, list[Step]], None]):
    """The run's own machine on the model, paced for a `pace` clock, calling `on_step` after each step."""
    shared = Run(judged_model(profile, pace), profile, run_id="witness", pace=pace)

    class Searching(build_machine(shared)):  # type: ignore[misc, valid-type]
        def do(self, op):
            step = super().do(op)
            if step is not None:
                on_step(step, self.session.steps)
            return step

    return Searching


def _settings(examples: int, steps_per_case: int, shrink: bool) -> settings:
    return settings(max_examples=examples, stateful_step_count=steps_per_case, deadline=None, database=None,
                    verbosity=Verbosity.quiet, report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate])


def explore(profile: str, pace: str, *, seed: int = 1, examples: int = EXPLORE_EXAMPLES) -> dict[Aim, Case]:
    """Every aim random cases reach, with the shortest case that reached it (up to the step that did)."""
    reached: dict[Aim, Case] = {}

    def note(step: Step, steps: list[Step]) -> None:
        for aim in aims_of(step):
            if aim not in reached or len(steps) < len(reached[aim]):
                reached[aim] = case_of(steps)

    machine = _machine(profile, pace, note)
    machine = hypothesis.seed(seed)(machine)
    run_machine(machine, _settings(examples, SEARCH_STEPS, shrink=False))
    return reached


def search(profile: str, aim: Aim | str, pace: str, *, seed: int = 1, examples: int = SEARCH_EXAMPLES
           ) -> Witness | None:
    """The shortest case Hypothesis finds (and shrinks) in which a step of the model reaches `aim` (or any aim of
    a rule, given its id), with the waits and timeouts the machine uses for a `pace` clock. None if `examples`
    cases never reach it."""
    def wanted(candidate: Aim) -> bool:
        return candidate == aim if isinstance(aim, Aim) else candidate.rule == aim

    def check(step: Step, steps: list[Step]) -> None:
        # reached as a target of the pace is judged: with requests as slow as a busy one's too (`_reaching`)
        if any(wanted(a) and (pace == "virtual" or _reaching(profile, pace, a, case_of(steps)) is not None)
               for a in aims_of(step)):
            raise _Reached(list(steps))

    machine = _machine(profile, pace, check)
    machine = hypothesis.seed(seed)(machine)
    try:
        run_machine(machine, _settings(examples, SEARCH_STEPS, shrink=True))
    except _Reached as found:
        case = case_of(found.steps)
        return _witness_from_steps(profile, pace, sorted(
            a for a in aims_of(found.steps[-1]) if wanted(a) and _reaching(profile, pace, a, case) is not None)[0],
            found.steps)
    return None


def witness_from_case(profile: str, pace: str, aim: Aim, case: Case) -> Witness | None:
    """A case that reached the aim, as a witness with every step it can do without left out."""
    steps = _reaching(profile, pace, aim, case)
    return None if steps is None else _witness_from_steps(profile, pace, aim, steps)


def _witness_from_steps(profile: str, pace: str, aim: Aim, steps: list[Step]) -> Witness:
    return Witness(aim, case_of(fewest_steps(steps, lambda case: _reaching(profile, pace, aim, case))))


def _reaching(profile: str, pace: str, aim: Aim, case: Case) -> list[Step] | None:
    """The case replayed on the model up to the first step that reaches the aim, or None if none does, on a real or
    moved clock also with requests as slow as a busy target's (`reached_when_busy`), or if it waits longer than a
    real clock sleeps (leaving a step out adds its wait and its time to the next one's)."""
    if pace == "real" and any(advance > REAL_MAX_WAIT for advance, _ in case):
        return None
    try:
        steps = replayed_on_model(profile, pace, case)[0].steps
    except Unsupported:  # a simpler case the model cannot play (a queue made twice once a refusal is left out)
        return None
    reaching = next((steps[:i + 1] for i, step in enumerate(steps) if aim in aims_of(step)), None)
    # the prefix reaches it as judged at plan (the replay above): as a busy target is judged, it must too
    if reaching is not None and pace != "virtual" and aim not in reached_when_busy(profile, pace, case_of(reaching)):
        return None
    return reaching


def search_catalogue(profile: str, pace: str, *, seed: int = 1,
                     on_aim: Callable[[Aim, Witness], None] | None = None,
                     kept: Catalogue | None = None) -> Catalogue:
    """Explore, then search a witness for each aim no witness so far reaches, the aims of the shortest cases
    first (their witnesses reach many others on the way); then one for each rule still without. With `kept` (a
    stored catalogue), its witnesses that still reach their aims are kept (`relabelled`), and only what they
    leave uncovered is searched."""
    not_generated = unreachable(profile)
    reached = explore(profile, pace, seed=seed)
    catalogue = Catalogue(profile, pace, [])
    covered: set[Aim] = set()
    witness: Witness | None
    for witness in relabelled(kept) if kept is not None else []:
        covered.add(witness.aim)
        covered.update(aims_covered(profile, pace, witness))
        catalogue.witnesses.append(witness)

    def keep(witness: Witness) -> None:
        covered.update(aims_covered(profile, pace, witness))
        probed = with_probes(profile, pace, witness)
        catalogue.witnesses.append(probed)
        if on_aim is not None:
            on_aim(probed.aim, probed)

    for aim in sorted(reached, key=lambda a: (len(reached[a]), a)):
        if aim in covered:
            continue
        # Where the search misses (a rare aim: a FIFO group's visible prefix), the random case that reached it,
        # with every step it can do without left out, is the witness; where that is no witness either (too near
        # an edge to stay decisive as a busy target is judged), longer searches of a few more seeds.
        witness = search(profile, aim, pace, seed=seed) or witness_from_case(profile, pace, aim, reached[aim])
        for attempt in range(RULE_SEEDS if witness is None else 0):
            witness = search(profile, aim, pace, seed=seed + 1 + attempt, examples=RULE_EXAMPLES)
            if witness is not None:
                break
        if witness is not None:
            keep(witness)
    # A rule random cases never reached gets a search of its own, aimed at the rule rather than one branch.
    for r in rules_for(profile):
        if r.id in {aim.rule for aim in covered}:
            continue
        witness = None
        for attempt in range(0 if r.id in not_generated else RULE_SEEDS):  # rare rules: a few seeds
            witness = search(profile, r.id, pace, seed=seed + attempt, examples=RULE_EXAMPLES)
            if witness is not None:
                break
        if witness is None:
            catalogue.missing[r.id] = not_generated.get(
                r.id, f"no case of {RULE_SEEDS} x {RULE_EXAMPLES} reached it on a {pace} clock")
        else:
            keep(witness)
    return catalogue


def relabelled(catalogue: Catalogue) -> list[Witness]:
    """The stored witnesses that still reach their aims on today's model. One whose aim has gained a situation
    since (the same rule, operation and answer, now in a named situation) is kept under the aim it reaches now;
    one that reaches neither is left out, for the search to replace."""
    def plain(aim: Aim) -> tuple[str, str, str]:
        return aim.rule, aim.operation, aim.answer.split(" (", 1)[0]

    kept = []
    for witness in catalogue.witnesses:
        try:
            reached = aims_reached(catalogue.profile, catalogue.pace, witness)
        except Unsupported:
            continue
        if witness.aim in reached:
            kept.append(witness)
            continue
        same = sorted(a for a in reached if plain(a) == plain(witness.aim))
        if same:
            kept.append(Witness(same[0], witness.steps))
    return kept
