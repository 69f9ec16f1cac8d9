"""The common receive judged at once: a poll of a standard queue answered with messages it could return as they
are (or, a long poll, with nothing where nothing could come).

That is most receives of a run and of a stored history, and the full judgement (model/receive.py) pays there for
everything it must weigh elsewhere: FIFO groups, an exact clock's long poll and the moment it answers, redrive, the
in-flight quota, a divergence to name. Here the verdict is built directly, from the same helpers; any other case
(or an answer that does not fit) returns None before anything changes, and the full judgement decides it.
`tests/model/test_fast_receive.py` holds the two equal: the same verdict, the same states, the same handles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from sqs_conformance.model.outcomes import Effects, Outcome, Verdict, built
from sqs_conformance.model.receive_effects import (
    decided_rules, long_poll_situations, received_state, surely_receivable, undecided_rules,
)
from sqs_conformance.model.receive import in_flight_counts, live_states
from sqs_conformance.model.receive_holdings import applicable_once, candidate_rules, poll_rules, read_together_rules
from sqs_conformance.model.receive_judging import attributes_fit, first_receive_seen
from sqs_conformance.model.rules import RCV_NEW_HANDLE, RCV_OVERRIDE, RCV_WAIT_RANGE
from sqs_conformance.model.settled import Settled
from sqs_conformance.model.state import HIDDEN_RECEIPT, HandleInfo, Message, MessageState, millis
from sqs_conformance.model.validation import is_int_in
from sqs_conformance.model.values import ReceivedMessage, ReceiveMessage, ReceiveOk, Response

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model

TIMESTAMP_TOLERANCE_MS = 1  # as the full judgement's (ReceiveHoldings.timestamp_tolerance_ms)


class _Looked(NamedTuple):
    """A message the receive looks at one by one: its states here in which it may be returned, and the others."""

    message: Message
    receivable: list[MessageState]
    hiding: list[MessageState]


def judged_at_once(model: Model, op: ReceiveMessage, now: float, late: float, observed: Response) -> Verdict | None:
    """The verdict on `observed`, a receive's answer taking effect in [now, late], where this case applies (None
    elsewhere, with nothing changed)."""
    p = model.profile
    queue = model.queues.get(op.queue)
    if (p.fifo or queue is None or not isinstance(observed, ReceiveOk) or op.attempt_id
            or model.redrive_of(queue.name) is not None):
        return None
    base_rules: list[str] = []
    if op.wait_time_seconds is not None and op.wait_time_seconds != 0:
        if not p.has_long_poll or not is_int_in(op.wait_time_seconds, 0, p.wait_max):
            return None
        base_rules.append(RCV_WAIT_RANGE)
    if op.max_messages is not None and p.validates_receive_params \
            and not is_int_in(op.max_messages, 1, p.max_messages_max):
        return None
    max_messages = op.max_messages if isinstance(op.max_messages, int) else 1
    if len(observed.messages) > max_messages:
        return None
    if op.visibility_timeout is not None:
        if RCV_OVERRIDE not in p.rule_ids or model._range_error(op.visibility_timeout) is not None:
            return None
        visibilities: tuple[int, ...] = (op.visibility_timeout,)
        base_rules.append(RCV_OVERRIDE)
    else:
        visibilities = model.visibility_values(queue, now)
    propagation = p.attribute_propagation_seconds
    if op.wait_time_seconds is not None:
        waits: tuple[int, ...] = (op.wait_time_seconds,)
    elif p.has_long_poll:
        waits = queue.setting("ReceiveMessageWaitTimeSeconds", now, propagation)  # type: ignore[assignment]
    else:
        waits = (0,)
    if max(waits) > 0 and not model.timing.windowed:
        return None  # on an exact clock a long poll answers at a moment of its own (model/receive.py)
    if "DelaySeconds" in queue.settings and any(queue.setting("DelaySeconds", now, propagation)):
        return None  # its messages' situations on a queue with a delay (ReceiveEffects._delay_situations)
    long_poll = min(waits) > 0
    found = _found(model, queue.name, now, late, max(late, now + max(waits)), long_poll)
    if found is None:
        return None
    looked, settled, rules = found
    if long_poll and not observed.messages and (settled or any(seen.receivable for seen in looked.values())):
        return None  # an empty long poll where a message may have been receivable: whether it missed one
    returned = _fitting(model, looked, settled, observed, now, late)
    if returned is None:
        return None
    receivable = len([seen for seen in looked.values() if seen.receivable]) + len(settled)
    exercised = poll_rules(tuple(base_rules), long_poll, receivable > max_messages) + rules
    outcome = _outcome(model, queue.name, returned, visibilities, now, late, exercised,
                       op.visibility_timeout is not None)
    if long_poll:
        tolerance = model.timing.tolerance
        due_by_end = [seen for seen in looked.values()
                      if surely_receivable(seen.message, seen.receivable + seen.hiding, now + min(waits), tolerance)]
        outcome.undecided = undecided_rules(
            bool(returned), False, False, True, bool(due_by_end or settled),
            any(all(s.receive_count for s in seen.receivable + seen.hiding) for seen in due_by_end)
            or settled.any_received_before)
        outcome.situations = long_poll_situations(
            op.wait_time_seconds is None,
            any(not surely_receivable(seen.message, seen.receivable + seen.hiding, now, tolerance)
                for seen in due_by_end))
    return Verdict(outcome)


def _found(model: Model, queue_name: str, now: float, late: float, horizon: float, long_poll: bool
           ) -> tuple[dict[str, _Looked], Settled, list[str]] | None:
    """The messages a receive taking effect in [now, late] looks at one by one, by id (those that may be due by
    `horizon`, the end of its wait; for a short poll only those it may return); the settled ones, read together
    (model/settled.py); and the rules the receive exercises on them all. None where the in-flight quota may be
    reached."""
    queue = model.queues[queue_name]
    moving, settled, hidden = model.in_motion(queue, now, horizon=horizon)
    live = live_states(moving, queue_name)
    quota, in_flight_elsewhere = model.profile.inflight_quota, hidden.how_many(HIDDEN_RECEIPT)
    # Counted only where there are enough messages to reach the quota: most queues are far below it
    if len(live) + in_flight_elsewhere >= quota and in_flight_counts(live, now)[1] + in_flight_elsewhere >= quota:
        return None
    tolerance = model.timing.tolerance
    at_least_once = model.profile.at_least_once
    looked: dict[str, _Looked] = {}
    rules = read_together_rules(settled, hidden, at_least_once)
    for message, states in live:
        if len(states) == 1:  # most messages: the list live_states made serves as it is
            receivable, hiding = (states, []) if states[0].may_be_due(late, tolerance) else ([], states)
        else:
            receivable = [s for s in states if s.may_be_due(late, tolerance)]
            hiding = [s for s in states if s not in receivable]
        rules += candidate_rules(hiding, (), receivable, False, at_least_once)
        if receivable or long_poll:  # one it cannot return matters to a long poll alone (whether due by its end)
            # The tuple made in C: a NamedTuple's own __new__ is Python, and costs more than the rest of the line.
            looked[message.id] = tuple.__new__(_Looked, (message, receivable, hiding))
    return looked, settled, rules


def _fitting(model: Model, looked: dict[str, _Looked], settled: Settled, observed: ReceiveOk, at: float,
             late: float) -> list[tuple[Message, list[MessageState]]] | None:
    """The returned messages, each with the states it may have been returned in that its count and first receive's
    time fit (that time as the answer told it), where each is one it may return, once, as it is; else None."""
    new_handle_checked = RCV_NEW_HANDLE in model.profile.rule_ids
    returned: list[tuple[Message, list[MessageState]]] = []
    seen: set[str] = set()
    for got in observed.messages:
        message_id = got.message_id or ""
        if message_id in seen or (got.receipt_handle is not None and new_handle_checked):
            return None
        states = looked[message_id].receivable if message_id in looked else \
            [settled.state(message_id)] if message_id in settled else []
        fitting = [s for s in states if attributes_fit(model, s, got, at, late, TIMESTAMP_TOLERANCE_MS)]
        if not fitting or got.body != model.messages[message_id].body:
            return None
        seen.add(message_id)
        returned.append((model.messages[message_id], first_receive_seen(model, fitting, got)))
    return returned


def _outcome(model: Model, queue_name: str, returned: list[tuple[Message, list[MessageState]]],
             visibilities: tuple[int, ...], at: float, late: float, exercised: list[str], override: bool
             ) -> Outcome:
    """What the answer leaves: each message returned in flight under a handle of its own. `exercised`: the rules the
    receive exercised, as they came; the outcome's are those of the profile among them and the ones the answer
    decides, each once, in that order."""
    queue_changed = model.queues[queue_name].settings["VisibilityTimeout"].changed_at is not None
    effects = Effects()
    shown: list[ReceivedMessage] = []
    for message, states in returned:
        handle = model.mint_handle()
        new_states = tuple([received_state(s, handle, v, at, late, override, queue_changed)
                            for s in states for v in visibilities])
        if len(new_states) > 1:
            new_states = tuple(dict.fromkeys(new_states))
        effects.states[message.id] = new_states
        effects.handles[handle] = tuple.__new__(HandleInfo, (message.id, queue_name, at))  # as _Looked's
        first = new_states[0]
        shown.append(built(ReceivedMessage, message_id=message.id, body=message.body, receipt_handle=handle,
                           receive_count=first.receive_count, first_receive_ms=millis(first.first_receive_at)
                           if first.first_receive_at is not None else None))
    decided = decided_rules(returned, effects.states, model.profile.rule_ids)
    return Outcome(ReceiveOk(tuple(shown)), applicable_once([*exercised, *decided], model.profile.rule_ids), effects,
                   frozenset(effects.handles), (), at,
                   undecided_rules(bool(returned), False, False, False, False, False))
