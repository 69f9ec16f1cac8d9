"""Hypothesis stateful machines: the same operations to a target and to the model, every answer judged.

Generation aims at the edges the model exposes: time advances to each deadline, ceiling and release (±1 ms,
±1 s), change timeouts at the room left under the 12-hour ceiling and either side of it, handles that are
current, stale, expired, deleted or garbage, out-of-range values, batches valid and invalid.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import ClassVar
from collections.abc import Callable, Iterable, Iterator

from hypothesis import reject, settings, strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test,
)

from sqs_conformance.adapters.base import Target, Unsupported
from sqs_conformance.conformance.hypothesis_hooks import QuickDraws, is_final_replay
from sqs_conformance.conformance.minimal import MinimalCases
from sqs_conformance.conformance.redelivery import EarlyReturns
from sqs_conformance.conformance.session import Session, Step, Tallies, stop_if_due
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.conformance.translate import GARBAGE_HANDLES
from sqs_conformance.model import Divergence
from sqs_conformance.model.profiles import PROFILES, Profile
from sqs_conformance.model.rules import (
    FIFO_STALE_OTHER, INFLIGHT_QUOTA, RCV_EXCLUSIVE, RCV_INTEGRITY, RCV_OVERRIDE, RCV_REAPPEAR, VIS_CEILING,
)
from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteEntry, DeleteMessage,
    DeleteMessageBatch, GetQueueAttributes, Ok, PeekMessage, PurgeQueue, ReceiveMessage, ReceiveOk, SendMessage,
    SetQueueAttributes,
)

MAIN, DEAD_LETTER = "q", "dlq"
SIDE = "side"  # a queue made only to try CreateQueue's ranges at and past their edges
TIMEOUTS = (0, 1, 2, 5, 5, 30, 30, 60, 600, 43200, 43201, -1)
FIXED_ADVANCES = (0.001, 0.5, 1, 5, 30, 61, 300, 3600, 20_000)
# Under a real clock every wait is slept: short timeouts, short waits (the ceiling is still reached, by values
# close to 43200 minus the time elapsed, never by waiting).
REAL_TIMEOUTS = (0, 1, 1, 2, 3, 5, 43200, 43201, -1)
REAL_ADVANCES = (0.001, 0.5, 1, 2, 3, 5)
REAL_MAX_WAIT = 6.0  # seconds: a longer advance is skipped under a real clock
# Past an edge before exactly at it: Hypothesis shrinks towards the first, and at the very instant of a deadline
# the model permits either answer, so a witness there would show nothing.
EDGE_OFFSETS = (-1, -0.001, 0.001, 0, 1)
# Around the 12-hour ceiling: the room left exactly, one second either side, and far enough either side to stay
# decisive where the target is judged with a tolerance band and request windows (the model permits either answer
# within a second of the ceiling, docs/evidence.md's hedge, plus the band).
CEILING_OFFSETS = (-1, 0, 1, -3, 3)


Draws = st.DataObject | QuickDraws


def drawing(function: Callable) -> Callable:
    """A rule or set-up step taking a case's `data`, its draws made quickly (conformance/hypothesis_hooks.py) but on
    the replay Hypothesis prints, which labels them."""
    @functools.wraps(function)
    def with_draws(self: VisibilityMachine, data: st.DataObject):
        return function(self, data if self.session.final else QuickDraws(data))
    return with_draws


def drawing_rule(function: Callable) -> Callable:
    """`@rule(data=st.data())`, drawn as `drawing` draws."""
    return rule(data=st.data())(drawing(function))


OFFERED_WHEN = "visibility_offered_when"  # a rule's test of the profile, read by build_machine


def offered_when(applies: Callable[[Profile], bool]) -> Callable[[Callable], Callable]:
    """Above a rule: it runs only where the run's profile has what it needs (`applies(profile)`). A machine leaves
    out the rules its profile never offers (`build_machine`): Hypothesis would draw them at every step only to
    refuse them, a draw each, and walk every rule once all its tries are refused. The precondition stays, should a
    machine be built otherwise."""
    def mark(function: Callable) -> Callable:
        guarded = precondition(lambda self: applies(self.profile))(function)
        setattr(guarded, OFFERED_WHEN, applies)
        return guarded
    return mark


# Strategies drawn from at many steps, built once (see `pick`).
COIN, ONE_IN_TEN, ONE_TO_THREE = st.booleans(), st.integers(0, 9), st.integers(1, 3)
_PICKS: dict[tuple, st.SearchStrategy] = {}
_PICKS_KEPT = 4096  # distinct value lists remembered (a case's handles make new ones; the fixed ones recur)


def pick(data: Draws, values: Iterable, label: str):
    """One of `values`, drawn as `st.sampled_from(values)` draws it: the same choice, and so the same search. The
    strategy is built once per distinct list of values, since building and validating one costs more than drawing
    from it (benchmarks/throughput.py). Keyed by each value's type too: 1, 1.0 and True are equal in a dict."""
    values = tuple(values)
    key = tuple((type(v), v) for v in values)
    try:
        strategy = _PICKS.get(key)
    except TypeError:  # a value that cannot be a key: built each time
        return data.draw(st.sampled_from(values), label=label)
    if strategy is None:
        if len(_PICKS) >= _PICKS_KEPT:
            _PICKS.clear()
        strategy = _PICKS[key] = st.sampled_from(values)
    return data.draw(strategy, label=label)


