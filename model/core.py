"""The reference model: pure, deterministic, time passed in by the caller (seconds, float).

    model = Model("sqs-standard")
    response, outcome = model.step(op, now)          # the model as a queue: its canonical outcome
    verdict = model.observe(op, now, observed)       # the model as a checker: narrow by what a target did
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass, replace
from operator import attrgetter
from typing import Any

from sqs_conformance.model import errors
from sqs_conformance.model.batches import change_batch, delete_batch
from sqs_conformance.model.fast_receive import judged_at_once
from sqs_conformance.model.handles import delete_message
from sqs_conformance.model.receive import expect_receive
from sqs_conformance.model.outcomes import (
    BatchExpectation, Effects, Enumerated, Expectation, Outcome, Verdict, concrete, copied, union,
)
from sqs_conformance.model.profiles import Profile, get_profile
from sqs_conformance.model.queue_ops import create_queue, get_attributes, peek, purge, send_message, set_attributes
from sqs_conformance.model.settled import NOTHING_HIDDEN, NOTHING_SETTLED, Settled, SurelyHidden
from sqs_conformance.model.state import (
    EXACT, GONE_NO, HIDDEN_DELAY, HIDDEN_LOCK, HIDDEN_RECEIPT, HandleInfo, Message, MessageState, Queue, Redrive,
    Timing,
)
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.validation import edge_situations, is_int_in
from sqs_conformance.model.values import (
    ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage, DeleteMessageBatch, ErrorSpec,
    GetQueueAttributes, Operation, PeekMessage, PurgeQueue, ReceiveMessage, Response, SendMessage, SetQueueAttributes,
    Unknown,
)
from sqs_conformance.model.visibility import change_visibility


@dataclass(frozen=True)
class ReceiptView:
    """What a test generator needs to aim at the edges of one in-flight receipt."""

    handle: str
    message_id: str
    deadline: float
    ceiling: float | None


# Messages from which a queue's index pays for its upkeep: below, reading every message costs less. Checking
# benchmarks/model_ops.py's workload, its queue held to at most N messages, with an index from the first message and
# with none (us an operation, the model compiled): sqs-standard at 24 31.0 and 26.2, at 60 45.5 and 43.1, at 72 48.0
# and 48.9, at 80 48.5 and 50.4; sqs-fifo at 32 53.3 and 42.1, at 64 65.9 and 62.8, at 80 66.8 and 75.7. The crossing
# moves as a step's cost does: it was near 28 (standard) and 32 (FIFO) before the walk without an index got cheaper.
INDEX_FROM = 64


class Model:
    def __init__(self, profile: Profile | str, timing: Timing = EXACT, indexed: bool = True,
                 index_from: int | None = None, fast: bool = True) -> None:
        """`indexed=False` has every receive look at every message (the reference the index is tested against).
        A queue is indexed once it holds `index_from` messages (None: INDEX_FROM). `fast=False` judges every
        answer in full, never at once (the reference the fast path is tested against)."""
        self.fast = fast
        self.answers_judged_at_once = 0  # answers the fast path judged (model/fast_receive.py)
        self.profile = profile if isinstance(profile, Profile) else get_profile(profile)
        self.timing = timing
        self.queues: dict[str, Queue] = {}
        self.messages: dict[str, Message] = {}
        self._settled: dict[str, Settled] | None = {} if indexed else None
        self._index_from = INDEX_FROM if index_from is None else index_from
        self.handles: dict[str, HandleInfo] = {}
        self._next_message = 0
        self._next_handle = 0
        self._next_seq = 0

    # --- the two ways to use the model -----------------------------------------------------------------

    def step(self, op: Operation, now: float) -> tuple[Response, Outcome]:
        outcome = self.expect(op, now).canonical().in_situations(edge_situations(op, self.profile))
        self.commit(outcome)
        return concrete(outcome.response), outcome

    def observe(self, op: Operation, now: float, observed: Response, completed_at: float | None = None) -> Verdict:
        """Judge a target's answer. `completed_at` is when the target answered, if later than `now`. Under exact
        timing that matters to a long poll only (judged as of the answer); under windowed timing the operation took
        effect somewhere in [now, completed_at]. An `Unknown` answer keeps both possibilities."""
        # The common case's verdict built directly (model/fast_receive.py), or None: `expect` judges it
        verdict = judged_at_once(self, op, now, self._late(now, completed_at), observed) \
            if self.fast and type(op) is ReceiveMessage else None
        if verdict is not None:
            self.answers_judged_at_once += 1
            verdict.outcome.add_situations(edge_situations(op, self.profile))  # made for this answer alone
            self.commit(verdict.outcome)
            return verdict
        expectation = self.expect(op, now, completed_at)
        if isinstance(observed, Unknown):
            verdict = _unknown_verdict(self, expectation, observed)
        else:
            verdict = expectation.check(observed)
        situated = verdict.outcome.in_situations(edge_situations(op, self.profile))
        if situated is not verdict.outcome:
            verdict = copied(verdict, outcome=situated)
        self.commit(verdict.outcome)
        return verdict

    def _late(self, now: float, completed_at: float | None) -> float:
        """The operation took effect somewhere in [now, late]: a window under windowed timing, an instant otherwise."""
        windowed = self.timing.windowed and completed_at is not None and completed_at > now
        return completed_at if windowed else now  # type: ignore[return-value]

    def expect(self, op: Operation, now: float, completed_at: float | None = None) -> Expectation:
        late = self._late(now, completed_at)
        if isinstance(op, ReceiveMessage):
            return expect_receive(self, op, now, late, completed_at)
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise ModelUsageError(f"the model has no operation {type(op).__name__}")
        return handler(self, op, now, late)

    def commit(self, outcome: Outcome) -> None:
        effects = outcome.effects
        for message in effects.new_messages:
            self.messages[message.id] = message
            self._joined(message.states[0].queue, message)
        indexed = bool(self._settled)  # most models never index a queue (_indexes): their commits skip it
        for message_id, states in effects.states.items():
            message = self.messages[message_id]
            live_before = {s.queue for s in message.states if s.gone is GONE_NO}
            live_after = {s.queue for s in states if s.gone is GONE_NO}
            for index in self._indexes(live_before) if indexed else ():
                index.forget(message)
            message.states = states
            staying = live_before
            if live_after != live_before:  # a move (redriven, gone): most changes leave it where it may be
                staying = live_after & live_before
                for queue_name in live_after - live_before:
                    self._joined(queue_name, message)  # redriven to a dead-letter queue
                for queue_name in live_before - live_after:
                    self.queues[queue_name].message_ids.pop(message_id, None)
                for index in self._indexes(live_before - live_after) if indexed else ():
                    index.left(message_id)
            for index in self._indexes(staying) if indexed else ():
                index.offer(message)  # it settles there in time if it is left in one state
        self.handles.update(effects.handles)
        for change in effects.queue_changes:
            change.apply(self.queues)

    def _joined(self, queue_name: str, message: Message) -> None:
        queue = self.queues[queue_name]
        if queue.message_ids and self.messages[next(reversed(queue.message_ids))].seq > message.seq:
            queue.joined_in_send_order = False
        queue.message_ids[message.id] = None
        for index in self._indexes((queue_name,)):
            index.joined(message.id)
            index.offer(message)

    def _indexes(self, queue_names) -> list[Settled]:
        """The settled-message indexes kept of these queues."""
        if not self._settled:  # none kept, or none made yet: most queues never hold enough messages
            return []
        return [self._settled[name] for name in queue_names if name in self._settled]

    def _index_of(self, queue: Queue) -> Settled | None:
        """The queue's index, made from its messages when an operation first reads it and it is worth keeping (the
        model's commits keep it up to date from then on)."""
        if self._settled is None:
            return None
        index = self._settled.get(queue.name)
        if index is None and len(queue.message_ids) >= self._index_from:
            index = self._settled[queue.name] = Settled(queue.name, self.messages, self.timing.tolerance, queue.fifo)
            index.rebuild(queue.message_ids)
        return index

    def in_motion(self, queue: Queue, now: float, horizon: float) -> tuple[list[Message], Settled, SurelyHidden]:
        """For an operation at `now` that ends by `horizon`: the messages that may be live in the queue that it must
        look at one by one, in send order; the settled ones and the ones surely hidden throughout
        (model/settled.py), which it reads together."""
        index = self._index_of(queue)
        if index is None:
            # Each may be live there: `commit` keeps a queue's message ids so (tests/model/differential.py holds it)
            moving = list(map(self.messages.__getitem__, queue.message_ids))
            if not queue.joined_in_send_order:
                moving.sort(key=_BY_SEND_ORDER)
            return moving, NOTHING_SETTLED, NOTHING_HIDDEN
        index.advance(now, self.redrive_of(queue.name), queue.message_ids)
        hidden = index.hidden_through(horizon)
        moving = self._live_in(queue.name, index.moving) + [self.messages[message_id] for message_id in hidden.near]
        return sorted(moving, key=_BY_SEND_ORDER), index, hidden

    # --- copies, for a search over orders of the same operations (the history checker) --------------------------

    def fork(self) -> Model:
        """An independent copy: its messages, queues and handles copied (message states are immutable and shared),
        its indexes left to be rebuilt from them when first read."""
        other = copy.copy(self)
        other.queues = {name: _copied_queue(queue) for name, queue in self.queues.items()}
        other.messages = {message_id: replace(message) for message_id, message in self.messages.items()}
        other.handles = dict(self.handles)
        other._settled = None if self._settled is None else {}
        return other

    def fingerprint(self) -> tuple:
        """Everything a later operation can read of this model, as one hashable value: two models with equal
        fingerprints judge every continuation alike (the history checker's memo). Every field of every record,
        so that a field added later is not forgotten here (a message's group once was: two racing sends of one
        deduplication id in two groups reached models that differed only there, and the memo took one for the
        other)."""
        return (_frozen(self.queues), _frozen(self.messages), _frozen(self.handles), self._next_handle,
                self._next_message, self._next_seq)

    # --- views for generators and tests --------------------------------------------------------------------

    def queue(self, name: str) -> Queue:
        try:
            return self.queues[name]
        except KeyError:
            raise ModelUsageError(f"no queue {name!r} in the model") from None

    def messages_in(self, queue: str) -> list[Message]:
        """Messages that may be live in the queue, in the order they joined it (send order, but for redriven ones)."""
        return self._live_in(queue, self.queue(queue).message_ids)

    def _live_in(self, queue: str, message_ids) -> list[Message]:
        """Those of the messages that may be live in the queue."""
        live = []
        for message in map(self.messages.__getitem__, message_ids):
            for s in message.states:  # a loop, not any(): this runs for every message of every receive
                if s.live_in(queue):
                    live.append(message)
                    break
        return live

    def receipts(self, queue: str, now: float) -> list[ReceiptView]:
        """Every in-flight receipt with its deadline and its 12-hour ceiling."""
        views = []
        for message in self.messages_in(queue):
            for s in message.states:
                if s.live_in(queue) and s.in_flight(now) and s.receipt is not None:
                    views.append(ReceiptView(s.receipt, message.id, s.visible_at, self._ceiling(s)))
        return views

    def delayed(self, queue: str, now: float) -> list[tuple[str, float]]:
        """Every message still delayed or locked, with the time it is released."""
        return [(m.id, s.visible_at) for m in self.messages_in(queue) for s in m.states
                if s.live_in(queue) and s.hidden in (HIDDEN_DELAY, HIDDEN_LOCK) and s.visible_at > now]

    def edges(self, queue: str, now: float) -> list[float]:
        """Future times at which something in the queue changes: deadlines, ceilings, releases, and the ends of
        deduplication windows (a send with that id is enqueued from then on)."""
        times = {r.deadline for r in self.receipts(queue, now)}
        times |= {r.ceiling for r in self.receipts(queue, now) if r.ceiling is not None}
        times |= {t for _, t in self.delayed(queue, now)}
        times |= {at + self.profile.dedup_window_seconds for _, at in self.queue(queue).dedup.values()}
        return sorted(t for t in times if t > now)

    # --- helpers shared by the operations -------------------------------------------------------------------

    def in_flight_when(self, s: MessageState, now: float, late: float) -> tuple[bool, ...]:
        """Whether a receipt is still in flight when the operation takes effect: one answer, or both when the
        operation's window [now, late] (widened by the tolerance) straddles the deadline."""
        if not self.timing.windowed:
            return (s.in_flight(now),)
        if s.gone is not GONE_NO or s.hidden is not HIDDEN_RECEIPT:
            return (False,)
        tolerance = self.timing.tolerance
        return tuple(answer for answer, possible in ((True, not s.surely_due(now, tolerance)),
                                                     (False, s.may_be_due(late, tolerance))) if possible)

    def redrive_of(self, queue_name: str) -> Redrive | None:
        """The queue's redrive policy, where the profile has redrive."""
        queue = self.queues.get(queue_name)
        return queue.redrive if queue is not None and self.profile.has_redrive else None

    def at_receive_limit(self, s: MessageState) -> bool:
        """Its next receive moves it to a dead-letter queue (REDRIVE-DLQ)."""
        redrive = self.redrive_of(s.queue)
        return redrive is not None and redrive.moves(s)

    def returned_once_due(self) -> Iterator[tuple[str, str, tuple[MessageState, ...]]]:
        """Each message (its id), the queue it is surely in and the states it may be in, where a receive there returns
        it in each of them once it is due (`MessageState.surely_due`); not one that may be gone or elsewhere, or is
        moved by its next receive (REDRIVE-DLQ). On a FIFO queue a group may hold a message back, so each group
        counts as one (`_groups_returned_once_due`)."""
        if self.profile.fifo:
            yield from self._groups_returned_once_due()
            return
        for message_id, message in self.messages.items():
            queue = message.states[0].queue
            if not any(not s.live_in(queue) or self.at_receive_limit(s) for s in message.states):
                yield message_id, queue, message.states

    def _groups_returned_once_due(self) -> Iterator[tuple[str, str, tuple[MessageState, ...]]]:
        """Each FIFO group of a queue from which a receive there returns a message once every state its messages may
        be in there is due (FIFO-GROUP-LOCK: then none holds the group, and whichever is there first comes): one of
        them surely there, none moved by its next receive (REDRIVE-DLQ). Its first message surely there, the queue,
        and those states."""
        groups: dict[tuple[str, str], list[Message]] = {}
        for message in self.messages.values():  # in send order
            for queue in dict.fromkeys(s.queue for s in message.states if s.gone is GONE_NO):
                groups.setdefault((queue, message.group_id or ""), []).append(message)
        for (queue, _), members in groups.items():
            states = tuple(s for m in members for s in m.states if s.live_in(queue))
            surely_there = next((m for m in members if all(s.live_in(queue) for s in m.states)), None)
            if surely_there is not None and not any(self.at_receive_limit(s) for s in states):
                yield surely_there.id, queue, states

    def mint_handle(self) -> str:
        self._next_handle += 1
        return f"rh-{self._next_handle}"

    def _ceiling(self, s: MessageState) -> float | None:
        if self.profile.ceiling_seconds is None or s.received_at is None:
            return None
        return s.received_at + self.profile.ceiling_seconds

    def visibility_values(self, queue: Queue, now: float) -> tuple[int, ...]:
        return queue.setting("VisibilityTimeout", now, self.profile.attribute_propagation_seconds)  # type: ignore

    def _range_error(self, value: object) -> ErrorSpec | None:
        p = self.profile
        if is_int_in(value, p.visibility_min, p.visibility_max):
            return None
        return errors.out_of_range("VisibilityTimeout", value, p.error_dialect)


