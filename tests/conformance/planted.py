"""Targets with planted bugs: the model as a queue, changed in one known way each."""

from __future__ import annotations

from dataclasses import replace

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.witnesses import JudgedModel
from sqs_conformance.model import errors
from sqs_conformance.model.values import (
    AttributesOk, BatchOk, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage,
    DeleteMessageBatch, Error, GetQueueAttributes, Ok, Operation, ReceiveMessage, Response, SetQueueAttributes,
    Unknown,
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


class BatchesRefusedAndExpiredFifoDeleteAccepted(ModelTarget):
    """Every batch is refused with an error no rule permits, and a FIFO delete through a handle whose deadline
    passed is accepted: the batch divergence masks the delete's wherever a witness reaches it through a batch."""

    def execute(self, op: Operation) -> Response:
        if isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)):
            return Error("InternalError", "batches are not implemented", 400)
        response = super().execute(op)
        if isinstance(op, DeleteMessage) and isinstance(response, Error) and "expired" in response.message:
            return Ok()
        return response


class _OtherTimeout(ModelTarget):
    """The queue's visibility timeout hides a message `DELTA` seconds more than it says (its attributes report the
    timeout it was given)."""

    DELTA = 0

    def execute(self, op: Operation) -> Response:
        # a queue left at the default timeout is off by DELTA too (and still reports the default)
        timeout = op.attributes.get("VisibilityTimeout", 30) if isinstance(op, CreateQueue) else None
        if isinstance(timeout, int) and timeout + self.DELTA >= 0:
            op = replace(op, attributes={**op.attributes, "VisibilityTimeout": timeout + self.DELTA})
        response = super().execute(op)
        if isinstance(op, GetQueueAttributes) and isinstance(response, AttributesOk):
            reported = int(response.attributes["VisibilityTimeout"]) - self.DELTA
            return AttributesOk({**response.attributes, "VisibilityTimeout": str(reported)})
        return response


class EarlyDeadlines(_OtherTimeout):
    """Every message comes back a second early, every time."""

    DELTA = -1


class LateDeadlines(_OtherTimeout, JudgedModel):
    """On a clock judged as a real one (windows, the 0.5 s tolerance): every message comes back two seconds late."""

    DELTA = 2


class LostReceiveAnswer(ModelTarget):
    """The first receive takes effect, but its answer is lost on the way back (a dropped connection)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[Operation] = []

    def execute(self, op: Operation) -> Response:
        self.sent.append(op)
        response = super().execute(op)
        if isinstance(op, ReceiveMessage) and sum(isinstance(o, ReceiveMessage) for o in self.sent) == 1:
            return Unknown("ConnectionClosedError: planted")
        return response


class _LosesAnswers(ModelTarget):
    """Answers to operations of the type `lose_answers_to` are lost on the way back (the operation took effect)."""

    def __init__(self, *args, lose_answers_to: type | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lose_answers_to = lose_answers_to

    def answer(self, op: Operation, response: Response) -> Response:
        if self.lose_answers_to is not None and isinstance(op, self.lose_answers_to):
            return Unknown("ConnectionClosedError: planted")
        return response


class DelayOutOfRangeAccepted(_LosesAnswers):
    """A DelaySeconds attribute out of range is accepted and kept."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.kept: dict[str, object] = {}

    def execute(self, op: Operation) -> Response:
        if isinstance(op, SetQueueAttributes) and op.attributes.get("DelaySeconds", 0) > 900:
            self.kept[op.queue] = op.attributes["DelaySeconds"]
            response: Response = Ok()
        else:
            response = super().execute(op)
        if isinstance(op, GetQueueAttributes) and op.queue in self.kept and isinstance(response, AttributesOk):
            response = AttributesOk({**response.attributes, "DelaySeconds": str(self.kept[op.queue])})
        return self.answer(op, response)


class NegativeTimeoutAccepted(_LosesAnswers):
    """A batch entry's negative VisibilityTimeout is taken for 0 (the message visible at once) rather than refused."""

    def execute(self, op: Operation) -> Response:
        if isinstance(op, ChangeMessageVisibilityBatch):
            op = replace(op, entries=tuple(replace(e, visibility_timeout=max(e.visibility_timeout, 0))
                                           for e in op.entries))
        return self.answer(op, super().execute(op))


class CeilingFromSendSlowAtFirst(JudgedModel):
    """On a clock judged as a real one: the 12-hour ceiling counted from the send, not the receive (a change past
    send + 43200 s is refused); and in its first case every receive is answered SLOW seconds late, as through a
    slow connection."""

    SLOW = 1.5

    def __init__(self, profile: str) -> None:
        super().__init__(profile)
        self.cases = 0

    def reset(self) -> None:
        super().reset()
        self.cases += 1

    def execute(self, op: Operation) -> Response:
        if isinstance(op, ChangeMessageVisibility) and isinstance(op.visibility_timeout, int):
            info = self.model.handles.get(op.receipt_handle)
            sent_at = self.model.messages[info.message_id].sent_at if info is not None else None
            if sent_at is not None and self.clock.now() + op.visibility_timeout > sent_at + 43200:
                return errors.beyond_ceiling(op.visibility_timeout).instantiate()  # the refusal SQS gives
        response = super().execute(op)
        if isinstance(op, ReceiveMessage) and self.cases <= 1:
            self.clock.advance(self.SLOW)
        return response
