"""One part's search: an order of its operations, and a permitted outcome at each, consistent with every answer.

A depth-first search in the manner of Wing and Gong's, as Porcupine and Knossos run it, over the operations that may
take effect next: those sent before every pending operation's answer came back (`HistoryOp.precedes`). Most parts
need no turn back, so each is first walked once, taking the first of the operations that may go next and keeping
nothing to go back to; only where that walk fails past a branch is it searched again, keeping at each branch a copy
of the path (model, ids, receipts held), and a state reached twice (the same operations done, the same model and
ids) is not searched again. The order found comes with each operation's verdict on it. The search costs at most
`budget` judged steps beyond one walk of the part (an order found with no turn back costs its length, however long
the part: a queue's own part of a long history is one); past it the part is undecided, never failed. So is a part
with an answer lost where the model cannot follow blind (a send's: it cannot tell which message, if any, the queue
now holds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sqs_conformance.conformance.concurrent.history import HistoryOp
from sqs_conformance.conformance.concurrent.parts import WHOLE_QUEUE
from sqs_conformance.conformance.concurrent.path import Held, Judged, LeftReceivable, Path, fits
from sqs_conformance.model import Model
from sqs_conformance.model.outcomes import Outcome, carried_out
from sqs_conformance.model.values import Error, Unknown

DEFAULT_BUDGET = 20_000  # judged steps per part, beyond its length
NOTES_TRIED = (0, 1, 2, float("inf"))  # early returns an order may hold, tried in turn


@dataclass
class Searched:
    status: str  # "ordered", "none" (no order fits every answer) or "undecided" (the budget ran out); "again"
    # (search_with without turn_back: going on needs a turn back)
    order: list[int] = field(default_factory=list)  # positions in the part: the order found, or the deepest tried
    failed_at: int | None = None  # where no order exists: the position of the operation that fit nowhere next
    judged: int = 0  # steps the search judged
    verdicts: list[Judged] = field(default_factory=list)  # each of `order`'s, its rules named among consumers
    failure: Judged | None = None  # the verdict on the operation at `failed_at`, named so too
    held: list[Held] = field(default_factory=list)  # the receipts held on the way
    receivable: list[LeftReceivable] = field(default_factory=list)  # the messages left receivable on the way


@dataclass
class _Frame:
    """A branch: the state before it, and the operations still to try there."""

    path: Path
    done: Done
    order_length: int
    notes: int
    untried: list[int]


def search(ops: list[HistoryOp], start: Model, budget: int = DEFAULT_BUDGET) -> Searched:
    """An order with the fewest early returns (each permitted, and counted against the target): none first, then
    one, ... (`NOTES_TRIED`), then any number. An order that needs none must not be charged one because the
    search met another order first. Each pass may walk the part once more: the budget bounds the turns back."""
    judged = beyond_walks = 0
    failed: list[Searched] = []
    for allowed in NOTES_TRIED:
        found = search_with(ops, start, len(ops), allowed, turn_back=False)
        if found.status == "again":
            judged += found.judged
            found = search_with(ops, start, len(ops) + budget - beyond_walks, allowed)
            beyond_walks += max(0, found.judged - len(ops))
        judged += found.judged
        found.judged = judged
        if found.status != "none":
            return found
        failed.append(found)
    # No order at all: the deepest the search reached, with the fewest early returns on the way there (the first
    # pass to reach that deep), so that a failure later in the part does not charge early returns to its start
    deepest = max(failed, key=lambda f: len(f.order))
    deepest.judged = judged
    acceptance = _stood_on_acceptance(ops, start, deepest)
    if acceptance is not None:
        deepest.failed_at, deepest.failure = acceptance
    return deepest


def _stood_on_acceptance(ops: list[HistoryOp], start: Model, deepest: Searched) -> tuple[int, Judged] | None:
    """Where no order fits: the failure may stand on another operation that could take effect at the same point,
    whose answer accepted what the model permits only to refuse. Carried out as a queue that does not enforce that
    refusal would carry it out (`Outcome.unenforced`), it may let the failing operation fit: the failure is then
    that acceptance's, the rule a person fixes (LocalStack deleting a FIFO message through another consumer's
    expired handle, then refusing that consumer's change: the message no longer exists). Its position and verdict,
    or None."""
    if deepest.failed_at is None:
        return None
    sent, settles = _windows(ops)
    path, done = Path(start.fork()), Done()
    for position in deepest.order:
        if not fits(path.step(ops[position], after_every_earlier=False)[0]):
            return None  # not the order the search walked: nothing to name
        done = done.with_(position)
    failing = ops[deepest.failed_at]
    for position in done.next_candidates(sent, settles):
        if position == deepest.failed_at:
            continue
        o = ops[position]
        if isinstance(o.response, Error):
            continue  # a refusal: no acceptance to carry out
        expectation = path.model.expect(path.ids.op_for_model(o.op), o.invoke, o.complete)
        carried = carried_out(expectation, path.ids.response_for_model(o.response))
        if not carried:
            continue
        stepped = path.fork()
        _, named = stepped.step(o, after_every_earlier=False)
        if not named.divergences:
            continue  # it fit: the search took that order already
        for effects in carried:
            accepted = stepped.fork()
            accepted.model.commit(Outcome(o.response, (), effects))
            if fits(accepted.step(failing, after_every_earlier=False)[0]):
                return position, named
    return None


def search_with(ops: list[HistoryOp], start: Model, budget: int, notes_allowed: float, turn_back: bool = True
                ) -> Searched:
    """An order in which at most `notes_allowed` steps are early returns. Without `turn_back`, one walk taking the
    first operation wherever several may go next, as the search does, but keeping nothing to go back to (no copy
    at a branch, no memo): most parts need no more. Where it would have to go back, it stops: "again"."""
    n = len(ops)
    sent, settles = _windows(ops)
    notes = 0
    path, done, order, verdicts = _begun(ops, start, sent, settles)
    stack: list[_Frame] = []
    seen: set = set()
    judged = len(order)
    deepest = Searched("none", [])  # how deep the search went: the order there and what failed next
    chosen: int | None = None  # an operation taken from a frame, to judge next
    branched = False  # without turn_back: it passed a branch
    while True:
        if chosen is None:
            if len(order) == n:
                return Searched("ordered", order, judged=judged, verdicts=verdicts, held=path.held,
                                receivable=path.receivable)
            candidates = done.next_candidates(sent, settles)
            chosen = candidates[0]
            if len(candidates) > 1:
                if turn_back:
                    stack.append(_Frame(path.fork(), done, len(order), notes, candidates[1:]))
                else:
                    branched = True
        if judged >= budget:
            return Searched("undecided", deepest.order, judged=judged)
        judged += 1
        verdict, named = path.step(ops[chosen], after_every_earlier=chosen == done.low)
        if not verdict.consistent and isinstance(ops[chosen].response, Unknown):
            # an answer lost where the model cannot follow blind (a send: which message, if any?), in any order
            return Searched("undecided", order, judged=judged)
        if fits(verdict) and notes + bool(verdict.outcome.notes) <= notes_allowed:
            done = done.with_(chosen)
            notes += bool(verdict.outcome.notes)
            order.append(chosen)
            verdicts.append(named)
            chosen = None
            if stack:  # only where a branch is open can a state come again
                key = (done, notes, path.state())
                if key not in seen:
                    seen.add(key)
                    continue
            else:
                continue
        elif len(order) > len(deepest.order) or deepest.failure is None:
            deepest = Searched("none", list(order), chosen, verdicts=list(verdicts), failure=named, held=path.held)
        if branched:
            return Searched("again", judged=judged)
        # back to the latest branch with something untried
        chosen = None
        while stack and not stack[-1].untried:
            stack.pop()
        if not stack:
            deepest.judged = judged
            return deepest
        frame = stack[-1]
        chosen = frame.untried.pop(0)
        last = not frame.untried
        path = frame.path if last else frame.path.fork()
        done, notes = frame.done, frame.notes
        order, verdicts = order[:frame.order_length], verdicts[:frame.order_length]
        if last:
            stack.pop()


# The path after a whole queue's operation that comes first in a part, from one start: (start, operation, path,
# verdict). That operation is in every part, or many (parts.py: the queue's creation in every one), so each process
# judges it once for the parts it searches in turn, not once a part.
_first_step: tuple[Model, HistoryOp, Path, Judged] | None = None


def _begun(ops: list[HistoryOp], start: Model, sent: list[float], settles: list[float]
           ) -> tuple[Path, Done, list[int], list[Judged]]:
    """Where a walk of `ops` begins: the path, the positions done and their verdicts. Past the first operation
    where it is a whole queue's, forced (every other was sent after its answer came) and fits with nothing to
    count, as judged for the part before from the same start (`_first_step`); else at the start."""
    global _first_step
    first = ops[0] if ops else None
    if first is None or not isinstance(first.op, WHOLE_QUEUE) or Done().next_candidates(sent, settles) != [0]:
        return Path(start.fork()), Done(), [], []
    known = _first_step  # read once: checks of several threads may each set it
    if known is None or known[0] is not start or known[1] is not first:
        path = Path(start.fork())
        verdict, named = path.step(first, after_every_earlier=True)
        if not fits(verdict) or verdict.outcome.notes:
            return Path(start.fork()), Done(), [], []  # judged again by the walk, which says what went wrong
        known = _first_step = (start, first, path, named)
    return known[2].fork(), Done(1), [0], [known[3]]


ORDERS_BUDGET = 2_000  # judged steps to find every order of a part's first operations (`every_order`)


def every_order(ops: list[HistoryOp], start: Model, budget: int = ORDERS_BUDGET) -> list[Path] | None:
    """Where each order of `ops` that fits every answer (early returns and all) leaves the part: one path per
    distinct state reached. None where the budget ran out first: then what every order leaves is not known."""
    sent, settles = _windows(ops)
    ends: dict[tuple, Path] = {}
    seen: set = set()
    judged = 0
    pending: list[tuple[Path, Done]] = [(Path(start.fork()), Done())]
    while pending:
        path, done = pending.pop()
        if done.low == len(ops):
            ends.setdefault(path.state(), path)
            continue
        candidates = done.next_candidates(sent, settles)
        for position in candidates:
            judged += 1
            if judged > budget:
                return None
            after = path.fork() if position != candidates[-1] else path
            verdict, _ = after.step(ops[position], after_every_earlier=False)
            if not fits(verdict):
                continue
            key = (done.with_(position), after.state())
            if key not in seen:
                seen.add(key)
                pending.append((after, key[0]))
    return list(ends.values())


def _windows(ops: list[HistoryOp]) -> tuple[list[float], list[float]]:
    """Each operation's invoke_wall and settles_by: what `Done.next_candidates` reads."""
    return [o.invoke_wall for o in ops], [o.settles_by for o in ops]