_BY_SEND_ORDER = attrgetter("seq")  # a sort key in C, not a lambda called for every message


def _copied_queue(queue: Queue) -> Queue:
    return replace(queue, settings=dict(queue.settings), message_ids=dict(queue.message_ids), dedup=dict(queue.dedup),
                   deduplicated_at=dict(queue.deduplicated_at), attempts=dict(queue.attempts))


def _unknown_verdict(model: Model, expectation: Expectation, observed: Unknown) -> Verdict:
    """No answer: the operation may or may not have taken effect, so every message it touches keeps both its
    states before and every state it may have now. It exercised no rule."""
    possible = expectation.possible_effects()
    if possible is None:
        return Verdict(Outcome(observed, ()), consistent=False)
    states = {message_id: union(model.messages[message_id].states, after)
              for message_id, after in possible.states.items()}
    return Verdict(Outcome(observed, (), Effects(states, handles=dict(possible.handles))),
                   unseen=_must_refuse(expectation))


def _must_refuse(expectation: Expectation) -> bool:
    """The model permits only a refusal of the operation, or of one of a batch's entries: a target that accepts it
    instead would do so unseen where the answer is lost."""
    if isinstance(expectation, BatchExpectation):
        return any(_must_refuse(entry) for _, entry in expectation.entries)
    return isinstance(expectation, Enumerated) and all(isinstance(o.response, ErrorSpec) for o in expectation.outcomes)


_HANDLERS: dict[type, Callable[[Model, Any, float, float], Expectation]] = {
    CreateQueue: create_queue,
    SetQueueAttributes: set_attributes,
    GetQueueAttributes: get_attributes,
    SendMessage: send_message,
    ChangeMessageVisibility: change_visibility,
    ChangeMessageVisibilityBatch: change_batch,
    DeleteMessage: delete_message,
    DeleteMessageBatch: delete_batch,
    PurgeQueue: purge,
    PeekMessage: peek,
}


def _frozen(value: Any) -> Any:
    """A hashable value, equal for equal contents: dicts as their items in order (a queue's messages are kept in
    send order), mutable records field by field; frozen records and plain values as they are."""
    if isinstance(value, dict):
        return tuple((key, _frozen(item)) for key, item in value.items())
    if isinstance(value, (tuple, list)):
        return tuple(map(_frozen, value))
    if is_dataclass(value) and not value.__dataclass_params__.frozen:  # type: ignore[union-attr]
        return (type(value).__name__, *(_frozen(getattr(value, f.name)) for f in fields(value)))
    return value
