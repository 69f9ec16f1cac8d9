"""The reference model: pure, deterministic, time passed in by the caller (seconds, float).

    model = Model("sqs-standard")
    response, outcome = model.step(op, now)          # the model as a queue: its canonical outcome
    verdict = model.observe(op, now, observed)       # the model as a checker: narrow by what a target did
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from model import attributes, errors
from model.outcomes import (
    BatchExpectation, Divergence, Effects, Enumerated, Expectation, Outcome, Verdict, concrete, describe, situated,
    union,
)
from model.profiles import Profile, get_profile
from model.rules import (
    CMV_DELETED, CMV_EXPIRED, CMV_FIFO_EXPIRED, CMV_STALE, DELAY_HIDES, DEL_EXPIRED, DEL_FIFO_EXPIRED, DEL_IDEMPOTENT,
    DEL_REMOVES, DEL_STALE, FIFO_DEDUP, FIFO_SEND_PARAMS, HANDLE_MALFORMED, LOCK_UNRECEIVED, PEEK_NO_CHANGE, PURGE_ALL,
    PURGE_IN_PROGRESS, QATTR_LATER_RECEIVES, REDRIVE_DLQ, SEND_ENQUEUES, SMQ_INVISIBLE_ONLY, SMQ_NEW_HANDLE,
    VIS_CEILING, VIS_CEILING_FROM_RECEIVE, VIS_CEILING_NO_RESET, VIS_DEFAULT, VIS_EXTEND_NONADDITIVE, VIS_RANGE,
    VIS_SHORTEN, VIS_TERMINATE,
)
from model.state import (
    EXACT, Deduplication, Gone, HandleInfo, Hidden, Message, MessageState, NewQueue, NewSettings, Purged, Queue, Timing,
    millis,
)
from model.validation import batch_errors, edge_situations, is_int_in
from model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, CreateQueue, DeleteEntry,
    DeleteMessage, DeleteMessageBatch, ErrorSpec, GetQueueAttributes, Ok, Operation, PeekMessage, PeekOk,
    PurgeQueue, ReceiveMessage, ReceivedMessage, Response, SendMessage, SendOk, SetQueueAttributes, Unknown,
)


class ModelUsageError(ValueError):
    """The caller asked the model something outside its language (unknown queue, an operation the profile
    lacks). Not a verdict on any target."""


@dataclass(frozen=True)
class ReceiptView:
    """What a test generator needs to aim at the edges of one in-flight receipt."""

    handle: str
    message_id: str
    deadline: float
    ceiling: float | None


class Model:
    def __init__(self, profile: Profile | str, timing: Timing = EXACT) -> None:
        self.profile = profile if isinstance(profile, Profile) else get_profile(profile)
        self.timing = timing
        self.queues: dict[str, Queue] = {}
        self.messages: dict[str, Message] = {}
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
        expectation = self.expect(op, now, completed_at)
        if isinstance(observed, Unknown):
            verdict = _unknown_verdict(self, expectation, observed)
        else:
            verdict = expectation.check(observed)
        verdict = replace(verdict, outcome=verdict.outcome.in_situations(edge_situations(op, self.profile)))
        self.commit(verdict.outcome)
        return verdict

    def expect(self, op: Operation, now: float, completed_at: float | None = None) -> Expectation:
        # The operation took effect somewhere in [now, late]: a window under windowed timing, an instant otherwise.
        windowed = self.timing.windowed and completed_at is not None and completed_at > now
        late: float = completed_at if windowed else now  # type: ignore[assignment]
        if isinstance(op, ReceiveMessage):
            from model.receive import expect_receive

            return expect_receive(self, op, now, late, completed_at)
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise ModelUsageError(f"the model has no operation {type(op).__name__}")
        return handler(self, op, now, late)

    def commit(self, outcome: Outcome) -> None:
        effects = outcome.effects
        for message in effects.new_messages:
            self.messages[message.id] = message
            self.queues[message.states[0].queue].message_ids[message.id] = None
        for message_id, states in effects.states.items():
            message = self.messages[message_id]
            live_before = {s.queue for s in message.states if s.gone is Gone.NO}
            live_after = {s.queue for s in states if s.gone is Gone.NO}
            for queue_name in live_after - live_before:
                self.queues[queue_name].message_ids[message_id] = None  # redriven to a dead-letter queue
            for queue_name in live_before - live_after:
                self.queues[queue_name].message_ids.pop(message_id, None)
            message.states = states
        self.handles.update(effects.handles)
        for change in effects.queue_changes:
            change.apply(self.queues)

    # --- views for generators and tests --------------------------------------------------------------------

    def queue(self, name: str) -> Queue:
        try:
            return self.queues[name]
        except KeyError:
            raise ModelUsageError(f"no queue {name!r} in the model") from None

    def messages_in(self, queue: str) -> list[Message]:
        """Messages that may be live in the queue, in send order."""
        messages = self.messages
        result = []
        for message_id in self.queue(queue).message_ids:
            message = messages[message_id]
            for s in message.states:
                if s.queue == queue and s.gone is Gone.NO:
                    result.append(message)
                    break
        return result

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
                if s.live_in(queue) and s.hidden in (Hidden.DELAY, Hidden.LOCK) and s.visible_at > now]

    def edges(self, queue: str, now: float) -> list[float]:
        """Future times at which something in the queue changes: deadlines, ceilings, releases."""
        times = {r.deadline for r in self.receipts(queue, now)}
        times |= {r.ceiling for r in self.receipts(queue, now) if r.ceiling is not None}
        times |= {t for _, t in self.delayed(queue, now)}
        return sorted(t for t in times if t > now)

    # --- helpers shared by the operations -------------------------------------------------------------------

    def in_flight_when(self, s: MessageState, now: float, late: float) -> tuple[bool, ...]:
        """Whether a receipt is still in flight when the operation takes effect: one answer, or both when the
        operation's window [now, late] (widened by the tolerance) straddles the deadline."""
        if not self.timing.windowed:
            return (s.in_flight(now),)
        if s.gone is not Gone.NO or s.hidden is not Hidden.RECEIPT:
            return (False,)
        tolerance = self.timing.tolerance
        return tuple(answer for answer, possible in ((True, not s.surely_due(now, tolerance)),
                                                     (False, s.may_be_due(late, tolerance))) if possible)

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


