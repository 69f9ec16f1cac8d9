"""Targets with planted bugs: the model as a queue, changed in one known way each."""

from __future__ import annotations

from dataclasses import replace

from adapters.model_target import ModelTarget
from model.values import (
    BatchOk, ChangeMessageVisibility, ChangeMessageVisibilityBatch, DeleteMessage, DeleteMessageBatch, Error,
    Operation, Response,
)


class AdditiveExtend(ModelTarget):
    """ChangeMessageVisibility adds to the time left instead of counting from the call."""

    def execute(self, op: Operation) -> Response:
        if isinstance(op, ChangeMessageVisibility) and isinstance(op.visibility_timeout, int):
            info = self.model.handles.get(op.receipt_handle)
            if info is not None and op.visibility_timeout > 0:
                state = self.model.messages[info.message_id].states[0]
                left = max(0, int(state.visible_at - self.clock.now()))
                op = replace(op, visibility_timeout=op.visibility_timeout + left)
        return super().execute(op)


class WrongMalformedHandleCode(ModelTarget):
    """A handle no receive issued is answered with InvalidParameterValue."""

    def execute(self, op: Operation) -> Response:
        response = super().execute(op)
        if isinstance(op, (ChangeMessageVisibility, DeleteMessage)) and isinstance(response, Error) \
                and response.code == "ReceiptHandleIsInvalid":
            return Error("InvalidParameterValue", "bad handle")
        return response


class EmptyBatchAccepted(ModelTarget):
    """An empty batch is answered with an empty success."""

    def execute(self, op: Operation) -> Response:
        if isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)) and not op.entries:
            return BatchOk(())
        return super().execute(op)


class TwoBugs(EmptyBatchAccepted, WrongMalformedHandleCode):
    """Two of the above at once: a run must report both, not just the first it meets."""
