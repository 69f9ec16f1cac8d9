"""An operation in a few words that name every value it was sent with, for the timelines of a finding (its
RULE.txt, the report): the value that diverged is on the row that sent it (`Receive(vt=-1)`, not `Receive`)."""

from __future__ import annotations

from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage, DeleteMessageBatch,
    GetQueueAttributes, Operation, PeekMessage, PurgeQueue, ReceiveMessage, SendMessage, SetQueueAttributes,
)

HANDLE_CHARACTERS = 14  # a receipt handle is long and random: its start tells one from another


def operation_words(op: Operation) -> str:
    if isinstance(op, ReceiveMessage):
        return "Receive(" + _named(max=op.max_messages, vt=op.visibility_timeout, wait=op.wait_time_seconds,
                                   attempt=op.attempt_id) + ")"
    if isinstance(op, ChangeMessageVisibility):
        return f"Change({_handle(op.receipt_handle)}, {op.visibility_timeout!r})"
    if isinstance(op, DeleteMessage):
        return f"Delete({_handle(op.receipt_handle)})"
    if isinstance(op, SendMessage):
        return "Send(" + ", ".join(filter(None, [op.body, _named(delay=op.delay_seconds, group=op.group_id,
                                                                  dedup=op.dedup_id)])) + ")"
    if isinstance(op, (CreateQueue, SetQueueAttributes)):
        name = "CreateQueue" if isinstance(op, CreateQueue) else "SetAttributes"
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in op.attributes.items())})"
    if isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)):
        name = "ChangeBatch" if isinstance(op, ChangeMessageVisibilityBatch) else "DeleteBatch"
        return f"{name}[{'; '.join(_entry(e) for e in op.entries)}]"
    if isinstance(op, PeekMessage):
        return f"Peek(max={op.max_messages})"
    if isinstance(op, GetQueueAttributes):
        return "GetAttributes"
    if isinstance(op, PurgeQueue):
        return "Purge"
    return type(op).__name__


def _named(**values: object) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in values.items() if value is not None)


def _handle(handle: str) -> str:
    return handle[:HANDLE_CHARACTERS]


def _entry(entry) -> str:
    if isinstance(entry, ChangeEntry):
        return f"{entry.id}: {_handle(entry.receipt_handle)}, {entry.visibility_timeout!r}"
    return f"{entry.id}: {_handle(entry.receipt_handle)}"
