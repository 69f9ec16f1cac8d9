"""The queue family: creating a queue, its attributes, sending, purging and peeking.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqs_conformance.model import attributes, errors
from sqs_conformance.model.outcomes import (
    Divergence, Effects, Enumerated, Expectation, Outcome, Verdict, describe, situated,
)
from sqs_conformance.model.rules import (
    DEL_REMOVES, DELAY_HIDES, FIFO_DEDUP, FIFO_SEND_PARAMS, PEEK_NO_CHANGE, PURGE_ALL, PURGE_IN_PROGRESS,
    QATTR_LATER_RECEIVES, SEND_ENQUEUES, VIS_DEFAULT, VIS_RANGE,
)
from sqs_conformance.model.state import (
    GONE_DELETED, GONE_PURGED, HIDDEN_DELAY, HIDDEN_NONE, Deduplicated, Deduplication, Message, MessageState, NewQueue,
    NewSettings, Purged, Queue, millis,
)
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.validation import is_int_in
from sqs_conformance.model.values import (
    CreateQueue, ErrorSpec, GetQueueAttributes, Ok, PeekMessage, PeekOk, PurgeQueue, ReceivedMessage, Response,
    SendMessage, SendOk, SetQueueAttributes,
)

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model


def create_queue(model: Model, op: CreateQueue, now: float, late: float) -> Expectation:
    if op.queue in model.queues:
        raise ModelUsageError(f"queue {op.queue!r} exists already")
    parsed = attributes.parse(model, op.attributes, creating=True)
    if isinstance(parsed, Outcome):
        return Enumerated([parsed])
    created = NewQueue(attributes.new_queue(model.profile, op.queue, parsed, now))
    rules = (VIS_DEFAULT,) if "VisibilityTimeout" not in parsed else (VIS_RANGE,)
    return Enumerated([Outcome(Ok(), rules, Effects(queue_changes=(created,)))])


def set_attributes(model: Model, op: SetQueueAttributes, now: float, late: float) -> Expectation:
    model.queue(op.queue)
    parsed = attributes.parse(model, op.attributes, creating=False)
    if isinstance(parsed, Outcome):
        return Enumerated([parsed])

    # Messages in flight keep their deadlines; their states now also owe that to this rule, so that a receive
    # that finds one hidden (or back at its old deadline) exercises it, and a divergence there names it first.
    # The change itself exercises the rule only where it finds a message in flight: with none, a queue that
    # moves deadlines is not caught by it. (A later receive taking the new timeout exercises it too.)
    states, flying = {}, False
    for message in model.messages_in(op.queue) if "VisibilityTimeout" in parsed else ():
        in_flight = [s.live_in(op.queue) and s.in_flight(now) for s in message.states]
        flying |= any(in_flight)
        marked = tuple(s.evolve(why=(QATTR_LATER_RECEIVES,) + s.why)
                       if flies and QATTR_LATER_RECEIVES not in s.why else s
                       for s, flies in zip(message.states, in_flight, strict=True))
        if marked != message.states:
            states[message.id] = marked
    rules = (QATTR_LATER_RECEIVES,) if flying else ()
    change = NewSettings(op.queue, parsed, now)
    return Enumerated([Outcome(Ok(), rules + (VIS_RANGE,), Effects(states, queue_changes=(change,)))])


def get_attributes(model: Model, op: GetQueueAttributes, now: float, late: float) -> Expectation:
    return attributes.AttributesExpectation(model, model.queue(op.queue), now, late)


def send_message(model: Model, op: SendMessage, now: float, late: float) -> Expectation:
    queue = model.queue(op.queue)
    p = model.profile
    if queue.fifo:
        if op.group_id is None:
            return error_outcome(errors.missing_group_id(), FIFO_SEND_PARAMS)
        if op.delay_seconds is not None:
            return error_outcome(errors.fifo_message_delay(op.delay_seconds), FIFO_SEND_PARAMS)
        dedup_id = op.dedup_id
        if dedup_id is None and queue.content_based_dedup:
            dedup_id = hashlib.sha256(op.body.encode()).hexdigest()
        if dedup_id is None:
            return error_outcome(errors.missing_dedup_id(), FIFO_SEND_PARAMS)
        earlier = queue.dedup.get(dedup_id)
        if earlier is not None and now < earlier[1] + p.dedup_window_seconds:
            deduplicated = Effects(queue_changes=(Deduplicated(op.queue, dedup_id, now),))
            return Enumerated([Outcome(SendOk(earlier[0]), (FIFO_DEDUP,), deduplicated,
                                       situations=situated((FIFO_DEDUP,), _first_gone(model, earlier[0])))])
    else:
        dedup_id, earlier = None, None
    # FIFO-DEDUP is exercised where a send is deduplicated, above, and where its id's window has ended: counted from
    # the first send, whatever retries came since (a queue deduplicating this one keeps the id blocked too long)
    rules: tuple[str, ...] = (SEND_ENQUEUES,) if earlier is None else (FIFO_DEDUP, SEND_ENQUEUES)
    situations = () if earlier is None or dedup_id is None else \
        situated((FIFO_DEDUP,), _window_ended(queue, dedup_id, now, p.dedup_window_seconds))
    if op.delay_seconds is not None:
        if not p.has_delay:
            raise ModelUsageError(f"profile {p.name} has no per-message delay")
        if not is_int_in(op.delay_seconds, 0, p.delay_max):
            return error_outcome(errors.out_of_range("DelaySeconds", op.delay_seconds, p.error_dialect), DELAY_HIDES)
        delays: tuple[int, ...] = (op.delay_seconds,)
    else:
        delays = queue.setting("DelaySeconds", now, p.attribute_propagation_seconds)  # type: ignore[assignment]
    # Its own DelaySeconds 0 on a queue with a delay: visible at once, the queue's delay overridden (a receive
    # returning it decides DELAY-HIDES, as one holding it back until the delay ends does for a delayed message)
    overriding = op.delay_seconds == 0 and p.has_delay and any(
        queue.setting("DelaySeconds", now, p.attribute_propagation_seconds))  # type: ignore[arg-type]
    if any(delays) or overriding:
        rules += (DELAY_HIDES,)
    model._next_message += 1
    model._next_seq += 1
    message_id = f"msg-{model._next_message}"
    states = tuple([
        MessageState(queue=op.queue, visible_at=now + d, hidden=HIDDEN_DELAY if d else HIDDEN_NONE,
                     why=(DELAY_HIDES,) if d or overriding else (), slack=late - now)
        for d in delays
    ])
    message = Message(message_id, op.body, model._next_seq, now, op.group_id, states)
    remembered = (Deduplication(op.queue, dedup_id, message_id, now),) if dedup_id is not None else ()
    effects = Effects(new_messages=(message,), queue_changes=remembered)
    return Enumerated([Outcome(SendOk(message_id), rules, effects, minted=frozenset({message_id}),
                               situations=situations)])


def _first_gone(model: Model, message_id: str) -> str:
    """FIFO-DEDUP's situation where the message an id was first sent as is surely gone, by a delete or by a purge
    (two ways a queue that keeps deduplication with its messages may forget it): the id holds for its 5 minutes
    all the same."""
    message = model.messages.get(message_id)
    how = {s.gone for s in message.states} if message is not None else set()
    if how == {GONE_DELETED}:
        return "the message it was first sent as was deleted"
    if how == {GONE_PURGED}:
        return "the message it was first sent as was purged"
    return ""


def _window_ended(queue: Queue, dedup_id: str, now: float, window: float) -> str:
    """FIFO-DEDUP's situation where a deduplication id's window has ended: with a retry deduplicated within the last
    window, where a queue that restarts the window at each retry would still deduplicate, or without one."""
    retried = queue.deduplicated_at.get(dedup_id)
    if retried is not None and now < retried + window:
        return "its first send's window ended, a deduplicated retry within the last one"
    return "its first send's window ended"


def purge(model: Model, op: PurgeQueue, now: float, late: float) -> Expectation:
    if not model.profile.has_purge:
        raise ModelUsageError(f"profile {model.profile.name} has no PurgeQueue")
    queue = model.queue(op.queue)
    interval = model.profile.purge_interval_seconds
    refused: list[Outcome] = []
    last = (queue.last_purge_at, queue.last_purge_until)  # the last purge took effect somewhere in between
    if last[0] is not None and last[1] is not None and now < last[1] + interval:
        # The window counts from the last purge: where an earlier one is past it, a window counted from the
        # first would have let this purge through.
        earlier = queue.first_purge_at is not None and now >= queue.first_purge_at + interval
        refused.append(Outcome(errors.purge_in_progress(), (PURGE_IN_PROGRESS,), situations=situated(
            (PURGE_IN_PROGRESS,), "an earlier purge past its window" if earlier else "")))
        if late < last[0] + interval:  # 60 s apart at no instants the two windows allow
            return Enumerated(refused)
        # Windows (a real clock) that allow both: either answer is permitted, and neither decides the rule
    states = {}
    for message in model.messages_in(op.queue):
        states[message.id] = tuple(dict.fromkeys(
            s.evolve(gone=GONE_PURGED, why=(PURGE_ALL,), gone_at=now) if s.live_in(op.queue) else s
            for s in message.states))

    # A purge shows PURGE-ALL only where it finds a message; one in flight is a situation of its own (a purge that
    # spares in-flight messages passes every purge of visible ones), so witnesses are searched for both.
    in_flight = any(s.in_flight(now) for m in model.messages_in(op.queue) for s in m.states if s.live_in(op.queue))
    purged = Effects(states, queue_changes=(Purged(op.queue, now, late),))
    return Enumerated([*refused, Outcome(Ok(), (PURGE_ALL, PURGE_IN_PROGRESS), purged,
                                         undecided=() if states else (PURGE_ALL,),
                                         situations=situated((PURGE_ALL,), "in flight" if in_flight else ""))])


_PEEK = (PEEK_NO_CHANGE,)


@dataclass
class PeekExpectation:
    model: Model
    queue: str
    max_messages: int
    rules: tuple[str, ...] = _PEEK  # exercised where there is a message to peek at (see peek)

    def possible_effects(self) -> Effects:
        return Effects()  # a peek changes nothing

    def canonical(self) -> Outcome:
        live = [m for m in self.model.messages_in(self.queue)][: self.max_messages]
        seen = tuple(_peeked(m, m.states[0]) for m in live)
        return Outcome(PeekOk(seen), self.rules)

    def check(self, observed: Response) -> Verdict:
        if not isinstance(observed, PeekOk):
            return Verdict(Outcome(observed, self.rules), (Divergence(_PEEK, "PeekOk", describe(observed)),))
        problems = []
        for seen in observed.messages:
            message = self.model.messages.get(seen.message_id or "")
            fits = message is not None and any(
                s.live_in(self.queue) and seen.receive_count in (None, s.receive_count) for s in message.states)
            if not fits:
                why = (PEEK_NO_CHANGE,) + ((DEL_REMOVES,) if message is not None else ())
                problems.append(Divergence(why, "a live message, unchanged", f"peeked {seen.message_id}"))
        if len(observed.messages) > self.max_messages:
            problems.append(Divergence(_PEEK, f"at most {self.max_messages}", str(len(observed.messages))))
        return Verdict(Outcome(observed, self.rules), tuple(problems))


def _peeked(message: Message, s: MessageState) -> ReceivedMessage:
    return ReceivedMessage(message.id, message.body, None, s.receive_count,
                           millis(s.first_receive_at) if s.first_receive_at is not None else None)


def peek(model: Model, op: PeekMessage, now: float, late: float) -> Expectation:
    if not model.profile.has_peek:
        raise ModelUsageError(f"profile {model.profile.name} has no peek")
    model.queue(op.queue)
    return PeekExpectation(model, op.queue, op.max_messages, _PEEK if model.messages_in(op.queue) else ())


def error_outcome(spec: ErrorSpec, *rules: str) -> Enumerated:
    return Enumerated([Outcome(spec, rules)])
