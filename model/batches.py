"""The batch family: a batch is its request-level checks, then each entry as the single call would be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqs_conformance.model.handles import delete_outcomes
from sqs_conformance.model.outcomes import BatchExpectation, Enumerated, Expectation, Outcome, union
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.validation import batch_errors
from sqs_conformance.model.values import ChangeEntry, ChangeMessageVisibilityBatch, DeleteEntry, DeleteMessageBatch
from sqs_conformance.model.visibility import change_outcomes

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model


def change_batch(model: Model, op: ChangeMessageVisibilityBatch, now: float, late: float) -> Expectation:
    return _batch(model, op.queue, op.entries, lambda e: change_outcomes(
        model, op.queue, e.receipt_handle, e.visibility_timeout, now, late))


def delete_batch(model: Model, op: DeleteMessageBatch, now: float, late: float) -> Expectation:
    return _batch(model, op.queue, op.entries, lambda e: delete_outcomes(model, op.queue, e.receipt_handle, now, late))


def _batch(model: Model, queue: str, entries: tuple[ChangeEntry | DeleteEntry, ...], single) -> Expectation:
    if not model.profile.has_batches:
        raise ModelUsageError(f"profile {model.profile.name} has no batch operations")
    model.queue(queue)
    invalid = batch_errors([(e.id, e) for e in entries], model.profile.batch_max_entries)
    if invalid:
        return Enumerated(invalid)
    judged = _entries_in_any_order(model, entries, single)
    return BatchExpectation([(e.id, Enumerated(o)) for e, (o, _, _) in zip(entries, judged, strict=True)],
                            at_the_limit=len(entries) == model.profile.batch_max_entries,
                            after_others={e.id: (siblings, Enumerated(after))
                                          for e, (_, siblings, after) in zip(entries, judged, strict=True) if after})


def _entries_in_any_order(model: Model, entries: tuple[ChangeEntry | DeleteEntry, ...], single
                          ) -> list[tuple[list[Outcome], tuple[str, ...], list[Outcome]]]:
    """Each entry's permitted outcomes; and, for an entry naming a message that other entries name too, those
    entries' ids and its outcomes once they have all come first. Nothing records in which order a queue applies
    a batch's entries, so such an entry is judged against every state the message may be in when it comes: as
    before the batch, or as the other entries may have left it, in any order (on a FIFO queue, a change to 0
    followed by another change through the same handle may find that handle expired)."""
    named = [info.message_id if (info := model.handles.get(e.receipt_handle)) is not None else None
             for e in entries]
    judged: list[tuple[list[Outcome], tuple[str, ...], list[Outcome]]] = []
    for entry, message_id in zip(entries, named, strict=True):
        others = [e for e, m in zip(entries, named, strict=True) if m == message_id and e is not entry]
        if message_id is None or not others:
            judged.append((single(entry), (), []))
            continue
        message = model.messages[message_id]
        before = message.states
        try:
            left: tuple = ()  # the states the others leave, whichever of them came last
            for _ in others:  # each pass lets one more of the others come first
                after = message.states
                for state_after in (o.effects.states.get(message_id, ()) for e in others for o in single(e)):
                    after = union(after, state_after)
                    left = union(left, state_after)
                message.states = after
            permitted = single(entry)
            message.states = left or before
            judged.append((permitted, tuple(e.id for e in others), single(entry)))
        finally:
            message.states = before
    return judged
