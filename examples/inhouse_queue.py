"""A complete in-house adapter in Python: an in-memory queue keeping each message's visible-at deadline, on the
suite's clock, speaking SQS's error dialect through `model.errors`. Check it with

    sqs-conformance run --target python:examples.inhouse_queue:InHouseQueue

A team's own adapter has the same shape: `execute` turns each operation into calls on their queue and turns
the answers into responses; what the queue lacks raises `Unsupported` and is skipped.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqs_conformance.adapters.base import Target, Unsupported, VirtualClock
from sqs_conformance.model import errors
from sqs_conformance.model.values import (
    ChangeMessageVisibility, ChangeOk, CreateQueue, DeleteMessage, Error, Ok, Operation, ReceivedMessage,
    ReceiveMessage, ReceiveOk, Response, SendMessage, SendOk,
)

CEILING = 43200


@dataclass
class Message:
    id: str
    body: str
    visible_at: float
    handles: set[str]  # every handle a receive issued for it: an older one still addresses it, as in SQS
    received_at: float = 0.0
    receive_count: int = 0
    first_receive: float | None = None


@dataclass
class Queue:
    visibility_timeout: int
    delay: int
    messages: dict[str, Message]


def _error(spec) -> Error:
    return spec.instantiate()


def _in_range(value, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


class InHouseQueue(Target):
    profiles = frozenset({"sqs-standard"})

    def __init__(self, profile: str) -> None:
        if profile not in self.profiles:
            raise ValueError(f"it implements sqs-standard only, not {profile}")
        self.name = "inhouse-python"
        self.reset()

    def version(self) -> str:
        return "1.0"

    def reset(self) -> None:
        self.clock = VirtualClock()
        self.queues: dict[str, Queue] = {}
        self.ids = itertools.count(1)

    def execute(self, op: Operation) -> Response:
        handler = {CreateQueue: self._create, SendMessage: self._send, ReceiveMessage: self._receive,
                   ChangeMessageVisibility: self._change, DeleteMessage: self._delete}.get(type(op))
        if handler is None:
            raise Unsupported(f"{self.name} has no {type(op).__name__}")
        if not isinstance(op, CreateQueue) and op.queue not in self.queues:
            raise Unsupported(f"{self.name} could not create {op.queue}")
        return handler(op)

    def _create(self, op: CreateQueue) -> Response:
        unknown = set(op.attributes) - {"VisibilityTimeout", "DelaySeconds"}
        if unknown:
            raise Unsupported(f"{self.name} has no queue attribute {', '.join(sorted(unknown))}")
        visibility = op.attributes.get("VisibilityTimeout", 30)
        delay = op.attributes.get("DelaySeconds", 0)
        if not _in_range(visibility, 0, CEILING):
            return _error(errors.attribute_out_of_range("VisibilityTimeout", visibility))
        if not _in_range(delay, 0, 900):
            return _error(errors.attribute_out_of_range("DelaySeconds", delay))
        self.queues[op.queue] = Queue(visibility, delay, {})
        return Ok()

    def _send(self, op: SendMessage) -> Response:
        queue = self.queues[op.queue]
        delay = queue.delay if op.delay_seconds is None else op.delay_seconds
        if op.group_id is not None:
            raise Unsupported(f"{self.name} has no message groups")
        if not _in_range(delay, 0, 900):
            return _error(errors.out_of_range("DelaySeconds", delay, "sqs"))
        message = Message(f"msg-{next(self.ids)}", op.body, self.clock.now() + delay, set())
        queue.messages[message.id] = message
        return SendOk(message.id)

    def _receive(self, op: ReceiveMessage) -> Response:
        queue = self.queues[op.queue]
        most = 1 if op.max_messages is None else op.max_messages
        timeout = queue.visibility_timeout if op.visibility_timeout is None else op.visibility_timeout
        wait = 0 if op.wait_time_seconds is None else op.wait_time_seconds
        # In the order SQS checks them (the suite found the order: WaitTimeSeconds before VisibilityTimeout).
        if not _in_range(most, 1, 10):
            return _error(errors.max_messages_out_of_range(most))
        if not _in_range(wait, 0, 20):
            return _error(errors.wait_out_of_range(wait))
        if not _in_range(timeout, 0, CEILING):
            return _error(errors.out_of_range("VisibilityTimeout", timeout, "sqs"))
        now = self.clock.now()
        ready = [m for m in queue.messages.values() if m.visible_at <= now]
        if not ready and wait:  # a long poll answers as soon as a message becomes visible, or when it ends
            upcoming = [m.visible_at for m in queue.messages.values() if m.visible_at <= now + wait]
            now = min(upcoming, default=now + wait)
            self.clock.advance_to(now)
            ready = [m for m in queue.messages.values() if m.visible_at <= now]
        returned = []
        for message in ready[:most]:
            handle = f"rh-{next(self.ids)}-{message.id}"
            message.handles.add(handle)
            message.received_at, message.visible_at = now, now + timeout
            message.receive_count += 1
            if message.first_receive is None:
                message.first_receive = now
            returned.append(ReceivedMessage(message.id, message.body, handle, message.receive_count,
                                            round(message.first_receive * 1000)))
        return ReceiveOk(tuple(returned))

    def _addressed(self, queue: Queue, handle: str) -> Message | None:
        return next((m for m in queue.messages.values() if handle in m.handles), None)

    def _change(self, op: ChangeMessageVisibility) -> Response:
        queue, timeout = self.queues[op.queue], op.visibility_timeout
        if not _in_range(timeout, 0, CEILING):  # the value is checked before the handle, as SQS does
            return _error(errors.out_of_range("VisibilityTimeout", timeout, "sqs"))
        if not op.receipt_handle.startswith("rh-"):
            return _error(errors.malformed_handle(op.receipt_handle, with_text=False, dialect="sqs")[0])
        message = self._addressed(queue, op.receipt_handle)
        if message is None:
            return _error(errors.not_available_for_change())
        now = self.clock.now()
        if now + timeout - message.received_at > CEILING:  # counted from the receive, not from the change
            return _error(errors.beyond_ceiling(timeout))
        message.visible_at = now + timeout  # set, never added to what is left
        return ChangeOk()

    def _delete(self, op: DeleteMessage) -> Response:
        queue = self.queues[op.queue]
        if not op.receipt_handle.startswith("rh-"):
            return _error(errors.malformed_handle(op.receipt_handle, with_text=True, dialect="sqs")[0])
        message = self._addressed(queue, op.receipt_handle)
        if message is not None:
            del queue.messages[message.id]
        return Ok()  # deleting again, or through an older handle, is fine
