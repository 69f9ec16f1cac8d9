"""The common receive judged at once: a short poll of a standard queue answered with messages it could return as they
are.

That is most receives of a run and of a stored history, and the full judgement (model/receive.py) pays there for
everything it must weigh elsewhere: FIFO groups, long polls, redrive, the in-flight quota, a divergence to name.
Here the verdict is built directly, from the same helpers; any other case (or an answer that does not fit) returns
None before anything changes, and the full judgement decides it. `tests/model/test_fast_receive.py` holds the two
equal: the same verdict, the same states, the same handles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqs_conformance.model.outcomes import Effects, Outcome, Verdict
from sqs_conformance.model.receive_effects import SHORT_POLL_UNDECIDED, decided_rules, received_state
from sqs_conformance.model.receive_holdings import applicable_once, candidate_rules, poll_rules
from sqs_conformance.model.receive_judging import attributes_fit, first_receive_seen
from sqs_conformance.model.rules import (
    FIFO_ORDER, RCV_AT_LEAST_ONCE, RCV_COUNT, RCV_FIRST_TIMESTAMP, RCV_HIDE, RCV_NEW_HANDLE, RCV_OVERRIDE,
)
from sqs_conformance.model.settled import Settled
from sqs_conformance.model.state import Gone, HandleInfo, Hidden, Message, MessageState, millis
from sqs_conformance.model.validation import is_int_in
from sqs_conformance.model.values import ReceivedMessage, ReceiveMessage, ReceiveOk, Response

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model

TIMESTAMP_TOLERANCE_MS = 1  # as the full judgement's (ReceiveHoldings.timestamp_tolerance_ms)
_UNDECIDED_RETURNED = (FIFO_ORDER, *SHORT_POLL_UNDECIDED)
_UNDECIDED_EMPTY = (RCV_COUNT, RCV_FIRST_TIMESTAMP, *_UNDECIDED_RETURNED)


def judged_at_once(model: Model, op: ReceiveMessage, now: float, late: float, observed: Response) -> Verdict | None:
    """The verdict on `observed`, a receive's answer taking effect in [now, late], where this case applies (None
    elsewhere, with nothing changed)."""
    p = model.profile
    queue = model.queues.get(op.queue)
    if (p.fifo or queue is None or not isinstance(observed, ReceiveOk) or op.attempt_id
            or op.wait_time_seconds or model.redrive_of(queue.name) is not None):
        return None
    if op.max_messages is not None and p.validates_receive_params \
            and not is_int_in(op.max_messages, 1, p.max_messages_max):
        return None
    max_messages = op.max_messages if isinstance(op.max_messages, int) else 1
    if len(observed.messages) > max_messages:
        return None
    propagation = p.attribute_propagation_seconds
    if op.wait_time_seconds is None and p.has_long_poll \
            and any(queue.setting("ReceiveMessageWaitTimeSeconds", now, propagation)):
        return None
    if "DelaySeconds" in queue.settings and any(queue.setting("DelaySeconds", now, propagation)):
        return None  # its messages' situations on a queue with a delay (ReceiveEffects._delay_situations)
    if op.visibility_timeout is not None:
        if RCV_OVERRIDE not in p.rule_ids or model._range_error(op.visibility_timeout) is not None:
            return None
        visibilities: tuple[int, ...] = (op.visibility_timeout,)
        base_rules: tuple[str, ...] = (RCV_OVERRIDE,)
    else:
        visibilities = model.visibility_values(queue, now)
        base_rules = ()
    found = _found(model, queue.name, now, late)
    if found is None:
        return None
    in_motion, settled, rules = found
    receivable = sum(1 for states in in_motion.values() if states) + len(settled)
    returned = _fitting(model, in_motion, settled, observed, now, late)
    if returned is None:
        return None
    exercised = applicable_once(poll_rules(base_rules, False, receivable > max_messages) + rules, p.rule_ids)
    return Verdict(_outcome(model, queue.name, returned, visibilities, now, late, exercised,
                            op.visibility_timeout is not None))


def _found(model: Model, queue_name: str, now: float, late: float
           ) -> tuple[dict[str, list[MessageState]], Settled, list[str]] | None:
    """The messages the receive looks at one by one, by id, each with the states it may be returned in (the others
    hide it); the settled ones, read together (model/settled.py); and the rules the receive exercises on them all.
    None where the in-flight quota may be reached."""
    queue = model.queues[queue_name]
    moving, settled, hidden = model.in_motion(queue, now, horizon=late)
    tolerance = model.timing.tolerance
    at_least_once = model.profile.at_least_once
    in_motion: dict[str, list[MessageState]] = {}
    rules = settled.rules()
    if hidden:
        rules += [*hidden.rules(), RCV_HIDE, *(RCV_AT_LEAST_ONCE,) * at_least_once]
    in_flight = hidden.how_many(Hidden.RECEIPT)  # possibly: a message in flight in any state it may be in
    for message in moving:
        receivable: list[MessageState] = []
        hiding: list[MessageState] = []
        flying = False
        for s in message.states:
            if s.queue != queue_name or s.gone is not Gone.NO:
                continue  # a world in which it is elsewhere, or gone
            flying = flying or (s.hidden is Hidden.RECEIPT and now < s.visible_at)
            (receivable if s.may_be_due(late, tolerance) else hiding).append(s)
        in_flight += flying
        in_motion[message.id] = receivable
        rules += candidate_rules(hiding, (), receivable, False, at_least_once)
    if in_flight >= model.profile.inflight_quota:
        return None
    return in_motion, settled, rules


def _fitting(model: Model, in_motion: dict[str, list[MessageState]], settled: Settled, observed: ReceiveOk,
             at: float, late: float) -> list[tuple[Message, list[MessageState]]] | None:
    """The returned messages, each with the states it may have been returned in that its count and first receive's
    time fit (that time as the answer told it), where each is one it may return, once, as it is; else None."""
    new_handle_checked = RCV_NEW_HANDLE in model.profile.rule_ids
    returned: list[tuple[Message, list[MessageState]]] = []
    seen: set[str] = set()
    for got in observed.messages:
        message_id = got.message_id or ""
        if message_id in seen or (got.receipt_handle is not None and new_handle_checked):
            return None
        states = in_motion.get(message_id) or ([settled.state(message_id)] if message_id in settled else [])
        fitting = [s for s in states if attributes_fit(model, s, got, at, late, TIMESTAMP_TOLERANCE_MS)]
        if not fitting or got.body != model.messages[message_id].body:
            return None
        seen.add(message_id)
        returned.append((model.messages[message_id], first_receive_seen(model, fitting, got)))
    return returned


def _outcome(model: Model, queue_name: str, returned: list[tuple[Message, list[MessageState]]],
             visibilities: tuple[int, ...], at: float, late: float, exercised: tuple[str, ...], override: bool
             ) -> Outcome:
    """What the answer leaves: each message returned in flight under a handle of its own."""
    queue_changed = model.queues[queue_name].settings["VisibilityTimeout"].changed_at is not None
    effects = Effects()
    shown: list[ReceivedMessage] = []
    for message, states in returned:
        handle = model.mint_handle()
        new_states = tuple(dict.fromkeys(received_state(s, handle, v, at, late, override, queue_changed)
                                         for s in states for v in visibilities))
        effects.states[message.id] = new_states
        effects.handles[handle] = HandleInfo(message.id, queue_name, at)
        first = new_states[0]
        shown.append(ReceivedMessage(message.id, message.body, handle, first.receive_count,
                                     millis(first.first_receive_at) if first.first_receive_at is not None else None))
    decided = decided_rules(returned, effects.states, model.profile.rule_ids)
    return Outcome(ReceiveOk(tuple(shown)), tuple(dict.fromkeys(exercised + decided)), effects,
                   frozenset(effects.handles), (), at, _UNDECIDED_RETURNED if returned else _UNDECIDED_EMPTY)