class DivergenceFound(AssertionError):
    """A target answer the model does not permit. One subclass per rule id, so that Hypothesis shrinks and
    reports each rule's divergence separately."""

    def __init__(self, divergence: Divergence, session: Session) -> None:
        super().__init__(f"{divergence.rule}: expected {divergence.expected}; observed {divergence.observed}")
        self.divergence = divergence
        self.steps = list(session.steps)
        self.tolerated = sorted({d.rule for s in session.steps[:-1] for d in s.divergences})


_BY_RULE: dict[str, type[DivergenceFound]] = {}


def divergence_class(rule_id: str) -> type[DivergenceFound]:
    if rule_id not in _BY_RULE:
        _BY_RULE[rule_id] = type(f"Diverges_{rule_id.replace('-', '_')}", (DivergenceFound,), {})
    return _BY_RULE[rule_id]


@dataclass
class Run:
    """What the machines of one run share: the target, the rules already found, tallies and the trace."""

    target: Target
    profile: str
    run_id: str
    trace: TraceWriter | None = None
    tolerated: set[str] = field(default_factory=set)  # every rule found so far (concurrent jobs share it)
    # What this round's cases tolerate: `tolerated` as the round began. A rule another job finds mid-round must
    # not change how this round's failing cases replay.
    known: frozenset[str] = frozenset()
    tallies: Tallies = field(default_factory=Tallies)
    cases: int = 0
    steps: int = 0
    on_case: Callable[[Run], None] | None = None
    max_wait: float = REAL_MAX_WAIT
    # The clock the cases are generated for, if not the target's: witnesses for a real clock are searched on the
    # model's virtual one (see conformance/witnesses/judged.py).
    pace: str | None = None
    # The shortest case seen so far for each diverging rule: reported if Hypothesis' replay of a failing case
    # goes otherwise (as it may under a real clock).
    seen: dict[str, DivergenceFound] = field(default_factory=dict)
    case_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))  # shared by concurrent jobs
    # Early returns across the run's cases (shared by its jobs and its witnesses), and whether a case of this
    # round has failed: Hypothesis then shrinks it, replaying it many times, so later cases of the round are not
    # counted (one rare early return would count again in each replay).
    early: EarlyReturns = field(default_factory=EarlyReturns)
    round_failed: bool = False
    deadline: float | None = None  # time.monotonic() past which no step starts (conformance.session.BudgetSpent)
    budget_spent: bool = False  # a round ended at the deadline
    failed_at: float | None = None  # time.monotonic() of this round's first failure: shrinking starts
    shrinking: float = 0.0  # seconds of the run's rounds after their first failure
    minimal: MinimalCases | None = None  # the run's minimal case of each rule (conformance/minimal.py)

    @property
    def clock_kind(self) -> str:
        return self.pace or self.target.clock.kind

    def new_session(self) -> Session:
        stop_if_due(self.deadline)  # before the reset's requests, not only at the case's first step
        self.target.reset()
        self.cases += 1
        if self.on_case is not None:
            self.on_case(self)
        return Session(self.target, self.profile, run_id=self.run_id, case=next(self.case_ids), trace=self.trace,
                       tallies=self.tallies, max_wait=self.max_wait if self.clock_kind == "real" else math.inf,
                       early=self.early.case(counted=not self.round_failed), deadline=self.deadline,
                       minimal=self.minimal)


