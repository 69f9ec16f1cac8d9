"""Which answer a divergence stands on.

An answer inside the permitted set narrows the worlds the model holds possible; a later answer may then contradict
every world that is left. Had the earlier answer been unknown, the worlds it ruled out would still be there; where
they explain the later answer, the target's divergence is the earlier one: its answer was permitted only in worlds
the target was not in (LocalStack accepting changes through the expired handle of a FIFO message it had moved
to the dead-letter queue, which only the world where it had not moved permits, then the message in the
dead-letter queue; moto refusing a change of a deleted message as an invalid handle, which only a move to the
dead-letter queue at the instant a long poll ended permits, then an empty dead-letter queue; fauxqs accepting a
change past the 12-hour ceiling, which only an expired handle accepted without hiding the message permits, then a
long poll that does not find it). The divergence is then named after the rules that earlier answer broke in the
worlds it ruled out (the answers that, given instead, explain the case), then its own.

Where no world the model held explains the case, an earlier acceptance may have been carried out where only its
refusal was permitted: the case replayed with that step's effects as a target not enforcing the refusal's rules
would leave them (`Outcome.unenforced`) names those rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqs_conformance.model.core import Model
from sqs_conformance.model.outcomes import Divergence, Effects, Outcome, Verdict, attribution, concrete, describe
from sqs_conformance.model.state import MessageState, Timing
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.values import Error, Operation, ReceiveMessage, Response, Unknown

CANDIDATES = 6  # earlier narrowing answers tried, latest first: each costs a replay of the case on the model


@dataclass(frozen=True)
class Played:
    """A step as the model judged it."""

    op: Operation
    invoke: float
    observed: Response
    complete: float
    verdict: Verdict


def blamed(profile: str, timing: Timing, played: list[Played], divergences: tuple[Divergence, ...]
           ) -> tuple[Divergence, ...]:
    """The divergences of the last step of `played`, named after the earlier answer they stand on, if any: the
    latest answers that narrowed the worlds are taken as never heard, one more at a time (two answers may each
    rule the same world out), until the case is explained; the earliest of them is named. The step's answer is
    explained or not as a whole, so this is decided once for all its divergences."""
    if not divergences:
        return divergences
    found = _stood_on(profile, timing, played)
    if found is None:
        return _named_after_unenforced(profile, timing, played, divergences)
    index, unheard = found
    step = played[index]
    # Named after the answers that, given there instead, explain the case: the worlds that answer ruled out. The
    # step's other permitted answers may belong to the worlds that are left (a FIFO queue may refuse an expired
    # handle or accept it), and their rules were kept, not broken.
    others = list(step.verdict.others)
    explaining = [o for o in others
                  if _explained_without(profile, timing, played, unheard - {index}, {index: concrete(o.response)})]
    # The same answer may be permitted in a world ruled out and in one kept (a FIFO message's expired handle
    # refused, moved to the dead-letter queue or not): the ruled-out world's rules first.
    kept = _states_left(step.verdict.outcome)
    explaining.sort(key=lambda o: _states_left(o) <= kept)
    rules = tuple(dict.fromkeys(attribution(explaining, step.observed) + attribution(others, step.observed)))
    expected = " or ".join(dict.fromkeys(describe(o.response) for o in explaining or others))
    return _named_after(index, rules, expected, describe(step.observed), divergences)


def _states_left(outcome: Outcome) -> set[tuple[str, MessageState]]:
    """The message states an outcome leaves: the world it was permitted in, where it changes nothing."""
    return {(message_id, state) for message_id, states in outcome.effects.states.items() for state in states}


def _named_after(index: int, rules: tuple[str, ...], expected: str, observed: str,
                 divergences: tuple[Divergence, ...]) -> tuple[Divergence, ...]:
    """The divergences named after the earlier step `index` first (its `rules`, what it should have answered and
    what it did), then their own."""
    return tuple(Divergence(tuple(dict.fromkeys(rules + d.rules)),
                            f"at step {index}: {expected}; or, where that step's answer holds, {d.expected}",
                            f"at step {index}: {observed}; here: {d.observed}", d.message_ids)
                 for d in divergences)


def _named_after_unenforced(profile: str, timing: Timing, played: list[Played],
                            divergences: tuple[Divergence, ...]) -> tuple[Divergence, ...]:
    """Where no world the model held explains the case: an earlier acceptance whose refusal was permitted instead,
    and the case explained had the target carried the operation out regardless of the refusal's rules (LocalStack
    accepting a change past the 12-hour ceiling through an expired handle and hiding the message for it, then a
    long poll that does not find it). The divergence is named after those rules, then its own."""
    for index in range(len(played) - 2, max(-1, len(played) - 2 - CANDIDATES), -1):
        step = played[index]
        if not _narrowed(step) or isinstance(step.observed, Error):
            continue
        for refusal in step.verdict.others:
            if refusal.unenforced is not None and _explained_without(profile, timing, played, set(),
                                                                     forced={index: refusal.unenforced}):
                return _named_after(index, refusal.rules, describe(refusal.response),
                                    f"{describe(step.observed)}, carried out", divergences)
    return divergences


def still_shown(profile: str, timing: Timing, played: list[Played]) -> frozenset[str]:
    """The rules the last step of `played` diverges on when the case, answers and all, is judged with `timing`
    instead (a case found on a virtual clock, judged as a real clock's windows and tolerance would judge it); none
    where an earlier step diverges there first (the case would go another way)."""
    model = Model(profile, timing)
    try:
        for step in played[:-1]:
            verdict = model.observe(step.op, step.invoke, step.observed, completed_at=step.complete)
            if verdict.divergences or not verdict.consistent:
                return frozenset()
        last = played[-1]
        verdict = model.observe(last.op, last.invoke, last.observed, completed_at=last.complete)
    except ModelUsageError:
        return frozenset()
    return frozenset(r for d in verdict.divergences for r in d.rules)


def _stood_on(profile: str, timing: Timing, played: list[Played]) -> tuple[int, set[int]] | None:
    """The earliest answer the case stands on, and the answers taken as never heard to explain it."""
    unheard: list[int] = []
    for index in range(len(played) - 2, -1, -1):
        if len(unheard) == CANDIDATES:
            break
        if not _narrowed(played[index]):
            continue
        unheard.append(index)
        if _explained_without(profile, timing, played, set(unheard)):
            return index, set(unheard)
    return None


def _narrowed(step: Played) -> bool:
    """An answer that ruled worlds out (of any message: in a FIFO group one message's state holds back another's).
    A receive is left alone: unknown, it would issue other handles than the case goes on to use."""
    verdict = step.verdict
    return bool(verdict.others) and not verdict.divergences and not isinstance(step.op, ReceiveMessage)


def _explained_without(profile: str, timing: Timing, played: list[Played], unheard: set[int],
                       instead: dict[int, Response] | None = None, forced: dict[int, Effects] | None = None) -> bool:
    """Whether every answer of the case is permitted once the answers at `unheard` are taken as never heard (and
    those at `instead` as these, and the steps at `forced` as having had these effects whatever they answered)."""
    model = Model(profile, timing)
    instead, forced = instead or {}, forced or {}
    try:
        for index, step in enumerate(played):
            if index in forced:
                model.commit(Outcome(step.observed, (), forced[index]))
                continue
            heard = Unknown("what if it was not heard") if index in unheard else instead.get(index, step.observed)
            verdict = model.observe(step.op, step.invoke, heard, completed_at=step.complete)
            if verdict.divergences or not verdict.consistent:
                return False
    except ModelUsageError:
        return False
    return True