# --- queue lifecycle and attributes ----------------------------------------------------------------------

def _create_queue(model: Model, op: CreateQueue, now: float, late: float) -> Expectation:
    if op.queue in model.queues:
        raise ModelUsageError(f"queue {op.queue!r} exists already")
    parsed = attributes.parse(model, op.attributes, creating=True)
    if isinstance(parsed, Outcome):
        return Enumerated([parsed])
    created = NewQueue(attributes.new_queue(model.profile, op.queue, parsed, now))
    rules = (VIS_DEFAULT,) if "VisibilityTimeout" not in parsed else (VIS_RANGE,)
    return Enumerated([Outcome(Ok(), rules, Effects(queue_changes=(created,)))])


def _set_attributes(model: Model, op: SetQueueAttributes, now: float, late: float) -> Expectation:
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


def _get_attributes(model: Model, op: GetQueueAttributes, now: float, late: float) -> Expectation:
    return attributes.AttributesExpectation(model, model.queue(op.queue), now, late)


# --- send ---------------------------------------------------------------------------------------------------

def _send(model: Model, op: SendMessage, now: float, late: float) -> Expectation:
    queue = model.queue(op.queue)
    p = model.profile
    if queue.fifo:
        if op.group_id is None:
            return _error(errors.missing_group_id(), FIFO_SEND_PARAMS)
        if op.delay_seconds is not None:
            return _error(errors.fifo_message_delay(op.delay_seconds), FIFO_SEND_PARAMS)
        dedup_id = op.dedup_id
        if dedup_id is None and queue.content_based_dedup:
            dedup_id = hashlib.sha256(op.body.encode()).hexdigest()
        if dedup_id is None:
            return _error(errors.missing_dedup_id(), FIFO_SEND_PARAMS)
        earlier = queue.dedup.get(dedup_id)
        if earlier is not None and now < earlier[1] + p.dedup_window_seconds:
            return Enumerated([Outcome(SendOk(earlier[0]), (FIFO_DEDUP,))])
    else:
        dedup_id = None
    rules: tuple[str, ...] = (SEND_ENQUEUES,)  # FIFO-DEDUP is exercised where a send is deduplicated, above
    if op.delay_seconds is not None:
        if not p.has_delay:
            raise ModelUsageError(f"profile {p.name} has no per-message delay")
        if not is_int_in(op.delay_seconds, 0, p.delay_max):
            return _error(errors.out_of_range("DelaySeconds", op.delay_seconds, p.error_dialect), DELAY_HIDES)
        delays: tuple[int, ...] = (op.delay_seconds,)
    else:
        delays = queue.setting("DelaySeconds", now, p.attribute_propagation_seconds)  # type: ignore[assignment]
    if any(delays):
        rules += (DELAY_HIDES,)
    model._next_message += 1
    model._next_seq += 1
    message_id = f"msg-{model._next_message}"
    states = tuple(
        MessageState(queue=op.queue, visible_at=now + d, hidden=Hidden.DELAY if d else Hidden.NONE,
                     why=(DELAY_HIDES,) if d else (), slack=late - now)
        for d in delays
    )
    message = Message(message_id, op.body, model._next_seq, now, op.group_id, states)
    remembered = (Deduplication(op.queue, dedup_id, message_id, now),) if dedup_id is not None else ()
    effects = Effects(new_messages=(message,), queue_changes=remembered)
    return Enumerated([Outcome(SendOk(message_id), rules, effects, minted=frozenset({message_id}))])