class VisibilityMachine(RuleBasedStateMachine):
    """The machine of every run: `build_machine` binds it to a run (its target, profile, clock and shared state)."""

    run: ClassVar[Run]

    @property
    def profile(self) -> Profile:
        return PROFILES[self.run.profile]

    @property
    def real(self) -> bool:  # every wait is slept
        return self.run.clock_kind == "real"

    @property
    def polls_take_time(self) -> bool:  # a long poll lasts real seconds even under libfaketime
        return self.run.clock_kind != "virtual"

    @property
    def timeouts(self) -> tuple[int, ...]:
        return REAL_TIMEOUTS if self.real else TIMEOUTS

    @property
    def advances(self) -> tuple[float, ...]:
        return REAL_ADVANCES if self.real else FIXED_ADVANCES

    def __init__(self) -> None:
        super().__init__()
        self.session = self.run.new_session()
        self.session.final = is_final_replay()
        self.handles: list[str] = []
        self.last_receive: list[str] = []  # the handles the latest non-empty receive returned
        self.queues = [MAIN]
        self.base: dict[str, object] = {}  # the attributes every queue of the case is made with (FIFO's)
        self.side_made = False
        self.sent = 0
        self.attempted: ReceiveMessage | None = None  # the latest FIFO receive made with an attempt id
        self.last_sent: SendMessage | None = None  # the latest FIFO send with a deduplication id

    # --- doing and judging ----------------------------------------------------------------------------

    def do(self, op) -> Step:
        try:
            step = self.session.execute(op)
        except Unsupported:
            return None  # type: ignore[return-value]
        self.run.steps += 1
        for divergence in step.reported:
            if divergence.rule not in self.run.known:
                self.fail(divergence)
        if step.ends_case:  # a known rule diverged this way: anything later would be a consequence
            reject()
        response = step.verdict.outcome.response
        if isinstance(response, ReceiveOk) and response.messages:
            self.last_receive = [m.receipt_handle for m in response.messages if m.receipt_handle]
            self.handles += self.last_receive
        return step

    def fail(self, divergence: Divergence) -> None:
        if not self.run.round_failed:
            self.run.failed_at = time.monotonic()
        self.run.round_failed = True
        found = divergence_class(divergence.rule)(divergence, self.session)
        earlier = self.run.seen.get(divergence.rule)
        if earlier is None or len(found.steps) < len(earlier.steps):
            self.run.seen[divergence.rule] = found
        raise found

    @property
    def model(self):
        return self.session.model

    def pick_handle(self, data: Draws) -> str:
        if not self.handles or data.draw(ONE_IN_TEN, label="garbage?") == 0:
            # a message id is no receipt handle either (the suite sends the target's id for it)
            ids = list(self.model.messages)[:1]
            return pick(data, GARBAGE_HANDLES + tuple(ids), "handle")
        recent = self.handles[-6:]
        return pick(data, recent[::-1], "handle")

    def room_under_ceiling(self, handle: str) -> float | None:
        """Seconds from now to the 12-hour ceiling of the receive that issued `handle`; None for a handle the
        model never issued."""
        info = self.model.handles.get(handle)
        return None if info is None else info.received_at + 43200 - self.session.now

    def pick_timeout(self, data: Draws, handle: str) -> int:
        """A fixed value, or one aimed at the handle's 12-hour ceiling: the room left, and either side of it."""
        choices = list(self.timeouts)
        room = self.room_under_ceiling(handle)
        if room is not None and room > 3 and VIS_CEILING in self.model.profile.rule_ids:
            choices += [math.floor(room) + offset for offset in CEILING_OFFSETS]
        return pick(data, choices, "timeout")

    # --- setting up -------------------------------------------------------------------------------------

    @initialize(data=st.data())
    @drawing
    def create_queues(self, data):
        visibility = pick(data, [self.profile.visibility_min, 1, 2, 5] if self.real else
                          [None, self.profile.visibility_min, 5, 30, 3600], "visibility")
        redrive = pick(data, [None, 1, 2, 3] if self.profile.has_redrive else [None], "redrive")
        delay = pick(data, [None, 0, 5] if self.profile.has_delay else [None], "delay")
        dedup = data.draw(COIN, label="content-based dedup")
        # a queue's own long-poll wait, in effect for every receive that names none
        wait = pick(data, [None, None, None, 1] if self.profile.has_long_poll else [None], "wait")
        base: dict[str, object] = {}
        if self.profile.fifo:
            base = {"FifoQueue": "true", "ContentBasedDeduplication": str(dedup).lower()}
        self.base = dict(base)
        attributes = dict(base)
        if visibility is not None:
            attributes["VisibilityTimeout"] = visibility
        if delay is not None:
            attributes["DelaySeconds"] = delay
        if wait is not None:
            attributes["ReceiveMessageWaitTimeSeconds"] = wait
        # A target without some queue feature (an in-house queue without redrive, say) answers such a
        # creation `Unsupported`: the case is not one it can be checked on.
        if redrive is not None:
            if self.do(CreateQueue(DEAD_LETTER, dict(base))) is None:
                reject()
            attributes["RedrivePolicy"] = {"deadLetterTargetQueue": DEAD_LETTER, "maxReceiveCount": redrive}
            self.queues.append(DEAD_LETTER)
        if self.do(CreateQueue(MAIN, attributes)) is None:
            reject()

    # --- messages ------------------------------------------------------------------------------------

    @drawing_rule
    def send(self, data):
        self.sent += 1
        body = f"m{self.sent}"
        if self.profile.fifo:
            dedup = pick(data, [None, None, "d1", "d2"], "dedup id")
            if dedup is None and not self.model.queues[MAIN].content_based_dedup:
                dedup = f"u{self.sent}"
            fault = pick(data, [None] * 8 + ["no group", "delay"], "send fault")
            group = None if fault == "no group" else pick(data, ["g1", "g1", "g2"], "group")
            op = SendMessage(MAIN, body, group_id=group, dedup_id=dedup, delay_seconds=5 if fault == "delay" else None)
            self.last_sent = op if dedup is not None and fault is None else self.last_sent
            self.do(op)
        elif self.profile.has_delay:
            delay = pick(data, [None, None, 0, 1, 10, 901, -1, 900], "delay")
            self.do(SendMessage(MAIN, body, delay_seconds=delay))
        else:
            self.do(SendMessage(MAIN, body))

    def send_plain(self, group: str | None = None) -> None:
        """A message with nothing but a body (and a dedup id of its own on FIFO): what every queue accepts."""
        self.sent += 1
        dedup = f"u{self.sent}" if self.profile.fifo else None
        op = SendMessage(MAIN, f"m{self.sent}", group_id=group, dedup_id=dedup)
        self.last_sent = op if dedup is not None else self.last_sent
        self.do(op)

    @offered_when(lambda profile: profile.fifo)
    @drawing_rule
    def send_in_order(self, data):  # FIFO: a producer's ordered run in one group, what locks and prefixes act on
        for _ in range(pick(data, [2, 3], "in order")):
            self.send_plain("g1")

    @offered_when(lambda profile: profile.validates_receive_params)
    @rule()
    def receive_fewer_than_sent(self):  # where MaxNumberOfMessages bites: more receivable than asked for
        for group in ("g1", "g2") if self.profile.fifo else (None, None):
            self.send_plain(group)
        self.do(ReceiveMessage(MAIN, max_messages=1))

    @drawing_rule
    def receive(self, data):
        queue = pick(data, self.queues + [MAIN, MAIN], "queue")
        kw = {}
        if self.profile.validates_receive_params:
            kw["max_messages"] = pick(data, [10] * 6 + [None, 1, 2, 0, 11, -1], "max")
        if RCV_OVERRIDE in self.profile.rule_ids:
            kw["visibility_timeout"] = pick(data, (None,) * 12 + self.timeouts, "override")
        if self.profile.has_long_poll:
            waits = [1] * 6 + ([2, 3, 0, None, 21, -1] if self.polls_take_time else [5, 20, 0, None, 21, -1])
            kw["wait_time_seconds"] = pick(data, waits, "wait")
        if self.profile.fifo:
            kw["attempt_id"] = pick(data, [None, None, "a1", "a2"], "attempt id")
        op = ReceiveMessage(queue, **kw)
        if op.attempt_id:
            self.attempted = op
        self.do(op)

    @offered_when(lambda profile: profile.fifo)  # only a FIFO receive is made with an attempt id
    @precondition(lambda self: self.attempted is not None)
    @rule()
    def retry_receive(self):  # FIFO: a client retrying a receive whose answer it lost, same attempt id
        self.do(self.attempted)

    @offered_when(lambda profile: profile.fifo)
    @precondition(lambda self: self.last_sent is not None)
    @rule()
    def retry_send(self):  # FIFO: a producer retrying its latest send, same deduplication id: then or much later
        self.do(self.last_sent)

    @drawing_rule
    def receive_again(self, data):  # receives drive everything else: give them twice the weight
        self.receive(data)

    @drawing_rule
    def change(self, data):
        handle = self.pick_handle(data)
        self.do(ChangeMessageVisibility(MAIN, handle, self.pick_timeout(data, handle)))

    @precondition(lambda self: self.handles)
    @drawing_rule
    def change_latest(self, data):  # a current receipt: the path most rules sit on
        handle = pick(data, self.handles[-3:][::-1], "recent handle")
        self.do(ChangeMessageVisibility(MAIN, handle, self.pick_timeout(data, handle)))

    @precondition(lambda self: self.handles)
    @drawing_rule
    def change_at_ceiling(self, data):  # the room left under the 12-hour ceiling, and either side of it
        handle = self.handles[-1]
        room = self.room_under_ceiling(handle)
        room = 43200 if room is None else room
        offset = pick(data, CEILING_OFFSETS, "past the room")
        self.do(ChangeMessageVisibility(MAIN, handle, max(0, math.floor(room)) + offset))

    @precondition(lambda self: self.handles)
    @drawing_rule
    def heartbeat(self, data):  # seed 002: keep extending while working, then try past the 12-hour ceiling
        handle = self.handles[-1]
        for _ in range(data.draw(ONE_TO_THREE, label="beats")):
            deadlines = [r.deadline for r in self.model.receipts(MAIN, self.session.now) if r.handle == handle]
            if not deadlines:
                break
            self.session.advance(round(max(0.0, deadlines[0] - self.session.now) / 2, 6))  # beat halfway
            self.do(ChangeMessageVisibility(MAIN, handle, 120))
        if data.draw(COIN, label="then past the ceiling?"):
            self.change_at_ceiling(data)

    def deadline_of(self, handle: str) -> float | None:
        deadlines = [r.deadline for q in self.queues for r in self.model.receipts(q, self.session.now)
                     if r.handle == handle]
        return max(deadlines) if deadlines else None

    def pass_deadline_and_receive(self, handle: str, data) -> None:
        deadline = self.deadline_of(handle)
        if deadline is not None:
            self.session.advance(round(deadline - self.session.now + 0.001, 6))
        self.do(ReceiveMessage(pick(data, self.queues, "queue"), **self.plain_receive()))

    def plain_receive(self) -> dict:
        kw = {"max_messages": 10} if self.profile.validates_receive_params else {}
        return kw | ({"wait_time_seconds": 1} if self.profile.has_long_poll else {})

    @precondition(lambda self: self.handles)
    @drawing_rule
    def redeliver(self, data):  # maybe change the latest receipt, let its deadline pass, receive again
        handle = self.handles[-1]
        if data.draw(COIN, label="change it first?"):
            self.do(ChangeMessageVisibility(MAIN, handle, pick(data, [0, 1, 5, 60], "to")))
        self.pass_deadline_and_receive(handle, data)

    @precondition(lambda self: len(self.last_receive) > 1)
    @drawing_rule
    def split_joint_receive(self, data):  # keep one of several messages received together hidden
        # Hiding one with others behind it is what shows a FIFO group's visible prefix stop at it.
        kept = pick(data, self.last_receive[1:], "kept hidden")
        self.do(ChangeMessageVisibility(MAIN, kept, 600))
        self.pass_deadline_and_receive(self.last_receive[0], data)

    @precondition(lambda self: len(self.handles) > 1)
    @drawing_rule
    def change_stale(self, data):
        handle = pick(data, self.handles[:-1], "older handle")
        self.do(ChangeMessageVisibility(MAIN, handle, pick(data, self.timeouts, "timeout")))

    @drawing_rule
    def delete(self, data):
        self.do(DeleteMessage(MAIN, self.pick_handle(data)))

    @precondition(lambda self: len(self.handles) > 1)
    @drawing_rule
    def delete_stale(self, data):  # a handle from an earlier receive of a message received since
        self.do(DeleteMessage(MAIN, pick(data, self.handles[:-1], "older handle")))

    @offered_when(lambda profile: profile.has_batches)
    @drawing_rule
    def change_batch(self, data):
        entries = [ChangeEntry(i, h, self.pick_timeout(data, h)) for i, h in self.batch(data)]
        self.do(ChangeMessageVisibilityBatch(MAIN, tuple(entries)))

    @offered_when(lambda profile: profile.has_batches)
    @drawing_rule
    def delete_batch(self, data):
        self.do(DeleteMessageBatch(MAIN, tuple(DeleteEntry(i, h) for i, h in self.batch(data))))

    def batch(self, data) -> list[tuple[str, str]]:
        size = pick(data, [1, 2, 2, 3, 0, 11, 10], "entries")  # both edges of 1..10
        ids = [f"e{i}" for i in range(size)]
        fault = pick(data, [None] * 4 + ["bad id", "same id"], "id fault")
        if ids and fault == "bad id":
            ids[0] = "bad id!"
        elif len(ids) > 1 and fault == "same id":
            ids[1] = ids[0]
        return [(i, self.pick_handle(data)) for i in ids]

    # --- time ----------------------------------------------------------------------------------------------

    @drawing_rule
    def advance(self, data):
        now = self.session.now
        edges = [t for q in self.queues for t in self.model.edges(q, now)]
        if edges and data.draw(COIN, label="aim at an edge?"):
            edge = pick(data, sorted(set(edges))[:6], "edge")
            seconds = max(0.0, edge + pick(data, EDGE_OFFSETS, "offset") - now)
        else:
            seconds = pick(data, self.advances, "seconds")
        self.session.advance(round(seconds, 6))

    @precondition(lambda self: self.sent > 0)
    @drawing_rule
    def let_messages_wait(self, data):  # time spent in the queue before a first receive must not count
        waits = [1.5] if self.real else [1.5, 100, 5000]
        self.session.advance(pick(data, waits, "wait in queue"))

    @precondition(lambda self: self.handles)
    @drawing_rule
    def advance_to_edge(self, data):
        now = self.session.now
        edges = [t for q in self.queues for t in self.model.edges(q, now)]
        if edges:
            edge = pick(data, sorted(set(edges))[:4], "edge")
            offset = pick(data, EDGE_OFFSETS, "offset")
            self.session.advance(round(max(0.0, edge + offset - now), 6))

    # --- the queue -------------------------------------------------------------------------------------------

    def ranged_attributes(self) -> list[tuple[str, tuple[int, ...]]]:
        """The queue attributes with a range, each with values inside it, at its edges and past them."""
        attributes: list[tuple[str, tuple[int, ...]]] = [("VisibilityTimeout", (0, 1, 5, 30, 60, 43200, 43201, -1))]
        attributes += [("DelaySeconds", (0, 5, 901))] if self.profile.has_delay else []
        attributes += [("ReceiveMessageWaitTimeSeconds", (0, 2, 21))] if self.profile.has_long_poll else []
        return attributes

    @drawing_rule
    def set_attributes(self, data):
        name, values = pick(data, self.ranged_attributes(), "attribute")
        self.do(SetQueueAttributes(MAIN, {name: pick(data, values, "value")}))

    @precondition(lambda self: not self.side_made)
    @drawing_rule
    def create_at_an_edge(self, data):
        """CreateQueue checks the ranges SetQueueAttributes does: a queue of its own made with a value at or past
        an edge (the main queue is made with values inside them only)."""
        name, values = pick(data, self.ranged_attributes(), "attribute")
        step = self.do(CreateQueue(SIDE, {**self.base, name: pick(data, values, "value")}))
        self.side_made = step is not None and isinstance(step.verdict.outcome.response, Ok)

    @precondition(lambda self: self.handles)
    @drawing_rule
    def retime_in_flight(self, data):  # a new queue timeout while a message is in flight, then a receive
        timeout = pick(data, (0, 1, 5, 60), "queue timeout")
        self.do(SetQueueAttributes(MAIN, {"VisibilityTimeout": timeout}))
        self.do(ReceiveMessage(MAIN, **self.plain_receive()))

    @rule()
    def get_attributes(self):
        self.do(GetQueueAttributes(MAIN))

    @offered_when(lambda profile: profile.has_purge)
    @precondition(lambda self: self.sent > 0)
    @rule()
    def purge(self):
        self.do(PurgeQueue(MAIN))

    @offered_when(lambda profile: profile.has_peek)
    @drawing_rule
    def peek(self, data):
        self.do(PeekMessage(MAIN, pick(data, [1, 10], "max")))

    @offered_when(lambda profile: profile.lock_unreceived)
    @precondition(lambda self: self.sent > 0)
    @drawing_rule
    def lock_unreceived(self, data):  # sqs-2008: a change on a message never received locks it
        message_id = pick(data, sorted(self.model.messages), "message")
        self.do(ChangeMessageVisibility(MAIN, message_id, pick(data, self.timeouts, "lock")))


