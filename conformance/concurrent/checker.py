"""A concurrent history's verdict: each part searched for an order consistent with every answer (`search.py`),
its steps judged on the way (`path.py`) as a single client's run judges them, with two additions a single client
cannot have: rules named among consumers (`model/consumers.py`), and RCV-EXCLUSIVE decided on every receive that
another consumer's receipt kept a message from.

A part with no consistent order fails at the operation that fit nowhere next in the deepest order the search
reached, with the rule the model names there. A part whose search spent its budget is undecided: its steps are
`unordered`, never divergent. Early returns (a standard queue's permitted, counted redeliveries) are counted in
the order found, by the same policy as a single case of every other run (`redelivery.py`).
"""

from __future__ import annotations

import functools
import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqs_conformance.conformance.collector import fewer_collections
from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.conformance.concurrent.parts import Decomposed, Part, decompose
from sqs_conformance.conformance.concurrent.path import Held, LeftReceivable, Path
from sqs_conformance.conformance.concurrent.search import DEFAULT_BUDGET, every_order
from sqs_conformance.conformance.concurrent.spread import searching, side_by_side, workers_for
from sqs_conformance.conformance.redelivery import EarlyReturns
from sqs_conformance.model import Divergence, Model
from sqs_conformance.model.consumers import held_by_another
from sqs_conformance.model.outcomes import ReceiveSome
from sqs_conformance.model.profiles import Profile
from sqs_conformance.model.receive_holdings import LONG_POLL_SLACK
from sqs_conformance.model.rules import RCV_EXCLUSIVE, RCV_INTEGRITY, RCV_LONG_POLL
from sqs_conformance.model.state import Timing
from sqs_conformance.model.values import Error, ReceiveMessage, ReceiveOk, SendMessage, Unknown
from sqs_conformance.model.verdicts import StepVerdict


# A step judged in several parts shows the gravest of its verdicts there.
_GRAVITY = {v: rank for rank, v in enumerate((StepVerdict.OK, StepVerdict.NOTE, StepVerdict.UNKNOWN,
                                              StepVerdict.UNORDERED, StepVerdict.BEHIND, StepVerdict.DIVERGENCE))}


@dataclass(slots=True)
class StepJudgement:
    """One operation of the history, judged in every part it belongs to. Its sets and tuples are replaced, never
    changed in place: nearly every step shares those of the one kind of plain step it is (`Judged.rule_set`), so
    that a million steps cost no million sets."""

    op: HistoryOp
    verdict: StepVerdict = StepVerdict.OK
    rules: frozenset[str] = frozenset()
    decisive: frozenset[str] = frozenset()
    divergences: tuple[Divergence, ...] = ()
    notes: tuple[Divergence, ...] = ()

    def add(self, verdict: StepVerdict, rules: frozenset[str] = frozenset(), decisive: frozenset[str] = frozenset(),
            divergences: Iterable[Divergence] = (), notes: Iterable[Divergence] = ()) -> None:
        if _GRAVITY[verdict] > _GRAVITY[self.verdict]:
            self.verdict = verdict
        if rules:
            self.rules = _union(self.rules, rules) if self.rules else rules
        if decisive:
            self.decisive = _union(self.decisive, decisive) if self.decisive else decisive
        if divergences:
            self.divergences += tuple(d for d in divergences if d not in self.divergences)
        if notes:
            self.notes += tuple(n for n in notes if n not in self.notes)


