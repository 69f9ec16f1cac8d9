"""Any target that speaks the SQS API, through a boto3 client: moto in-process, moto server, emulators, AWS.

Queue names get a per-run prefix, so the suite only ever touches queues it created. The client does not
validate parameters (the service must) and does not retry (a retry could hide a receive that happened): an
answer that never came is reported as `Unknown`, and only a throttled request, which surely did nothing, is
sent again.
"""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any
from collections.abc import Callable

import botocore.exceptions
from botocore.config import Config

from sqs_conformance.adapters import interrupt
from sqs_conformance.adapters.base import Clock, Target, TargetError, normalise_error, redact
from sqs_conformance.adapters.sqs_calls import CLIENT_OPTIONS, QueueName, QueueUrl, RedrivePolicy, resolve, sqs_call
from sqs_conformance.model.values import (
    AttributesOk, BatchOk, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, CreateQueue,
    DeleteMessageBatch, EntryFailure, GetQueueAttributes, Ok, Operation, ReceivedMessage, ReceiveMessage, ReceiveOk,
    Response, SendMessage, SendOk, Unknown,
)

CLIENT_CONFIG = Config(**CLIENT_OPTIONS)
REPORTED_ATTRIBUTES = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                       "ApproximateNumberOfMessagesDelayed", "VisibilityTimeout", "DelaySeconds",
                       "ReceiveMessageWaitTimeSeconds")
_THROTTLED = {"Throttling", "ThrottlingException", "RequestThrottled", "RequestThrottledException"}
_THROTTLE_RETRIES = 4
# Errors after which nobody knows whether the request took effect.
UNANSWERED = (botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectionClosedError,
              botocore.exceptions.EndpointConnectionError, botocore.exceptions.ConnectTimeoutError)
UNKNOWN_IN_A_ROW = 5  # then the endpoint is taken to be gone, and the run stops with that error


class SqsApiTarget(Target):
    profiles = frozenset({"sqs-standard", "sqs-fifo"})

    def __init__(self, name: str, client: Any, clock: Clock, prefix: str, clock_origin_ms: Callable[[], float],
                 tags: dict[str, str] | None = None):
        self.name = name
        self.tags = tags or {}  # put on every queue it creates, so that `cleanup` can tell them from others
        self._unknown_in_a_row = 0
        self.client = client
        self.clock = clock
        self.prefix = prefix
        self._origin_ms = clock_origin_ms  # the epoch time (ms) of the clock's zero, to express timestamps in it
        self._urls: dict[str, str] = {}
        self._unanswered_creates: set[str] = set()  # real names of queues whose CreateQueue answer never came
        self._case = 0
        self._arns: dict[str, str] = {}

    # --- the interface ---------------------------------------------------------------------------------

    def execute(self, op: Operation) -> Response:
        sqs_call(op)  # raises Unsupported before anything is sent (a peek: SQS today has none)
        for attempt in range(_THROTTLE_RETRIES + 1):
            response = self._attempt(op)
            throttled = getattr(response, "code", None) in _THROTTLED
            if not throttled or attempt == _THROTTLE_RETRIES:
                break
            interrupt.sleep(0.2 * 2 ** attempt)  # a throttled request did nothing: sending it again hides nothing
        self._unknown_in_a_row = self._unknown_in_a_row + 1 if isinstance(response, Unknown) else 0
        if self._unknown_in_a_row >= UNKNOWN_IN_A_ROW:
            raise TargetError(f"{self.name} stopped answering ({UNKNOWN_IN_A_ROW} requests in a row): "
                              f"{response.reason}")  # type: ignore[union-attr]
        return response

    def _attempt(self, op: Operation) -> Response:
        try:
            return self._call(op)
        except botocore.exceptions.ClientError as error:
            details = error.response.get("Error", {})
            metadata = error.response.get("ResponseMetadata", {})
            status = metadata.get("HTTPStatusCode", 400)
            if status >= 500:  # the service failed while handling it: it may or may not have taken effect
                return Unknown(redact(f"HTTP {status} {details.get('Code', '')}".strip()))
            return normalise_error(error_code(details, metadata.get("HTTPHeaders", {})), details.get("Message", ""),
                                   status)
        except UNANSWERED as error:
            return Unknown(redact(f"{type(error).__name__}: {error}"))

    def reset(self) -> None:
        """A new case: delete this case's queues and name the next case's afresh (AWS refuses to recreate a
        queue name for 60 s after deleting it)."""
        self._delete_created_queues()
        self._case += 1

    def close(self) -> None:
        self._delete_created_queues()

    def _delete_created_queues(self) -> None:
        """Every queue this case created, those whose CreateQueue answer was lost included (looked up by name),
        each delete tried again while its answer does not come: a lost answer must not leave a queue behind."""
        urls = list(self._urls.values())
        for name in self._unanswered_creates:
            reply = _persist(partial(self.client.get_queue_url, QueueName=name))
            urls += [reply["QueueUrl"]] if reply else []
        for url in urls:
            _persist(partial(self.client.delete_queue, QueueUrl=url))  # best effort: `cleanup` finds the rest
        self._forget_created_queues()

    def _forget_created_queues(self) -> None:
        self._urls.clear()
        self._unanswered_creates.clear()
        self._arns.clear()

    # --- queues -----------------------------------------------------------------------------------------------

    def real_name(self, queue: str, fifo: bool) -> str:
        name = f"{self.prefix}{self._case}-{queue}"
        return name + ".fifo" if fifo and not name.endswith(".fifo") else name

    def url(self, queue: str) -> str:
        try:
            return self._urls[queue]
        except KeyError:
            raise TargetError(f"{self.name}: queue {queue!r} was not created by this run") from None

    def _resolve(self, marker: Any) -> Any:
        if isinstance(marker, QueueName):
            return self.real_name(marker.queue, marker.fifo)
        if isinstance(marker, QueueUrl):
            return self.url(marker.queue)
        if isinstance(marker, RedrivePolicy):
            return json.dumps({"deadLetterTargetArn": self._arn(marker.dead_letter_queue),
                               "maxReceiveCount": marker.max_receive_count})
        return marker.value  # a receipt handle: the target's own already

    def _arn(self, queue: str) -> str:
        if queue not in self._arns:
            reply = self.client.get_queue_attributes(QueueUrl=self.url(queue), AttributeNames=["QueueArn"])
            self._arns[queue] = reply["Attributes"]["QueueArn"]
        return self._arns[queue]

    def _call(self, op: Operation) -> Response:
        call = sqs_call(op)
        params = resolve(call.params, self._resolve)
        if isinstance(op, CreateQueue) and self.tags:
            params["tags"] = self.tags  # so that `cleanup` can tell the suite's queues from others
        if isinstance(op, CreateQueue):
            self._unanswered_creates.add(params["QueueName"])  # until its answer comes
        reply = getattr(self.client, call.method)(**params)
        if isinstance(op, CreateQueue):
            if interrupt.requested():
                # The run stopped while this answer was on its way, and its cleanup may have gone by already
                _persist(partial(self.client.delete_queue, QueueUrl=reply["QueueUrl"]))
                raise interrupt.Interrupted()
            self._urls[op.queue] = reply["QueueUrl"]
            self._unanswered_creates.discard(params["QueueName"])
        return self._answer(op, reply)

    def _answer(self, op: Operation, reply: dict[str, Any]) -> Response:
        """The reply of a call that succeeded, as the model's response to `op`."""
        if isinstance(op, GetQueueAttributes):
            attributes = reply.get("Attributes", {})
            return AttributesOk({k: attributes[k] for k in REPORTED_ATTRIBUTES if k in attributes})
        if isinstance(op, SendMessage):
            return SendOk(reply["MessageId"])
        if isinstance(op, ReceiveMessage):
            return ReceiveOk(tuple(self._received(m) for m in reply.get("Messages", [])))
        if isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)):
            return _batch(reply)
        if isinstance(op, ChangeMessageVisibility):
            return ChangeOk()
        return Ok()

    def _received(self, message: dict[str, Any]) -> ReceivedMessage:
        attributes = message.get("Attributes", {})
        count = attributes.get("ApproximateReceiveCount")
        first = attributes.get("ApproximateFirstReceiveTimestamp")
        return ReceivedMessage(
            message["MessageId"], message.get("Body", ""), message["ReceiptHandle"],
            int(count) if count is not None else None,
            round(int(first) - self._origin_ms()) if first is not None else None,
        )


