"""The visibility family: ChangeMessageVisibility (non-additive, shorten, terminate, not sticky), the 12-hour
ceiling counted from the receive, and the 2008-era lock of a message never received.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqs_conformance.model import errors
from sqs_conformance.model.handles import PerState, per_state, purged_handle, redriven_fifo_handle
from sqs_conformance.model.outcomes import ChangeOkWithin, Enumerated, Expectation, Outcome, situated
from sqs_conformance.model.rules import (
    CMV_DELETED, CMV_EXPIRED, CMV_FIFO_EXPIRED, CMV_STALE, HANDLE_MALFORMED, LOCK_UNRECEIVED, PURGE_ALL, REDRIVE_DLQ,
    SMQ_INVISIBLE_ONLY, SMQ_NEW_HANDLE, VIS_CEILING, VIS_CEILING_FROM_RECEIVE, VIS_CEILING_NO_RESET,
    VIS_EXTEND_NONADDITIVE, VIS_RANGE, VIS_SHORTEN, VIS_TERMINATE,
)
from sqs_conformance.model.state import GONE_PURGED, HIDDEN_LOCK, HandleInfo, Message, MessageState
from sqs_conformance.model.values import ChangeMessageVisibility, ChangeOk, ErrorSpec

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model


def change_visibility(model: Model, op: ChangeMessageVisibility, now: float, late: float) -> Expectation:
    return Enumerated(change_outcomes(model, op.queue, op.receipt_handle, op.visibility_timeout, now, late))


def change_outcomes(model: Model, queue_name: str, handle: str, value: object, now: float, late: float
                    ) -> list[Outcome]:
    model.queue(queue_name)
    range_error = model._range_error(value)
    if range_error is not None:
        # Nothing records whether the value or the handle is checked first: a handle that would be refused
        # whatever the value may be refused instead.
        in_range = model.profile.visibility_min
        refused = [o for o in change_outcomes(model, queue_name, handle, in_range, now, late)
                   if isinstance(o.response, ErrorSpec) and not any(r.startswith(VIS_CEILING) for r in o.rules)]
        return [Outcome(range_error, (VIS_RANGE,))] + refused
    v = float(value)  # type: ignore[arg-type]
    info = model.handles.get(handle)
    if info is None or info.queue != queue_name:
        specs = errors.malformed_handle(handle, with_text=False, dialect=model.profile.error_dialect)
        locked = _lock_target(model, queue_name, handle)
        if locked is not None:  # where it may have been received (an answer lost), its id is no handle there
            return per_state(locked, lambda s: _lock(s, now, v, late - now) if _lockable(s, queue_name)
                             else [PerState(spec, (HANDLE_MALFORMED,)) for spec in specs])
        return [Outcome(spec, (HANDLE_MALFORMED,)) for spec in specs]
    message = model.messages[info.message_id]
    return per_state(message, lambda s: _change_state(model, message, s, handle, info, now, late, v),
                     model.at_receive_limit)


def _lock_target(model: Model, queue_name: str, handle: str) -> Message | None:
    """sqs-2008: a message never received is addressed by its message id, and a change locks it."""
    if not model.profile.lock_unreceived:
        return None
    message = model.messages.get(handle)
    if message is None or not any(_lockable(s, queue_name) for s in message.states):
        return None
    return message


def _lockable(s: MessageState, queue_name: str) -> bool:
    return s.live_in(queue_name) and s.receive_count == 0


def _lock(s: MessageState, now: float, v: float, slack: float) -> list[PerState]:
    why = (LOCK_UNRECEIVED,)
    locked = s.evolve(visible_at=now + v, hidden=HIDDEN_LOCK, changed_at=now, was_locked=True, why=why, slack=slack)
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
        if s.gone is GONE_PURGED:  # nothing records what a purged message's handle gets: permit either error
            return [PerState(errors.not_available_for_change(), (PURGE_ALL, CMV_DELETED))] + purged_handle(p)
        if s.queue != info.queue:  # redriven to the dead-letter queue: likewise
            return [PerState(errors.not_available_for_change(), (REDRIVE_DLQ, CMV_DELETED))] + purged_handle(
                p, (REDRIVE_DLQ,)) + redriven_fifo_handle(p, (REDRIVE_DLQ, CMV_FIFO_EXPIRED))
        return [PerState(errors.not_available_for_change(), (CMV_DELETED,))]
    current = s.receipt == handle
    return [result for in_flight in model.in_flight_when(s, now, late)
            for result in _change_receipt(model, message, s, current, in_flight, now, late, v, info.received_at)]


def _change_receipt(model: Model, message: Message, s: MessageState, current: bool, in_flight: bool, now: float,
                    late: float, v: float, handle_received_at: float) -> list[PerState]:
    """A change of a live message's receipt, once it is known whether the receipt is still in flight.
    `handle_received_at`: when the receive that gave the handle took effect (an earlier one's, for a stale handle)."""
    p = model.profile
    if p.change_returns_new_handle:
        if not (current and in_flight):
            rule = SMQ_NEW_HANDLE if not current else SMQ_INVISIBLE_ONLY
            return [PerState(errors.smq_message_not_exist(), (rule,))]
        return [_accepted(model, s, now, late, v, new_handle=True)]
    if in_flight and (current or p.stale_handles_work and not p.fifo):
        accepted = _accepted(model, s, now, late, v)
        if not current:
            accepted = accepted.evolve(rules=(CMV_STALE,) + accepted.rules)
            return _stale_ceiling_check(model, message, s, now, late, v, accepted, handle_received_at)
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
    results = _ceiling_check(model, message, s, now, late, v, hidden.evolve(rules=rules + hidden.rules))
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
    receipt = s.receipt
    response: object = ChangeOk()
    if new_handle:
        handle = receipt = model.mint_handle()
        band = model.timing.tolerance if model.timing.windowed else 0.0
        response = ChangeOkWithin(handle, round((deadline - band) * 1000), round((late + v + band) * 1000))
        why = why + (SMQ_NEW_HANDLE,)
    return PerState(response, why, s.changed(deadline, now, late, why, receipt))


def _stale_ceiling_check(model: Model, message: Message, s: MessageState, now: float, late: float, v: float,
                         accepted: PerState, handle_received_at: float) -> list[PerState]:
    """A stale handle's change (standard): nothing records whether its 12 hours count from the latest receive or
    from the one that gave the handle, so what either base permits is permitted (a deadline between the two
    ceilings may be accepted or refused, and decides nothing)."""
    from_latest = _ceiling_check(model, message, s, now, late, v, accepted)
    if model._ceiling(s) is None or s.received_at is None or handle_received_at >= s.received_at:
        return from_latest
    earlier = s.evolve(received_at=handle_received_at, received_slack=0.0)
    kinds = {isinstance(r.response, ErrorSpec) for r in from_latest}
    return from_latest + [r for r in _ceiling_check(model, message, earlier, now, late, v, accepted)
                          if isinstance(r.response, ErrorSpec) not in kinds]


def _ceiling_check(model: Model, message: Message, s: MessageState, now: float, late: float, v: float,
                   accepted: PerState) -> list[PerState]:
    """VIS-CEILING: reject, never clip, a deadline beyond the receive + 43200 s."""
    ceiling = model._ceiling(s)
    if ceiling is None:
        return [accepted]
    deadline = now + v
    rules, flipped_by = _ceiling_rules(model, message.sent_at, s, deadline, ceiling)
    situations = situated((VIS_CEILING_FROM_RECEIVE,), flipped_by)
    unenforced = accepted.state  # what a queue that does not refuse leaves
    band = model.timing.tolerance  # under a real clock the receive and this change each took effect in a window
    if deadline > ceiling + s.received_slack + band:  # beyond even the latest the receive may have set it
        return [_rejected(v, rules, situations, unenforced)]
    accepted = accepted.evolve(rules=rules + accepted.rules, situations=situations)  # the ceiling decided first
    # docs/evidence.md row 'ceiling': 43200 right after the receive may already be refused by a second
    if late + v > ceiling - 1 - band:
        return [accepted, _rejected(v, rules, situations, unenforced)]
    return [accepted]


def _rejected(v: float, rules: tuple[str, ...], situations: tuple[tuple[str, str], ...],
              unenforced: MessageState | None) -> PerState:
    """A change refused as beyond the ceiling. Made only where it is permitted: most changes are far below it."""
    return PerState(errors.beyond_ceiling(int(v)), rules, None, situations, unenforced=unenforced)


_NEAR_CEILING = 60.0  # a decision this close to the ceiling depends on where the ceiling is


def _ceiling_rules(model: Model, sent_at: float, s: MessageState, deadline: float, ceiling: float
                   ) -> tuple[tuple[str, ...], str]:
    """Which ceiling rules this decision depends on (a wrong base or a reset would flip it), and the situation of
    a later receive whose ceiling counted from the first receive would flip it."""
    limit = model.profile.ceiling_seconds or 0
    rules: list[str] = []  # most specific first
    from_first = s.first_receive_at != s.received_at and _flips(s.first_receive_at, limit, deadline, ceiling)
    if _flips(sent_at, limit, deadline, ceiling) or from_first:
        rules.append(VIS_CEILING_FROM_RECEIVE)
    if _flips(s.changed_at, limit, deadline, ceiling):
        rules.append(VIS_CEILING_NO_RESET)
    if rules or deadline > ceiling - _NEAR_CEILING:
        rules.append(VIS_CEILING)
    return tuple(rules), "counted from a later receive" if from_first else ""


def _flips(base: float | None, limit: float, deadline: float, ceiling: float) -> bool:
    """Whether a ceiling counted from `base` would decide the deadline otherwise than the one at `ceiling`."""
    return base is not None and (deadline > base + limit) != (deadline > ceiling)