# --- change visibility --------------------------------------------------------------------------------------

def _change(model: Model, op: ChangeMessageVisibility, now: float, late: float) -> Expectation:
    return Enumerated(_change_outcomes(model, op.queue, op.receipt_handle, op.visibility_timeout, now, late))


def _change_outcomes(model: Model, queue_name: str, handle: str, value: object, now: float, late: float
                     ) -> list[Outcome]:
    model.queue(queue_name)
    range_error = model._range_error(value)
    if range_error is not None:
        # Nothing records whether the value or the handle is checked first: a handle that would be refused
        # whatever the value may be refused instead.
        in_range = model.profile.visibility_min
        refused = [o for o in _change_outcomes(model, queue_name, handle, in_range, now, late)
                   if isinstance(o.response, ErrorSpec) and not any(r.startswith(VIS_CEILING) for r in o.rules)]
        return [Outcome(range_error, (VIS_RANGE,))] + refused
    v = float(value)  # type: ignore[arg-type]
    info = model.handles.get(handle)
    if info is None or info.queue != queue_name:
        locked = _lock_target(model, queue_name, handle)
        if locked is not None:
            return _per_state(locked, lambda s: _lock(s, now, v, late - now))
        specs = errors.malformed_handle(handle, with_text=False, dialect=model.profile.error_dialect)
        return [Outcome(spec, (HANDLE_MALFORMED,)) for spec in specs]
    message = model.messages[info.message_id]
    return _per_state(message, lambda s: _change_state(model, message, s, handle, info, now, late, v))


def _lock_target(model: Model, queue_name: str, handle: str) -> Message | None:
    """sqs-2008: a message never received is addressed by its message id, and a change locks it."""
    if not model.profile.lock_unreceived:
        return None
    message = model.messages.get(handle)
    if message is None or not all(s.live_in(queue_name) and s.receive_count == 0 for s in message.states):
        return None
    return message


def _lock(s: MessageState, now: float, v: float, slack: float) -> list[PerState]:
    why = (LOCK_UNRECEIVED,)
    locked = s.evolve(visible_at=now + v, hidden=Hidden.LOCK, changed_at=now, was_locked=True, why=why, slack=slack)
    return [PerState(ChangeOk(), why, locked)]