class Done(NamedTuple):
    """The positions done so far: all below `low`, and those of `ahead` (a few: operations overlap a few others).
    Small whatever the part's length, so that a step, and the memo's key, cost the same at its end as at its
    start (a bit per position made every step copy the part's length in bits)."""

    low: int = 0
    ahead: frozenset[int] = frozenset()

    def with_(self, position: int) -> Done:
        if position != self.low:
            return Done(self.low, self.ahead | {position})
        low, ahead = position + 1, self.ahead
        while low in ahead:
            low += 1
        return Done(low, frozenset(p for p in ahead if p >= low) if ahead else ahead)

    def next_candidates(self, sent: list[float], settles: list[float]) -> list[int]:
        """The positions of the operations that may take effect next: not done, and sent before every pending
        operation's answer came (ops are in invoke order, so the scan stops at the first sent after that). `sent`
        and `settles`: each operation's invoke_wall and settles_by."""
        low = self.low
        if not self.ahead and (low + 1 >= len(sent) or sent[low + 1] > settles[low]):
            return [low] if low < len(sent) else []  # the next one alone (most steps: nothing overlaps it)
        candidates: list[int] = []
        settled = float("inf")
        for position in range(self.low, len(sent)):
            if position in self.ahead:
                continue
            if sent[position] > settled:
                break
            candidates.append(position)
            settled = min(settled, settles[position])
        return [p for p in candidates if sent[p] <= settled]
