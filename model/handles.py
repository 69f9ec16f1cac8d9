"""The receipt-handle family: what a handle addresses (current, stale, expired, deleted, purged, redriven),
DeleteMessage, and the per-state answers both a change and a delete are judged by.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import Effects, Enumerated, Expectation, Outcome, situated
from sqs_conformance.model.profiles import Profile
from sqs_conformance.model.rules import (
    DEL_EXPIRED, DEL_FIFO_EXPIRED, DEL_IDEMPOTENT, DEL_REMOVES, DEL_STALE, HANDLE_MALFORMED, PURGE_ALL, REDRIVE_DLQ,
    SMQ_NEW_HANDLE,
)
from sqs_conformance.model.state import GONE_NO, GONE_PURGED, HandleInfo, Message, MessageState, replaced
from sqs_conformance.model.values import ChangeOk, DeleteMessage, Ok

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model


class PerState(NamedTuple):
    """One answer permitted for one possible state of a message: the response, the rules it rests on, the state it
    leaves the message in (None: as it was) and the situations it shows those rules in. A refusal may say the state
    a target that does not enforce its rules would leave instead (`Outcome.unenforced`)."""

    response: object
    rules: tuple[str, ...]
    state: MessageState | None = None
    situations: tuple[tuple[str, str], ...] = ()
    unenforced: MessageState | None = None

    def evolve(self, **changes) -> PerState:
        """A copy with these fields changed (`replaced`)."""
        return replaced(self, changes)


def per_state(message: Message, outcomes_of: Callable[[MessageState], list[PerState]],
              moving: Callable[[MessageState], bool] = lambda s: False) -> list[Outcome]:
    """Apply a per-state rule to every state the message may be in: one outcome per possibility. Observing a
    response narrows the message to the states that give it (Enumerated.check merges the matching ones). A state
    `moving` (received maxReceiveCount times: its next receive moves it to a dead-letter queue) is a situation of
    its own for every rule an answer rests on there: it is still in its queue, and a queue that moves it when it
    reaches the count, or at its deadline, answers otherwise."""
    result = []
    for s in message.states:
        # A purge that spared in-flight messages shows only through their handles: a situation of its own.
        purged = situated((PURGE_ALL,), "purged in flight") if s.purged_in_flight else ()
        due = moving(s)
        for answer in outcomes_of(s):
            situations = answer.situations + purged
            if due:
                situations += situated(answer.rules, "at its maxReceiveCount")
            effects = Effects(states={message.id: (answer.state if answer.state is not None else s,)})
            minted: frozenset[str] = frozenset()
            response = answer.response
            if isinstance(response, ChangeOk) and response.receipt_handle:
                minted = frozenset({response.receipt_handle})
                effects.handles[response.receipt_handle] = HandleInfo(
                    message.id, s.queue, s.received_at if s.received_at is not None else 0.0)
            unenforced = None if answer.unenforced is None else Effects(states={message.id: (answer.unenforced,)})
            result.append(Outcome(response, answer.rules, effects, minted, situations=situations,
                                  unenforced=unenforced))
    return result


def purged_handle(p: Profile, rules: tuple[str, ...] = (PURGE_ALL,)) -> list:
    """A handle whose message left the queue other than by a delete: rejecting it as invalid is permitted."""
    return [PerState(spec, rules) for spec in errors.malformed_handle("", with_text=False, dialect=p.error_dialect)]


def redriven_fifo_handle(p: Profile, rules: tuple[str, ...]) -> list[PerState]:
    """A FIFO message moves only once its receipt has expired, so its old handle may also be refused as expired
    wherever the message has gone."""
    return [PerState(errors.handle_expired(), rules)] if p.fifo else []


def delete_message(model: Model, op: DeleteMessage, now: float, late: float) -> Expectation:
    return Enumerated(delete_outcomes(model, op.queue, op.receipt_handle, now, late))


def delete_outcomes(model: Model, queue_name: str, handle: str, now: float, late: float) -> list[Outcome]:
    model.queue(queue_name)
    info = model.handles.get(handle)
    if info is None or info.queue != queue_name:
        specs = errors.malformed_handle(handle, with_text=True, dialect=model.profile.error_dialect)
        return [Outcome(spec, (HANDLE_MALFORMED,)) for spec in specs]
    message = model.messages[info.message_id]
    return per_state(message, lambda s: _delete_state(model, s, handle, info, now, late), model.at_receive_limit)


def _delete_state(model: Model, s: MessageState, handle: str, info: HandleInfo, now: float, late: float
                  ) -> list[PerState]:
    p = model.profile
    if s.gone is not GONE_NO:
        if p.change_returns_new_handle:
            return [PerState(errors.smq_message_not_exist(), (SMQ_NEW_HANDLE,))]
        if s.gone is GONE_PURGED:  # docs/evidence.md records a second delete, not a delete after a purge
            return [PerState(Ok(), (PURGE_ALL, DEL_IDEMPOTENT))] + purged_handle(p)
        return [PerState(Ok(), (DEL_IDEMPOTENT,))]
    if s.queue != info.queue:  # redriven away: nothing records what its old handle gets, so permit each
        return [PerState(Ok(), (REDRIVE_DLQ, DEL_STALE))] + purged_handle(p, (REDRIVE_DLQ,)) + redriven_fifo_handle(
            p, (REDRIVE_DLQ, DEL_FIFO_EXPIRED))
    current = s.receipt == handle
    return [result for in_flight in model.in_flight_when(s, now, late)
            for result in _delete_receipt(model, s, handle, info, current, in_flight, now)]


def _delete_receipt(model: Model, s: MessageState, handle: str, info: HandleInfo, current: bool, in_flight: bool,
                    now: float) -> list[PerState]:
    """A delete of a live message, once it is known whether the receipt is still in flight."""
    p = model.profile
    if current and in_flight:
        return [PerState(Ok(), (DEL_REMOVES,), s.deleted((DEL_REMOVES,), now))]
    if p.change_returns_new_handle:
        rule = (SMQ_NEW_HANDLE,)
        if not current:
            return [PerState(errors.smq_message_not_exist(), rule)]
        return [PerState(errors.smq_message_not_exist(), rule), PerState(Ok(), rule, _deleted(s, SMQ_NEW_HANDLE, now))]
    if p.fifo:  # a FIFO queue that does not enforce it deletes the message all the same
        return [PerState(errors.handle_expired(), (DEL_FIFO_EXPIRED,), unenforced=_deleted(s, DEL_FIFO_EXPIRED, now))]
    # A handle many hours old was once refused as expired (docs/evidence.md row 'delete-stale'): whether it
    # was its message's latest is not recorded, so past the 12-hour mark either kind of handle may be refused.
    refused = [PerState(errors.handle_expired(), (DEL_STALE,) if not current else (DEL_EXPIRED,))] \
        if now - info.received_at > (p.ceiling_seconds or 43200) else []
    if current:
        return [PerState(Ok(), (DEL_EXPIRED,), _deleted(s, DEL_EXPIRED, now))] + refused
    return [PerState(Ok(), (DEL_STALE,), _deleted(s, DEL_STALE, now)), PerState(Ok(), (DEL_STALE,))] + refused


def _deleted(s: MessageState, rule_id: str, now: float) -> MessageState:
    """The state a delete leaves, through a handle `rule_id` says still works."""
    return s.deleted((rule_id, DEL_REMOVES), now)