def _change_state(model: Model, message: Message, s: MessageState, handle: str, info: HandleInfo, now: float,
                  late: float, v: float) -> list[PerState]:
    """Outcomes of a change on one possible state of the message."""
    p = model.profile
    if not s.live_in(info.queue):
        # SMQ: a gone message's handle no longer works (apart from one merely visible again, which a queue may miss)
        if p.change_returns_new_handle:
            rules = (SMQ_INVISIBLE_ONLY,)
            return [PerState(errors.smq_message_not_exist(), rules, situations=situated(rules, "gone"))]
        if s.gone is Gone.PURGED:  # nothing records what a purged message's handle gets: permit either error
            return [PerState(errors.not_available_for_change(), (PURGE_ALL, CMV_DELETED))] + _purged_handle(p)
        if s.queue != info.queue:  # redriven to the dead-letter queue: likewise
            return [PerState(errors.not_available_for_change(), (REDRIVE_DLQ, CMV_DELETED))] + _purged_handle(
                p, (REDRIVE_DLQ,))
        return [PerState(errors.not_available_for_change(), (CMV_DELETED,))]
    current = s.receipt == handle
    return [result for in_flight in model.in_flight_when(s, now, late)
            for result in _change_receipt(model, message, s, current, in_flight, now, late, v)]


def _change_receipt(model: Model, message: Message, s: MessageState, current: bool, in_flight: bool, now: float,
                    late: float, v: float) -> list[PerState]:
    """A change of a live message's receipt, once it is known whether the receipt is still in flight."""
    p = model.profile
    if p.change_returns_new_handle:
        if not (current and in_flight):
            rule = SMQ_NEW_HANDLE if not current else SMQ_INVISIBLE_ONLY
            return [PerState(errors.smq_message_not_exist(), (rule,))]
        return [_accepted(model, s, now, late, v, new_handle=True)]
    if in_flight and (current or p.stale_handles_work and not p.fifo):
        accepted = _accepted(model, s, now, late, v)
        if not current:
            accepted = accepted._replace(rules=(CMV_STALE,) + accepted.rules)
        return _ceiling_check(model, message, s, now, late, v, accepted)
    # Past the deadline, or a stale handle of an earlier receive: the hedged rows.
    rules: tuple[str, ...]
    if p.fifo:
        rules = (CMV_FIFO_EXPIRED,)
        return [PerState(errors.handle_expired(), rules)] + _expired_accepts(model, message, s, now, late, v, rules)
    rules = (CMV_EXPIRED,) if current else (CMV_STALE, CMV_EXPIRED)
    return _expired_accepts(model, message, s, now, late, v, rules)


def _expired_accepts(model: Model, message: Message, s: MessageState, now: float, late: float, v: float,
                     rules: tuple[str, ...]) -> list[PerState]:
    """HTTP 200; the message may or may not be hidden again (docs/evidence.md row 'cmv-expired')."""
    hidden = _accepted(model, s, now, late, v)
    results = _ceiling_check(model, message, s, now, late, v, hidden._replace(rules=rules + hidden.rules))
    results.append(PerState(ChangeOk(), rules, s))
    return results


def _accepted(model: Model, s: MessageState, now: float, late: float, v: float, new_handle: bool = False
              ) -> PerState:
    deadline = now + v
    why: tuple[str, ...]
    if v == 0:
        why = (VIS_TERMINATE,)
    elif deadline < s.visible_at:
        why = (VIS_SHORTEN,)
    else:
        why = (VIS_EXTEND_NONADDITIVE,)
    changes = dict(visible_at=deadline, hidden=Hidden.RECEIPT, changed_at=now, why=why, slack=late - now)
    response: object = ChangeOk()
    if new_handle:
        handle = model.mint_handle()
        changes["receipt"] = handle
        response = ChangeOk(handle, int(round(deadline * 1000)))
        why = why + (SMQ_NEW_HANDLE,)
    return PerState(response, why, s.evolve(**changes))


def _ceiling_check(model: Model, message: Message, s: MessageState, now: float, late: float, v: float,
                   accepted: PerState) -> list[PerState]:
    """VIS-CEILING: reject, never clip, a deadline beyond the receive + 43200 s."""
    ceiling = model._ceiling(s)
    if ceiling is None:
        return [accepted]
    deadline = now + v
    rules, flipped_by = _ceiling_rules(model, message.sent_at, s, deadline, ceiling)
    situations = situated((VIS_CEILING_FROM_RECEIVE,), flipped_by)
    rejected = PerState(errors.beyond_ceiling(int(v)), rules, None, situations)
    band = model.timing.tolerance  # under a real clock the receive and this change each took effect in a window
    if deadline > ceiling + s.received_slack + band:  # beyond even the latest the receive may have set it
        return [rejected]
    accepted = accepted._replace(rules=rules + accepted.rules, situations=situations)  # the ceiling decided first
    # docs/evidence.md row 'ceiling': 43200 right after the receive may already be refused by a second
    if late + v > ceiling - 1 - band:
        return [accepted, rejected]
    return [accepted]


