"""A queue in the model, driven at explicit times: seed examples read like the documents."""

from __future__ import annotations

from sqs_conformance.model import Model, Verdict
from sqs_conformance.model.state import EXACT, Timing
from sqs_conformance.model.values import (
    ChangeMessageVisibility, CreateQueue, DeleteMessage, Error, GetQueueAttributes, PeekMessage, ReceiveMessage,
    ReceiveOk, Response, SendMessage, SetQueueAttributes,
)


class Scenario:
    def __init__(self, profile="sqs-standard", queue: str = "q", timing: Timing = EXACT, **attributes) -> None:
        self.model = Model(profile, timing)
        self.queue = queue
        if self.model.profile.fifo:
            attributes.setdefault("FifoQueue", "true")
            attributes.setdefault("ContentBasedDeduplication", "true")
        self.do(CreateQueue(queue, attributes), 0)

    def do(self, op, at: float) -> Response:
        response, _ = self.model.step(op, at)
        return response

    def send(self, body: str = "body", at: float = 0, **kw) -> str:
        if self.model.profile.fifo:
            kw.setdefault("group_id", "g")
        return self.do(SendMessage(self.queue, body, **kw), at).message_id

    def receive(self, at: float, max_messages: int = 10, **kw):
        if self.model.profile.validates_receive_params:
            kw["max_messages"] = max_messages
        response = self.do(ReceiveMessage(self.queue, **kw), at)
        assert isinstance(response, ReceiveOk), response
        return list(response.messages)

    def receive_one(self, at: float, **kw):
        messages = self.receive(at, max_messages=1, **kw)
        assert len(messages) == 1, f"expected one message at {at}, got {messages}"
        return messages[0]

    def receivable(self, at: float) -> list[str]:
        """Ids a receive at `at` may return, without receiving (the state is untouched)."""
        op = ReceiveMessage(self.queue, max_messages=10) if self.model.profile.validates_receive_params \
            else ReceiveMessage(self.queue)
        expectation = self.model.expect(op, at)
        return expectation.receivable_ids()

    def change(self, handle: str, timeout, at: float) -> Response:
        return self.do(ChangeMessageVisibility(self.queue, handle, timeout), at)

    def delete(self, handle: str, at: float) -> Response:
        return self.do(DeleteMessage(self.queue, handle), at)

    def attributes(self, at: float) -> dict[str, str]:
        return self.do(GetQueueAttributes(self.queue), at).attributes

    @classmethod
    def with_dead_letter_queue(cls, profile: str = "sqs-standard", max_receive_count: int = 1,
                               timing: Timing = EXACT, **attributes) -> Scenario:
        """Queue "q", whose messages move to queue "dlq" once received `max_receive_count` times."""
        q = cls(profile, queue="dlq", timing=timing)
        q.queue = "q"
        attributes["RedrivePolicy"] = {"deadLetterTargetQueue": "dlq", "maxReceiveCount": max_receive_count}
        if q.model.profile.fifo:
            attributes.update(FifoQueue="true", ContentBasedDeduplication="true")
        q.do(CreateQueue("q", attributes), 0)
        return q

    def set_attributes(self, at: float, **attributes) -> Response:
        return self.do(SetQueueAttributes(self.queue, attributes), at)

    def peek(self, at: float, max_messages: int = 10):
        return list(self.do(PeekMessage(self.queue, max_messages), at).messages)

    def check(self, op, at: float, observed: Response) -> Verdict:
        return self.model.observe(op, at, observed)


def error_code(response: Response) -> str | None:
    return response.code if isinstance(response, Error) else None
