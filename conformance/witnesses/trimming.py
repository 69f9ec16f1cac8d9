"""Trimming a case: every step (or queue attribute) it can do without is left out, the steps kept happening
when they did and naming the same handles.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

from sqs_conformance.conformance.cases import Case
from sqs_conformance.conformance.session import Step
from sqs_conformance.conformance.translate import garbage_unless_issued, map_handles
from sqs_conformance.model.attributes import dead_letter_queue
from sqs_conformance.model.values import CreateQueue, Operation

Shows = Callable[[Case], 'list[Step] | None']  # replays a simpler case: the steps that still show, or None


def case_of(steps: list[Step]) -> Case:
    return [(step.advanced, step.op) for step in steps]


def fewest_steps(steps: list[Step], shows: Shows, deadline: float | None = None) -> list[Step]:
    """The steps of a case, with every one left out that the case can do without. `shows` replays a simpler case
    and gives the steps that still show what it must (up to the step that shows it), or None. Hypothesis shrinks
    on a budget and may leave a step nothing needs; this tries the case without each step, the last first, then
    without each wait, then with each queue created without one of its attributes; a pass that kept any of
    these is followed by another, until one keeps none. A kept simplification does not restart the pass (which
    would make a pass quadratic in the case's length): it goes on from where it is. The steps kept happen when
    they did (a step left out passes on its wait, and the time it took: a long poll's); a queue is left out only
    where no other step names it. Past `deadline` (time.monotonic()), the simplest case shown so far is kept."""
    within = _until(deadline, shows)
    changed = True
    while changed:
        changed = False
        for simplify in (_without_steps, _without_waits, _without_attributes):
            steps, kept = simplify(steps, within)
            changed |= kept
    return steps


def _until(deadline: float | None, shows: Shows) -> Shows:
    """`shows`, until `deadline`; past it, no simpler case is tried (none shows), so trimming ends at once."""
    if deadline is None:
        return shows
    return lambda case: shows(case) if time.monotonic() < deadline else None


def _without_steps(steps: list[Step], shows: Shows) -> tuple[list[Step], bool]:
    kept = False
    index = len(steps) - 1
    while index >= 0:
        if index < len(steps) and (not isinstance(steps[index].op, CreateQueue) or not _named_elsewhere(steps, index)):
            steps, kept = _keep_if_shown(steps, shows, without_step(steps, index), kept)
        index -= 1
    return steps, kept


def _without_waits(steps: list[Step], shows: Shows) -> tuple[list[Step], bool]:
    """Each wait the divergence does not need (an hour's sleep in a script) left out."""
    kept = False
    for index in range(len(steps)):
        if index < len(steps) and steps[index].advanced:
            zeroed = [(0.0 if i == index else s.advanced, s.op) for i, s in enumerate(steps)]
            steps, kept = _keep_if_shown(steps, shows, zeroed, kept)
    return steps, kept


def _without_attributes(steps: list[Step], shows: Shows) -> tuple[list[Step], bool]:
    kept = False
    for index in range(len(steps)):
        for simpler in list(without_each_attribute(steps, index)) if index < len(steps) else []:
            steps, kept_now = _keep_if_shown(steps, shows, simpler, False)
            if kept_now:
                kept = True
                break  # the other attributes of this queue are tried on the next pass, from the simpler case
    return steps, kept


def _keep_if_shown(steps: list[Step], shows: Shows, simpler: Case, kept: bool) -> tuple[list[Step], bool]:
    shown = shows(simpler)
    return (shown, True) if shown is not None else (steps, kept)


def without_each_attribute(steps: list[Step], index: int) -> Iterator[Case]:
    """The case with the queue the step at `index` creates made without one of its attributes, for each."""
    op = steps[index].op
    if not isinstance(op, CreateQueue):
        return
    if any(isinstance(later.op, CreateQueue) and later.op.queue == op.queue for later in steps[index + 1:]):
        return  # made again later: a creation refused for an attribute, accepted without it, would make it twice
    for name in op.attributes:
        if name != "FifoQueue":  # the queue's kind is the profile's, not a detail of the case
            fewer = {k: v for k, v in op.attributes.items() if k != name}
            yield without_step(steps, index, instead=CreateQueue(op.queue, fewer))


def _named_elsewhere(steps: list[Step], index: int) -> bool:
    """Whether another step names the queue the step at `index` creates (as its queue, or its dead-letter queue)."""
    queue = steps[index].op.queue
    return any(queue in (getattr(step.op, "queue", None), _dead_letter_queue_of(step.op))
               for position, step in enumerate(steps) if position != index)


def _dead_letter_queue_of(op: Operation) -> str | None:
    return dead_letter_queue(op.attributes.get("RedrivePolicy")) if isinstance(op, CreateQueue) else None


def without_step(steps: list[Step], index: int | None, instead: Operation | None = None) -> Case:
    """The case without the step at `index`, or with `instead` in its place. A handle no step kept issued (its
    receive left out, or a model id that was garbage to the model all along) is sent as a plain garbage handle:
    a target must only ever be sent handles it issued itself, or ones that are garbage to every queue."""
    case: Case = []
    done = 0.0  # when the previous step kept was answered
    renamed = _renumbered(steps, index if instead is None else None)
    issued: set[str] = set()
    for position, step in enumerate(steps):
        if position == index and instead is None:
            continue
        op = map_handles(instead if position == index and instead is not None else step.op,
                         lambda h: renamed.get(h, h))
        op = garbage_unless_issued(op, frozenset(issued).__contains__)
        case.append((round(max(0.0, step.invoke - done), 6), op))
        issued |= {renamed.get(m, m) for m in step.verdict.outcome.minted}
        done = step.complete
    return case


def _renumbered(steps: list[Step], index: int | None) -> dict[str, str]:
    """The model names what it mints in order ("rh-3": the third handle). Without the step at `index`, what is
    minted after it takes the next number down, so that later steps still name the same handles; what that step
    minted names nothing any more."""
    mapping: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for position, step in enumerate(steps):
        for minted in sorted(step.verdict.outcome.minted, key=_mint_order):
            kind = minted.rpartition("-")[0]
            if position == index:
                mapping[minted] = f"left-out-{minted}"
            else:
                counts[kind] += 1
                mapping[minted] = f"{kind}-{counts[kind]}"
    return mapping


def _mint_order(model_id: str) -> tuple[str, int]:
    kind, _, number = model_id.rpartition("-")
    return kind, int(number) if number.isdigit() else 0