_NEAR_CEILING = 60.0  # a decision this close to the ceiling depends on where the ceiling is


def _ceiling_rules(model: Model, sent_at: float, s: MessageState, deadline: float, ceiling: float
                   ) -> tuple[tuple[str, ...], str]:
    """Which ceiling rules this decision depends on (a wrong base or a reset would flip it), and the situation of
    a later receive whose ceiling counted from the first receive would flip it."""
    limit = model.profile.ceiling_seconds or 0
    rules: list[str] = []  # most specific first

    def flips(base: float | None) -> bool:
        return base is not None and (deadline > base + limit) != (deadline > ceiling)

    from_first = s.first_receive_at != s.received_at and flips(s.first_receive_at)
    if flips(sent_at) or from_first:
        rules.append(VIS_CEILING_FROM_RECEIVE)
    if flips(s.changed_at):
        rules.append(VIS_CEILING_NO_RESET)
    if rules or deadline > ceiling - _NEAR_CEILING:
        rules.append(VIS_CEILING)
    return tuple(rules), "counted from a later receive" if from_first else ""


class PerState(NamedTuple):
    """One answer permitted for one possible state of a message: the response, the rules it rests on, the state it
    leaves the message in (None: as it was) and the situations it shows those rules in."""

    response: object
    rules: tuple[str, ...]
    state: MessageState | None = None
    situations: tuple[tuple[str, str], ...] = ()


def _per_state(message: Message, outcomes_of: Callable[[MessageState], list[PerState]]) -> list[Outcome]:
    """Apply a per-state rule to every state the message may be in: one outcome per possibility. Observing a
    response narrows the message to the states that give it (Enumerated.check merges the matching ones)."""
    result = []
    for s in message.states:
        # A purge that spared in-flight messages shows only through their handles: a situation of its own.
        purged = situated((PURGE_ALL,), "purged in flight" if s.purged_in_flight else "")
        for answer in outcomes_of(s):
            effects = Effects(states={message.id: (answer.state if answer.state is not None else s,)})
            minted: frozenset[str] = frozenset()
            response = answer.response
            if isinstance(response, ChangeOk) and response.receipt_handle:
                minted = frozenset({response.receipt_handle})
                effects.handles[response.receipt_handle] = HandleInfo(
                    message.id, s.queue, s.received_at if s.received_at is not None else 0.0)
            result.append(Outcome(response, answer.rules, effects, minted, situations=answer.situations + purged))
    return result


def _purged_handle(p: Profile, rules: tuple[str, ...] = (PURGE_ALL,)) -> list:
    """A handle whose message left the queue other than by a delete: rejecting it as invalid is permitted."""
    return [PerState(spec, rules) for spec in errors.malformed_handle("", with_text=False, dialect=p.error_dialect)]


# --- delete ---------------------------------------------------------------------------------------------

def _delete(model: Model, op: DeleteMessage, now: float, late: float) -> Expectation:
    return Enumerated(_delete_outcomes(model, op.queue, op.receipt_handle, now, late))


def _delete_outcomes(model: Model, queue_name: str, handle: str, now: float, late: float) -> list[Outcome]:
    model.queue(queue_name)
    info = model.handles.get(handle)
    if info is None or info.queue != queue_name:
        specs = errors.malformed_handle(handle, with_text=True, dialect=model.profile.error_dialect)
        return [Outcome(spec, (HANDLE_MALFORMED,)) for spec in specs]
    message = model.messages[info.message_id]
    return _per_state(message, lambda s: _delete_state(model, s, handle, info, now, late))