def queue_url_parts(url: str) -> tuple[str, str]:
    """The account and the queue name a queue URL ends with (`…/ACCOUNT/NAME`)."""
    account, name = url.rstrip("/").split("/")[-2:]
    return account, name


_PERSIST_ATTEMPTS = 4


def _persist(request: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    """A request of the suite's own housekeeping (never one under test), sent again while its answer is lost, the
    service fails (5xx) or throttles; None where it is refused or never answered. After a stop it is tried once:
    the run's cleanup has a bounded wait."""
    for attempt in range(_PERSIST_ATTEMPTS):
        try:
            return request()
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
            if not worth_another_try(error) or interrupt.requested():
                return None
        time.sleep(0.1 * 2 ** attempt)
    return None


def worth_another_try(error: Exception) -> bool:
    """Whether a request of the suite's own housekeeping may succeed if sent again: its answer was lost, or the
    service failed (5xx) or throttled it."""
    if isinstance(error, UNANSWERED):
        return True
    if isinstance(error, botocore.exceptions.ClientError):
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)
        return status >= 500 or error.response.get("Error", {}).get("Code") in _THROTTLED
    return False


QUERY_ERROR_HEADER = "x-amzn-query-error"


def error_code(details: dict[str, Any], headers: dict[str, str]) -> str | None:
    """The error code as AWS means it. Over SQS's JSON protocol AWS answers with the JSON type in the body
    (`__type`: `InvalidParameterValueException`) and the query-compatible code in the `x-amzn-query-error` header
    (`InvalidParameterValue;Sender`); that code is the one the SQS documentation and every rule speak of.
    botocore puts it in `Error.Code` and the JSON type in `Error.QueryErrorCode` (older releases did the
    reverse), so the header itself is read first. A service that sends no header (the query protocol, or an
    emulator that leaves it out) is taken at its `Error.Code`."""
    query_error = headers.get(QUERY_ERROR_HEADER, "").split(";")[0].strip()
    return query_error or details.get("Code")


def _batch(reply: dict[str, Any]) -> BatchOk:
    failed = []
    for f in reply.get("Failed", []):
        error = normalise_error(f.get("Code"), f.get("Message", ""))
        failed.append(EntryFailure(f["Id"], error.code, error.message, bool(f.get("SenderFault", False))))
    return BatchOk(tuple(s["Id"] for s in reply.get("Successful", [])), tuple(failed))