def build_machine(run: Run) -> type[VisibilityMachine]:
    """The machine bound to `run`: a subclass per run, since Hypothesis builds each machine from its class. The
    rules its profile never offers are left out (`offered_when`)."""
    profile = PROFILES[run.profile]
    left_out = {name: None for name, member in vars(VisibilityMachine).items()
                if not getattr(member, OFFERED_WHEN, lambda _: True)(profile)}
    return type(f"VisibilityMachine_{run.profile.replace('-', '_')}", (VisibilityMachine,), {"run": run, **left_out})


def run_machine(machine: type[VisibilityMachine], config: settings) -> None:
    """Hypothesis runs `machine` as a test, then the machine lets go of its run. Hypothesis keeps every machine
    class it has run for the life of the process (its set-up state per class), and a class built by
    `build_machine` holds its run: the target (moto's whole state, say), the trace, the findings. A process running
    run after run (a team's tests through the pytest plugin) kept each of them, and its cycle collector walked them
    all. A machine is so run once: each round builds its own (`build_machine`)."""
    try:
        run_state_machine_as_test(machine, settings=config)
    finally:
        for cls in machine.__mro__:
            if "run" in vars(cls):
                delattr(cls, "run")


# Rules no generated sequence can reach, and why (a rule missing here and never exercised is a generator bug).
NOT_GENERATED = {
    INFLIGHT_QUOTA: "needs about 120,000 messages in flight",
    RCV_INTEGRITY: "judged on every returned message; it has no outcome of its own to aim at",
    # Rules among consumers: a single client's case has one consumer (run --clients N decides them)
    RCV_EXCLUSIVE: "needs two consumers: run --clients N",
    FIFO_STALE_OTHER: "needs two consumers: run --clients N",
}


def unreachable(profile: str) -> dict[str, str]:
    """The rules no step can decide under a profile, and why: those not generated, and RCV-REAPPEAR where every
    receive is a short poll (a short poll may leave out any visible message, so none shows one never returned)."""
    reasons = dict(NOT_GENERATED)
    if not PROFILES[profile].has_long_poll:
        reasons[RCV_REAPPEAR] = ("every receive of this profile is a short poll, which may leave out any visible "
                                 "message: none can show a message that never comes back")
    return reasons