def _delete_state(model: Model, s: MessageState, handle: str, info: HandleInfo, now: float, late: float
                  ) -> list[PerState]:
    p = model.profile
    if s.gone is not Gone.NO:
        if p.change_returns_new_handle:
            return [PerState(errors.smq_message_not_exist(), (SMQ_NEW_HANDLE,))]
        if s.gone is Gone.PURGED:  # docs/evidence.md records a second delete, not a delete after a purge
            return [PerState(Ok(), (PURGE_ALL, DEL_IDEMPOTENT))] + _purged_handle(p)
        return [PerState(Ok(), (DEL_IDEMPOTENT,))]
    if s.queue != info.queue:  # redriven away: nothing records what its old handle gets, so permit either
        return [PerState(Ok(), (REDRIVE_DLQ, DEL_STALE))] + _purged_handle(p, (REDRIVE_DLQ,))
    current = s.receipt == handle
    return [result for in_flight in model.in_flight_when(s, now, late)
            for result in _delete_receipt(model, s, handle, info, current, in_flight, now)]


def _delete_receipt(model: Model, s: MessageState, handle: str, info: HandleInfo, current: bool, in_flight: bool,
                    now: float) -> list[PerState]:
    """A delete of a live message, once it is known whether the receipt is still in flight."""
    p = model.profile

    def deleted(rule_id: str) -> MessageState:
        return s.evolve(gone=Gone.DELETED, why=(rule_id, DEL_REMOVES), gone_at=now)

    if current and in_flight:
        return [PerState(Ok(), (DEL_REMOVES,), s.evolve(gone=Gone.DELETED, why=(DEL_REMOVES,), gone_at=now))]
    if p.change_returns_new_handle:
        rule = (SMQ_NEW_HANDLE,)
        if not current:
            return [PerState(errors.smq_message_not_exist(), rule)]
        return [PerState(errors.smq_message_not_exist(), rule), PerState(Ok(), rule, deleted(SMQ_NEW_HANDLE))]
    if p.fifo:
        return [PerState(errors.handle_expired(), (DEL_FIFO_EXPIRED,))]
    # A handle many hours old was once refused as expired (docs/evidence.md row 'delete-stale'): whether it
    # was its message's latest is not recorded, so past the 12-hour mark either kind of handle may be refused.
    refused = [PerState(errors.handle_expired(), (DEL_STALE,) if not current else (DEL_EXPIRED,))] \
        if now - info.received_at > (p.ceiling_seconds or 43200) else []
    if current:
        return [PerState(Ok(), (DEL_EXPIRED,), deleted(DEL_EXPIRED))] + refused
    return [PerState(Ok(), (DEL_STALE,), deleted(DEL_STALE)), PerState(Ok(), (DEL_STALE,))] + refused


# --- batches --------------------------------------------------------------------------------------------

def _change_batch(model: Model, op: ChangeMessageVisibilityBatch, now: float, late: float) -> Expectation:
    return _batch(model, op.queue, op.entries, lambda e: _change_outcomes(
        model, op.queue, e.receipt_handle, e.visibility_timeout, now, late))


def _delete_batch(model: Model, op: DeleteMessageBatch, now: float, late: float) -> Expectation:
    return _batch(model, op.queue, op.entries, lambda e: _delete_outcomes(model, op.queue, e.receipt_handle, now, late))


def _batch(model: Model, queue: str, entries: tuple[ChangeEntry | DeleteEntry, ...], single) -> Expectation:
    if not model.profile.has_batches:
        raise ModelUsageError(f"profile {model.profile.name} has no batch operations")
    model.queue(queue)
    invalid = batch_errors([e.id for e in entries], model.profile.batch_max_entries)
    if invalid:
        return Enumerated(invalid)
    outcomes = _entries_in_any_order(model, entries, single)
    return BatchExpectation([(e.id, Enumerated(o)) for e, o in zip(entries, outcomes, strict=True)],
                            at_the_limit=len(entries) == model.profile.batch_max_entries)


