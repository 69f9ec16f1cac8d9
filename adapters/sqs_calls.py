"""Each operation as the SQS API call that performs it: the boto3 method and its parameters.

One builder serves the adapter that executes a call and the reproduction script a finding comes with, so the
script a user runs sends what the suite sent. What differs between the two places is only how a few values are
found (a queue's URL, a message's current receipt handle, a dead-letter queue's ARN): those are left as markers
that each side resolves its own way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqs_conformance.adapters.base import Unsupported
from sqs_conformance.model.values import (
    ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage, DeleteMessageBatch,
    GetQueueAttributes, Operation, PurgeQueue, ReceiveMessage, SendMessage, SetQueueAttributes,
)

# The client both use: the service must validate parameters (the suite sends out-of-range values on purpose), and a
# request is sent once (a retry could hide a receive that happened).
CLIENT_OPTIONS: dict[str, Any] = {"parameter_validation": False,
                                  "retries": {"total_max_attempts": 1, "mode": "standard"}}


@dataclass(frozen=True)
class QueueName:
    """The name the queue is created under (the caller's prefix keeps runs apart)."""

    queue: str
    fifo: bool

    @property
    def suffix(self) -> str:
        return self.queue + (".fifo" if self.fifo and not self.queue.endswith(".fifo") else "")


@dataclass(frozen=True)
class QueueUrl:
    queue: str


@dataclass(frozen=True)
class Handle:
    """A receipt handle as the case names it (the target's own, or a garbage one the case made up)."""

    value: str


@dataclass(frozen=True)
class RedrivePolicy:
    """The queue attribute, whose dead-letter queue is named by its ARN."""

    dead_letter_queue: str
    max_receive_count: Any


@dataclass(frozen=True)
class SqsCall:
    method: str
    params: dict[str, Any]


def sqs_call(op: Operation) -> SqsCall:
    """The call that performs `op`. Raises Unsupported for an operation SQS has no call for (peek)."""
    if isinstance(op, CreateQueue):
        fifo = str(op.attributes.get("FifoQueue", "")).lower() == "true"
        return SqsCall("create_queue", {"QueueName": QueueName(op.queue, fifo),
                                        "Attributes": _attributes(op.attributes)})
    url = QueueUrl(op.queue)
    if isinstance(op, SetQueueAttributes):
        return SqsCall("set_queue_attributes", {"QueueUrl": url, "Attributes": _attributes(op.attributes)})
    if isinstance(op, GetQueueAttributes):
        return SqsCall("get_queue_attributes", {"QueueUrl": url, "AttributeNames": ["All"]})
    if isinstance(op, PurgeQueue):
        return SqsCall("purge_queue", {"QueueUrl": url})
    if isinstance(op, SendMessage):
        return SqsCall("send_message", {"QueueUrl": url, "MessageBody": op.body, **_present(
            DelaySeconds=op.delay_seconds, MessageGroupId=op.group_id, MessageDeduplicationId=op.dedup_id)})
    if isinstance(op, ReceiveMessage):
        return SqsCall("receive_message", {"QueueUrl": url, "MessageSystemAttributeNames": ["All"], **_present(
            MaxNumberOfMessages=op.max_messages, VisibilityTimeout=op.visibility_timeout,
            WaitTimeSeconds=op.wait_time_seconds, ReceiveRequestAttemptId=op.attempt_id)})
    if isinstance(op, ChangeMessageVisibility):
        return SqsCall("change_message_visibility", {"QueueUrl": url, "ReceiptHandle": Handle(op.receipt_handle),
                                                     "VisibilityTimeout": op.visibility_timeout})
    if isinstance(op, ChangeMessageVisibilityBatch):
        return SqsCall("change_message_visibility_batch", {"QueueUrl": url, "Entries": [
            {"Id": e.id, "ReceiptHandle": Handle(e.receipt_handle), "VisibilityTimeout": e.visibility_timeout}
            for e in op.entries]})
    if isinstance(op, DeleteMessage):
        return SqsCall("delete_message", {"QueueUrl": url, "ReceiptHandle": Handle(op.receipt_handle)})
    if isinstance(op, DeleteMessageBatch):
        return SqsCall("delete_message_batch", {"QueueUrl": url, "Entries": [
            {"Id": e.id, "ReceiptHandle": Handle(e.receipt_handle)} for e in op.entries]})
    raise Unsupported(f"SQS has no call for {type(op).__name__} (the 2008 API and SMQ have peek; SQS today does not)")


def resolve(value: Any, marker: Callable[[Any], Any]) -> Any:
    """`value` with every marker in it (at any depth of dicts and lists) replaced by `marker(it)`."""
    if isinstance(value, dict):
        return {key: resolve(item, marker) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, marker) for item in value]
    if isinstance(value, (QueueName, QueueUrl, Handle, RedrivePolicy)):
        return marker(value)
    return value


def _attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """Queue attributes as SQS takes them: strings (JSON for anything else), the redrive policy left to resolve."""
    result: dict[str, Any] = {}
    for key, value in attributes.items():
        if key == "RedrivePolicy" and isinstance(value, dict):
            result[key] = RedrivePolicy(value["deadLetterTargetQueue"], value["maxReceiveCount"])
        else:
            result[key] = value if isinstance(value, str) else json.dumps(value)
    return result


def _present(**params: Any) -> dict[str, Any]:
    return {key: value for key, value in params.items() if value is not None}
