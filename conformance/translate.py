"""Translating between a target's message ids and receipt handles and the model's own.

The model mints its own ids; a target returns others. An id a target returns for the first time is 'fresh'
(None in model space) and is bound to the id the model minted for the same thing once the answer is checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from sqs_conformance.model.outcomes import Outcome
from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, DeleteEntry,
    DeleteMessage, DeleteMessageBatch, Operation, PeekOk, ReceivedMessage, ReceiveOk, Response, SendOk,
)


# Handles no queue ever issues: one plain, one shaped like an SQS receipt handle.
GARBAGE_HANDLES = ("not-a-receipt-handle", "AQEBzWwaftRI0KuVm4tP+/7q1rGgNqicHq/8+Q==")
_MODEL_ID = re.compile(r"(left-out-)?[a-z]+-\d+")  # how the model names what it mints ("rh-3", "msg-1")


def garbage_unless_issued(op: Operation, issued: Callable[[str], bool]) -> Operation:
    """The operation with every handle named the model's way that the target has not `issued` sent as plain
    garbage: a target must only ever be sent handles it issued itself, or ones that are garbage to every queue
    (never 'rh-2', the model's name for a receipt that, in this replay, no receive gave)."""
    return map_handles(op, lambda h: h if issued(h) or not _MODEL_ID.fullmatch(h) else GARBAGE_HANDLES[0])


class IdMap:
    def __init__(self) -> None:
        self._to_model: dict[str, str] = {}
        self._to_target: dict[str, str] = {}

    def copy(self) -> IdMap:
        other = IdMap()
        other._to_model, other._to_target = dict(self._to_model), dict(self._to_target)
        return other

    def bindings(self) -> frozenset[tuple[str, str]]:
        return frozenset(self._to_model.items())

    def bind(self, target_id: str, model_id: str) -> None:
        self._to_model[target_id] = model_id
        self._to_target[model_id] = target_id

    def model_id(self, target_id: str | None) -> str | None:
        return None if target_id is None else self._to_model.get(target_id)

    def issued(self, model_id: str) -> bool:
        """Whether the target has answered with this id (a receipt handle of the model's it returned)."""
        return model_id in self._to_target

    def target_id(self, model_id: str) -> str:
        """The target's name for a model id; anything else (a garbage handle) goes through unchanged."""
        return self._to_target.get(model_id, model_id)

    # --- operations: handles from one space to the other ----------------------------------------------------

    def op_for_target(self, op: Operation) -> Operation:
        return map_handles(op, self.target_id)

    def op_for_model(self, op: Operation) -> Operation:
        """A recorded operation back in model space; handles the model never saw (garbage) go through."""
        return map_handles(op, lambda h: self._to_model.get(h, h))

    # --- responses: target space -> model space ----------------------------------------------------------

    def response_for_model(self, response: Response) -> Response:
        if isinstance(response, SendOk):
            return SendOk(self.model_id(response.message_id))
        if isinstance(response, (ReceiveOk, PeekOk)):
            return type(response)(tuple(self._message(m) for m in response.messages))
        if isinstance(response, ChangeOk) and response.receipt_handle is not None:
            return ChangeOk(self.model_id(response.receipt_handle), response.next_visible_ms)
        return response

    def _message(self, m: ReceivedMessage) -> ReceivedMessage:
        return replace(m, message_id=self.model_id(m.message_id), receipt_handle=self.model_id(m.receipt_handle))

    def bind_fresh(self, outcome: Outcome, observed: Response) -> None:
        """After a check: bind the ids the target returned for the first time to those the model minted."""
        expected = outcome.response
        if isinstance(observed, SendOk) and isinstance(expected, SendOk):
            if observed.message_id is not None and self.model_id(observed.message_id) is None \
                    and expected.message_id is not None:
                self.bind(observed.message_id, expected.message_id)
        elif isinstance(observed, ReceiveOk) and isinstance(expected, ReceiveOk):
            handles = {m.message_id: m.receipt_handle for m in expected.messages}
            for m in observed.messages:
                model_message = self.model_id(m.message_id)
                minted = handles.get(model_message)
                if m.receipt_handle is not None and minted is not None and self.model_id(m.receipt_handle) is None:
                    self.bind(m.receipt_handle, minted)
        elif isinstance(observed, ChangeOk) and isinstance(expected, ChangeOk):
            if observed.receipt_handle and expected.receipt_handle and self.model_id(observed.receipt_handle) is None:
                self.bind(observed.receipt_handle, expected.receipt_handle)


def handles_named(op: Operation) -> list[str]:
    """The receipt handles an operation names (read where `map_handles` renames them: the same fields)."""
    if isinstance(op, (ChangeMessageVisibility, DeleteMessage)):
        return [op.receipt_handle]
    if isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)):
        return [e.receipt_handle for e in op.entries]
    return []


def map_handles(op: Operation, rename) -> Operation:
    """The operation with each receipt handle it names renamed (the fields `handles_named` reads)."""
    if isinstance(op, (ChangeMessageVisibility, DeleteMessage)):
        return replace(op, receipt_handle=rename(op.receipt_handle))
    if isinstance(op, ChangeMessageVisibilityBatch):
        return replace(op, entries=tuple(
            ChangeEntry(e.id, rename(e.receipt_handle), e.visibility_timeout) for e in op.entries))
    if isinstance(op, DeleteMessageBatch):
        return replace(op, entries=tuple(DeleteEntry(e.id, rename(e.receipt_handle)) for e in op.entries))
    return op