def _entries_in_any_order(model: Model, entries: tuple[ChangeEntry | DeleteEntry, ...], single
                          ) -> list[list[Outcome]]:
    """Each entry's permitted outcomes. Nothing records in which order a queue applies a batch's entries, so an
    entry naming a message that other entries name too is judged against every state the message may be in when
    it comes: as before the batch, or as the other entries may have left it, in any order (on a FIFO queue, a
    change to 0 followed by another change through the same handle may find that handle expired)."""
    named = [info.message_id if (info := model.handles.get(e.receipt_handle)) is not None else None
             for e in entries]
    outcomes = []
    for entry, message_id in zip(entries, named, strict=True):
        others = [e for e, m in zip(entries, named, strict=True) if m == message_id and e is not entry]
        if message_id is None or not others:
            outcomes.append(single(entry))
            continue
        message = model.messages[message_id]
        before = message.states
        try:
            for _ in others:  # each pass lets one more of the others come first
                after = message.states
                for state_after in (o.effects.states.get(message_id, ()) for e in others for o in single(e)):
                    after = union(after, state_after)
                message.states = after
            outcomes.append(single(entry))
        finally:
            message.states = before
    return outcomes


# --- purge and peek -------------------------------------------------------------------------------------------

def _purge(model: Model, op: PurgeQueue, now: float, late: float) -> Expectation:
    if not model.profile.has_purge:
        raise ModelUsageError(f"profile {model.profile.name} has no PurgeQueue")
    queue = model.queue(op.queue)
    interval = model.profile.purge_interval_seconds
    if queue.last_purge_at is not None and now < queue.last_purge_at + interval:
        # The window counts from the last purge: where an earlier one is past it, a window counted from the
        # first would have let this purge through.
        earlier = queue.first_purge_at is not None and now >= queue.first_purge_at + interval
        return Enumerated([Outcome(errors.purge_in_progress(), (PURGE_IN_PROGRESS,), situations=situated(
            (PURGE_IN_PROGRESS,), "an earlier purge past its window" if earlier else ""))])
    states = {}
    for message in model.messages_in(op.queue):
        states[message.id] = tuple(dict.fromkeys(
            s.evolve(gone=Gone.PURGED, why=(PURGE_ALL,), gone_at=now) if s.live_in(op.queue) else s
            for s in message.states))

    # A purge shows PURGE-ALL only where it finds a message; one in flight is a situation of its own (a purge that
    # spares in-flight messages passes every purge of visible ones), so witnesses are searched for both.
    in_flight = any(s.in_flight(now) for m in model.messages_in(op.queue) for s in m.states if s.live_in(op.queue))
    purged = Effects(states, queue_changes=(Purged(op.queue, now),))
    return Enumerated([Outcome(Ok(), (PURGE_ALL, PURGE_IN_PROGRESS), purged,
                               undecided=() if states else (PURGE_ALL,),
                               situations=situated((PURGE_ALL,), "in flight" if in_flight else ""))])


_PEEK = (PEEK_NO_CHANGE,)


@dataclass
class PeekExpectation:
    model: Model
    queue: str
    max_messages: int
    rules: tuple[str, ...] = _PEEK  # exercised where there is a message to peek at (see _peek)

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


def _peek(model: Model, op: PeekMessage, now: float, late: float) -> Expectation:
    if not model.profile.has_peek:
        raise ModelUsageError(f"profile {model.profile.name} has no peek")
    model.queue(op.queue)
    return PeekExpectation(model, op.queue, op.max_messages, _PEEK if model.messages_in(op.queue) else ())


def _unknown_verdict(model: Model, expectation: Expectation, observed: Unknown) -> Verdict:
    """No answer: the operation may or may not have taken effect, so every message it touches keeps both its
    states before and every state it may have now. It exercised no rule."""
    possible = expectation.possible_effects()
    if possible is None:
        return Verdict(Outcome(observed, ()), consistent=False)
    states = {message_id: union(model.messages[message_id].states, after)
              for message_id, after in possible.states.items()}
    return Verdict(Outcome(observed, (), Effects(states, handles=dict(possible.handles))))


def _error(spec: ErrorSpec, *rules: str) -> Enumerated:
    return Enumerated([Outcome(spec, rules)])


_HANDLERS: dict[type, Callable[[Model, Any, float, float], Expectation]] = {
    CreateQueue: _create_queue,
    SetQueueAttributes: _set_attributes,
    GetQueueAttributes: _get_attributes,
    SendMessage: _send,
    ChangeMessageVisibility: _change,
    ChangeMessageVisibilityBatch: _change_batch,
    DeleteMessage: _delete,
    DeleteMessageBatch: _delete_batch,
    PurgeQueue: _purge,
    PeekMessage: _peek,
}