@functools.lru_cache(maxsize=4096)
def _union(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """One set per pair of kinds of step met: a step judged twice (in two parts, or by a sweep) shares it too."""
    return a | b


@dataclass
class Violation:
    """A part with no order consistent with its answers; or an empty long poll that another part's message, left
    receivable throughout it, shows wrong (`_empty_long_polls`: `part` is then that message's operations and the
    poll)."""

    part: Part
    op: HistoryOp  # the operation that fit nowhere next
    divergence: Divergence  # what the model said of it there, its rule named among consumers
    before: list[HistoryOp]  # the deepest order the search reached before it
    missed_by_long_poll: bool = False  # found by `_empty_long_polls`, not by a part's search

    @property
    def rule(self) -> str:
        return self.divergence.rule

    def told(self) -> str:
        """How the checker found it, for a person."""
        if self.missed_by_long_poll:
            return (f"Step {self.op.index}, a long poll, returned nothing while a message lay receivable with nothing "
                    f"acting on it, after the {len(self.before)} operations on it before.")
        return (f"No order of these operations fits every answer: the checker's deepest order placed "
                f"{len(self.before)} of them, then step {self.op.index} fits nowhere.")


@dataclass
class HistoryVerdict:
    steps: list[StepJudgement]
    violations: list[Violation]  # no consistent order
    # early returns that are not rare: where the count was crossed, and the parts of the early returns counted
    repeated: list[tuple[HistoryOp, Divergence, list[Part]]]
    undecided: list[Part]  # the search's budget ran out
    decomposed: Decomposed

    @property
    def conforms(self) -> bool:
        return not self.violations and not self.repeated

    def rules_diverging(self) -> dict[str, Divergence]:
        found: dict[str, Divergence] = {}
        for v in self.violations:
            found.setdefault(v.rule, v.divergence)
        for _, d, _ in self.repeated:
            found.setdefault(d.rule, d)
        return found


def check_history(history: History, budget: int = DEFAULT_BUDGET, workers: int | None = None) -> HistoryVerdict:
    """`history` (operations numbered in invoke order, `History.in_order`) judged against the model. Its early
    returns are counted within it alone (a history is one case: two of one rule are not rare), so that a run,
    `check` and `confirm` judge it alike whatever came before. `workers`: processes to search its parts
    (`spread.py`; None: as many as pay)."""
    with fewer_collections(none=True):  # every step's verdict is kept: a large history is a large heap
        return _checked(history, budget, workers)


def _checked(history: History, budget: int, workers: int | None) -> HistoryVerdict:
    early = EarlyReturns().case()
    # Windows on every clock: on a virtual one another client's long poll may move the clock between an operation's
    # invoke and its effect, so it too took effect somewhere in [invoke, complete].
    timing = Timing(windowed=True, tolerance=history.tolerance)
    base = Model(history.profile, timing, indexed=False)
    decomposed = decompose(history)
    violations: list[Violation] = []
    repeated: list[tuple[HistoryOp, Divergence, list[Part]]] = []
    noted: dict[str, list[Part]] = {}  # per rule, the parts its early returns were in, in the order counted
    undecided: list[Part] = []
    held: list[Held] = []
    receivable: list[tuple[Part, list[int], LeftReceivable]] = []  # with the order of its part
    if workers is None:
        workers = workers_for(sum(len(p.ops) for p in decomposed.parts))
    # Each part is counted as it comes back, while the rest are searched; a stop ends the search at once.
    with searching(decomposed.parts, base, budget, workers) as results:
        steps = [StepJudgement(o) for o in history.ops]  # while the first part is searched
        for o in decomposed.unjudged:
            steps[o.index].add(StepVerdict.UNORDERED)
        polls = [step for step in steps if isinstance(step.op.op, ReceiveMessage)
                 and isinstance(step.op.response, ReceiveOk)]  # the receives answered: both sweeps meet them
        for part, found in zip(decomposed.parts, results, strict=True):
            if found.status == "undecided":
                undecided.append(part)
                for o in part.ops:
                    steps[o.index].add(StepVerdict.UNORDERED)
                continue
            for position, judged in zip(found.order, found.verdicts, strict=True):
                o = part.ops[position]
                if not judged.notes:  # nearly every step: nothing to count but the rules it decided
                    early.not_rare(judged.decided, ())
                    answered = StepVerdict.UNKNOWN if _unanswered(steps[o.index].op) else StepVerdict.OK
                    steps[o.index].add(answered, judged.rule_set, judged.decisive_set)
                    continue
                for note in judged.notes:
                    noted.setdefault(note.rule, [])
                    if part not in noted[note.rule]:
                        noted[note.rule].append(part)
                not_rare = early.not_rare(judged.decided, judged.notes)
                repeated += [(o, d, list(noted.get(d.rule, [part]))) for d in not_rare]
                steps[o.index].add(StepVerdict.DIVERGENCE if not_rare else StepVerdict.NOTE if judged.notes else
                                   StepVerdict.UNKNOWN if _unanswered(steps[o.index].op) else StepVerdict.OK,
                                   judged.rule_set, judged.decisive_set, not_rare, judged.notes)
            held += found.held
            receivable += [(part, found.order, r) for r in found.receivable]
            if found.status == "none":
                assert found.failed_at is not None and found.failure is not None
                o, judged = part.ops[found.failed_at], found.failure
                divergence = judged.divergences[0] if judged.divergences else Divergence(
                    judged.rules[:1] or (RCV_INTEGRITY,), "an answer the model can follow", "one it cannot", ())
                violations.append(Violation(part, o, divergence, [part.ops[p] for p in found.order]))
                steps[o.index].add(StepVerdict.DIVERGENCE, judged.rule_set, frozenset((divergence.rule,)),
                                   judged.divergences)
                placed = {part.ops[p].index for p in found.order} | {o.index}
                for other in part.ops:
                    if other.index not in placed:
                        steps[other.index].add(StepVerdict.BEHIND)
    # The sweeps read the steps' verdicts only as BEHIND or UNORDERED, which neither changes: side by side, each
    # finds what it would find after the other
    missed, _ = side_by_side(
        functools.partial(_empty_long_polls, steps, polls, receivable, history.tolerance, history.clock == "virtual",
                          base, decomposed.apart),
        functools.partial(_exclusive_receives, polls, held, history.tolerance), spread=workers > 1)
    for violation in missed:
        steps[violation.op.index].add(StepVerdict.DIVERGENCE, _LONG_POLL, _LONG_POLL, (violation.divergence,))
    return HistoryVerdict(steps, violations + missed, repeated, undecided, decomposed)


def _unanswered(o: HistoryOp) -> bool:
    """As the history has it: a part may hold an answered receive as unanswered (`parts.py`, a redrive's move)."""
    return isinstance(o.response, Unknown)  # as `HistoryOp.settles_by` tells one: it never surely settles


_LONG_POLL = frozenset((RCV_LONG_POLL,))
_NOT_PLACED = frozenset((StepVerdict.BEHIND, StepVerdict.UNORDERED))  # in no order found: no sweep judges it
R = TypeVar("R")  # a record a sweep meets (`_Sweep`)


def _empty_long_polls(steps: list[StepJudgement], polls: list[StepJudgement],
                      receivable: list[tuple[Part, list[int], LeftReceivable]], tolerance: float, virtual: bool,
                      base: Model, apart: set[str]) -> list[Violation]:
    """RCV-LONG-POLL across parts: the empty long polls that missed a message, as violations (their steps are the
    caller's to mark). An empty answer is judged in no message's part (`parts.py`), so a long poll that
    returned nothing while a message waited is judged here: a message of its queue on which nothing acted from
    before the poll looked until after its answer came (every operation of its part before had settled, and the
    next was sent after that answer), and that the poll surely saw receivable, in every state it may be in and in
    every order those operations could take (`_EveryOrder`), had to be returned. On a real clock the poll looks
    throughout its wait: the message had to be there before its answer came, and due, by more than the tolerance,
    before the poll had to answer (the end of its wait, or its answer if that came first). On a virtual clock the
    poll surely looks only as it is sent (its wait may pass in one move of the clock, its own or another client's):
    the message had to be there before the poll was sent, and receivable at that instant; or the poll answered
    before the message was due, and so did not wait for it, though it came due, with nothing acting on it until the
    wait was over, within the wait (the clock alone brings it: a poll that waited saw it). On a FIFO queue a group
    counts as one message (`Model.returned_once_due`: every message of it that may be there due, one surely there),
    and a poll with a ReceiveRequestAttemptId is not judged (a retry may repeat an earlier answer). Nor is a queue
    that no part can speak for (`_unjudged_queues`)."""
    profile = base.profile
    fifo, unjudged = profile.fifo, _unjudged_queues(steps, profile, apart)
    receivable = [entry for entry in receivable if entry[2].queue not in unjudged]
    orders = _EveryOrder(base)
    sweep = _Sweep(receivable, queue_of=lambda entry: entry[2].queue, begins=lambda entry: entry[2].from_wall,
                   wall_end=lambda entry: entry[2].until_wall)
    found: list[Violation] = []
    for step in polls:  # the receives answered, in invoke order
        o = step.op
        assert isinstance(o.op, ReceiveMessage) and isinstance(o.response, ReceiveOk)
        if o.response.messages or not isinstance(o.op.wait_time_seconds, int) or o.op.wait_time_seconds <= 0 \
                or (fifo and o.op.attempt_id) or step.verdict in _NOT_PLACED:
            continue
        records = sweep.of(o.op.queue)
        if records is None:
            continue
        answered = o.settles_by
        looked = o.invoke_wall if virtual else answered  # a message there before this, the poll surely saw
        # one acted on before this poll was sent was acted on before every later one too
        active = records.begun_before(looked, o.invoke_wall)
        missed_it = functools.partial(_missed, o, virtual, tolerance)
        missed = next((entry for entry in active if entry[2].from_wall < looked and answered < entry[2].until_wall
                       and missed_it(entry[2]) and orders.holds(entry[0], entry[2], missed_it)), None)
        if missed is None:
            continue
        part, order, left = missed
        divergence = Divergence((RCV_LONG_POLL,), f"a message of {part.key} returned (receivable from "
                                f"{left.due_from:.3f}, with nothing acting on it)", "empty long poll",
                                (left.message_id,), (ReceiveSome(least=1),))
        # the message's whole part: the operation after the poll, which ended the message's rest, belongs to it
        shown = Part(f"{part.key}, and an empty long poll", sorted([*part.ops, o], key=lambda x: x.index))
        found.append(Violation(shown, o, divergence, [part.ops[p] for p in order[:left.done]],
                               missed_by_long_poll=True))
    return found


class _EveryOrder:
    """Whether what one order of a part's first operations left receivable holds in every order of them that fits
    their answers (`LeftReceivable.one_order`; `search.every_order`, found once per part and count)."""

    def __init__(self, base: Model) -> None:
        self._base = base
        self._ends: dict[tuple[int, int], list[Path] | None] = {}

    def holds(self, part: Part, left: LeftReceivable, judged: Callable[[LeftReceivable], bool]) -> bool:
        """`judged` holds of the message as every order leaves it: each must leave it returned once due (in the
        states that order has it in), and the orders must all be found."""
        if left.one_order:
            return True
        known = (id(part), left.done)
        if known not in self._ends:
            self._ends[known] = every_order(part.ops[:left.done], self._base)
        ends = self._ends[known]
        if not ends:
            return False
        for path in ends:
            found = next((left._replace(message_id=message_id, states=states)
                          for message_id, _, states in path.model.returned_once_due()
                          if path.rest_key(message_id) == left.key), None)
            if found is None or not judged(found):
                return False
        return True


def _unjudged_queues(steps: list[StepJudgement], profile: Profile, apart: set[str]) -> set[str]:
    """The queues where what one part left receivable does not decide an empty long poll: one sent as many messages
    as a queue may hold in flight (INFLIGHT-QUOTA: a long poll then returns nothing more, and the count is the
    queue's, which no part sees); and on FIFO queues, one with a message in a part of its own (`Decomposed.apart`),
    apart from its group's, whose part cannot tell whether it holds the group."""
    sends = Counter(s.op.op.queue for s in steps
                    if isinstance(s.op.op, SendMessage) and not isinstance(s.op.response, Error))
    unjudged = {queue for queue, count in sends.items() if count >= profile.inflight_quota}
    return unjudged | apart if profile.fifo else unjudged


def _missed(o: HistoryOp, virtual: bool, tolerance: float, left: LeftReceivable) -> bool:
    """The empty long poll `o` missed the message left receivable so."""
    assert isinstance(o.op, ReceiveMessage) and isinstance(o.op.wait_time_seconds, int)
    wait_ends = o.invoke + o.op.wait_time_seconds
    if virtual:
        return _missed_on_a_virtual_clock(o, left, wait_ends, tolerance)
    return left.due_before(min(o.complete, wait_ends), tolerance)  # before the poll had to answer


def _missed_on_a_virtual_clock(o: HistoryOp, left: LeftReceivable, wait_ends: float, tolerance: float) -> bool:
    """An empty long poll on a virtual clock missed the message: receivable as it was sent; or due only after its
    answer and surely before its wait ended, with nothing acting on it until then (each by more than a virtual
    clock's answers may lag, `LONG_POLL_SLACK`)."""
    return left.surely_due(o.invoke, tolerance) or (
        left.due_only_after(o.complete + LONG_POLL_SLACK, tolerance)
        and left.due_before(wait_ends - LONG_POLL_SLACK, tolerance) and left.until > wait_ends)


_EXCLUSIVE = frozenset((RCV_EXCLUSIVE,))


def _exclusive_receives(polls: list[StepJudgement], held: list[Held], tolerance: float) -> None:
    """RCV-EXCLUSIVE is decided by a receive of one client made wholly while another client surely held a message
    of the same queue (from its receive's answer to the next operation on it, and before its deadline by more than
    the tolerance): breaking the rule would have returned that message. (A receive that did return it is judged
    in the message's part.)"""
    sweep = _Sweep(held, queue_of=lambda h: h.queue, begins=lambda h: h.from_wall, wall_end=lambda h: h.until_wall,
                   clock_end=lambda h: h.deadline)
    for step in polls:  # answered, in invoke order: a receipt held before one receive may still be held at the next
        o = step.op
        assert isinstance(o.op, ReceiveMessage)
        records = sweep.of(o.op.queue)
        if records is None or step.verdict in _NOT_PLACED:
            continue
        # let go before this one, or its deadline passed before this one was sent (then before every later one's:
        # the target's clock only moves forward in invoke order)
        active = records.begun_before(o.invoke_wall, o.invoke_wall, o.invoke + tolerance)
        client, answered, ends = o.client, o.settles_by, o.complete + tolerance
        if any(answered < h.until_wall and ends < h.deadline and held_by_another(client, (h.client,))
               for h in active):
            step.add(step.verdict, _EXCLUSIVE, _EXCLUSIVE)


class _Sweep(Generic[R]):
    """Records of a history that begin at a wall instant and are let go at another (receipts held, messages left
    receivable), some also at an instant of the target's clock (a receipt's deadline), met by one queue's receives
    in the order they were sent: per queue, the ones begun so far and not yet let go. One let go before a receive
    is let go for every later one too: each is dropped once, as its end comes (a heap per clock), not weighed again
    at every receive."""

    def __init__(self, records: list[R], queue_of: Callable[[R], str], begins: Callable[[R], float],
                 wall_end: Callable[[R], float], clock_end: Callable[[R], float] | None = None) -> None:
        self._queues: dict[str, _QueueSweep[R]] = {}
        for record in sorted(records, key=begins):
            queue = queue_of(record)
            if queue not in self._queues:
                self._queues[queue] = _QueueSweep()
            self._queues[queue].waiting.append(
                (begins(record), wall_end(record), clock_end(record) if clock_end else math.inf, record))

    def of(self, queue: str) -> _QueueSweep[R] | None:
        """The queue's records, or None where it has none."""
        return self._queues.get(queue)


class _QueueSweep(Generic[R]):
    """One queue's records in a sweep (`_Sweep`)."""

    __slots__ = ("waiting", "taken", "active", "wall_ends", "clock_ends")

    def __init__(self) -> None:
        self.waiting: list[tuple[float, float, float, R]] = []  # (begins, wall end, clock end, record), in begin order
        self.taken = 0  # how many of them the sweep has reached
        self.active: dict[int, R] = {}  # those begun and not let go, by their place in begin order
        self.wall_ends: list[tuple[float, int]] = []  # heaps of (end, place)
        self.clock_ends: list[tuple[float, int]] = []

    def begun_before(self, instant: float, let_go_by: float, clock_let_go_by: float = -math.inf) -> Iterable[R]:
        """The records begun before `instant`, less those let go by the wall instant `let_go_by` (their wall end not
        after it) or by `clock_let_go_by` on the target's clock, in the order they began."""
        waiting, taken, active = self.waiting, self.taken, self.active
        while taken < len(waiting) and waiting[taken][0] < instant:
            _, wall_end, clock_end, record = waiting[taken]
            active[taken] = record
            heapq.heappush(self.wall_ends, (wall_end, taken))
            if clock_end != math.inf:
                heapq.heappush(self.clock_ends, (clock_end, taken))
            taken += 1
        self.taken = taken
        wall_ends, clock_ends = self.wall_ends, self.clock_ends
        while wall_ends and wall_ends[0][0] <= let_go_by:
            active.pop(heapq.heappop(wall_ends)[1], None)
        while clock_ends and clock_ends[0][0] <= clock_let_go_by:
            active.pop(heapq.heappop(clock_ends)[1], None)
        return active.values()
