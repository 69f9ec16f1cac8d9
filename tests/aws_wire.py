"""A loopback SQS endpoint that answers as AWS does over the JSON protocol, with the reference model as its queue.

AWS answers an SQS error with its HTTP status, a JSON body whose `__type` is the JSON error type, and the
query-compatible code in the `x-amzn-query-error` header (`AWS.SimpleQueueService.NonExistentQueue;Sender`
beside `com.amazonaws.sqs#QueueDoesNotExist`, as the SQS developer guide's "Interpreting Amazon SQS JSON API
responses" shows). The suite's rules speak of the query-compatible codes, so `--target endpoint` and
`--target aws` must read that header: this server lets the tests check it without AWS, for every error the
model knows, and lets a whole run go through the same wire.

It binds 127.0.0.1 on a free port, serves from a thread, and `stop()` shuts it down.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sqs_conformance.model import Model, ModelUsageError
from sqs_conformance.model import errors as model_errors
from sqs_conformance.model.values import (
    AttributesOk, BatchOk, ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, CreateQueue,
    DeleteEntry, DeleteMessage, DeleteMessageBatch, Error, GetQueueAttributes, Ok, Operation, PurgeQueue,
    ReceiveMessage, ReceiveOk, Response, SendMessage, SendOk, SetQueueAttributes,
)

ACCOUNT = "000000000000"
REGION = "us-east-1"
QUERY_PREFIX = "AWS.SimpleQueueService."
# Codes AWS sends in the query dialect under the AWS.SimpleQueueService prefix; the others go bare.
PREFIXED = {model_errors.TOO_MANY_ENTRIES, model_errors.EMPTY_BATCH, model_errors.INVALID_BATCH_ENTRY_ID,
            model_errors.BATCH_IDS_NOT_DISTINCT, model_errors.PURGE_IN_PROGRESS, "NonExistentQueue"}
# Where the JSON type is not the query code's own name.
JSON_TYPE = {model_errors.INVALID_PARAMETER_VALUE: "InvalidParameterValueException",
             model_errors.MISSING_PARAMETER: "MissingRequiredParameterException",
             "NonExistentQueue": "QueueDoesNotExist"}


def sqs_error_codes() -> set[str]:
    """Every error code the model can expect of an SQS queue (SMQ's dialect aside)."""
    return {value for name, value in vars(model_errors).items()
            if name.isupper() and isinstance(value, str) and not name.startswith(("SMQ_", "_"))}


def wire_error(code: str) -> tuple[str, str]:
    """(the `x-amzn-query-error` header's code, the body's `__type`) that AWS sends for one of the model's codes."""
    query = QUERY_PREFIX + code if code in PREFIXED else code
    return query, f"com.amazonaws.sqs#{JSON_TYPE.get(code, code)}"


class AwsLikeEndpoint:
    """The model behind AWS's JSON wire format, on this machine's clock. `inject(action, error)` makes the next
    request of that action fail with `error` instead (for errors no short sequence reaches); `model_answers`
    lists what the model answered; `failures`, requests the server itself could not handle."""

    def __init__(self, profile: str = "sqs-standard") -> None:
        self.model = Model(profile)
        self.failures: list[str] = []
        self.model_answers: list[Response] = []  # what the model answered, in order
        self._lock = threading.Lock()
        self._zero = time.monotonic()
        self._epoch_zero_ms = time.time() * 1000
        self._urls: dict[str, str] = {}  # queue name -> URL, while the queue exists
        self._injected: dict[str, Error] = {}
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)) or 0)
                action = self.headers.get("X-Amz-Target", ".").split(".", 1)[1]
                status, headers, payload = endpoint.handle(action, json.loads(body or b"{}"))
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in {"Content-Type": "application/x-amz-json-1.0", "Content-Length": str(len(data)),
                                   "x-amzn-RequestId": str(uuid.uuid4()), **headers}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def inject(self, action: str, error: Error) -> None:
        self._injected[action] = error

    # --- one request ---------------------------------------------------------------------------------------------

    def handle(self, action: str, request: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        injected = self._injected.pop(action, None)
        if injected is not None:
            return _error_answer(injected)
        try:
            if action == "ListQueues":
                prefix = request.get("QueueNamePrefix", "")
                return 200, {}, {"QueueUrls": [u for n, u in self._urls.items() if n.startswith(prefix)]}
            if action == "DeleteQueue":
                self._urls.pop(self._queue_name(request), None)
                return 200, {}, {}
            if action == "GetQueueAttributes" and request.get("AttributeNames") == ["QueueArn"]:
                return 200, {}, {"Attributes": {"QueueArn": _arn(self._queue_name(request))}}
            op = self._operation(action, request)
        except KeyError:  # a queue URL this endpoint never issued, or one deleted since
            return _error_answer(Error("NonExistentQueue", "The specified queue does not exist.", 400))
        with self._lock:
            try:
                response, outcome = self.model.step(op, time.monotonic() - self._zero)
            except ModelUsageError as error:
                self.failures.append(f"{action}: {error}")
                return 500, {}, {"__type": "com.amazonaws.sqs#InternalFailure", "message": str(error)}
            self.model_answers.append(response)
            if isinstance(op, CreateQueue) and not isinstance(response, Error):
                self._urls[op.queue] = f"{self.url}/{ACCOUNT}/{op.queue}"
        if outcome.at is not None:  # a long poll answers when a message arrived, or at the end of its wait
            time.sleep(max(0.0, self._zero + outcome.at - time.monotonic()))
        if isinstance(response, Error):
            return _error_answer(response)
        result = self._body(response)
        if isinstance(op, CreateQueue):
            result["QueueUrl"] = self._urls[op.queue]
        if isinstance(op, GetQueueAttributes):
            result["Attributes"]["QueueArn"] = _arn(op.queue)
        return 200, {}, result

    def _queue_name(self, request: dict[str, Any]) -> str:
        name = request["QueueUrl"].rsplit("/", 1)[-1]
        self._urls[name]  # noqa: B018 (raises KeyError for a queue this endpoint does not hold)
        return name

    def _operation(self, action: str, r: dict[str, Any]) -> Operation:
        if action == "CreateQueue":
            return CreateQueue(r["QueueName"], _attributes(r.get("Attributes", {})))
        queue = self._queue_name(r)
        if action == "SetQueueAttributes":
            return SetQueueAttributes(queue, _attributes(r.get("Attributes", {})))
        if action == "GetQueueAttributes":
            return GetQueueAttributes(queue)
        if action == "SendMessage":
            return SendMessage(queue, r["MessageBody"], r.get("DelaySeconds"), r.get("MessageGroupId"),
                               r.get("MessageDeduplicationId"))
        if action == "ReceiveMessage":
            return ReceiveMessage(queue, r.get("MaxNumberOfMessages"), r.get("VisibilityTimeout"),
                                  r.get("WaitTimeSeconds"), r.get("ReceiveRequestAttemptId"))
        if action == "ChangeMessageVisibility":
            return ChangeMessageVisibility(queue, r["ReceiptHandle"], r["VisibilityTimeout"])
        if action == "ChangeMessageVisibilityBatch":
            return ChangeMessageVisibilityBatch(queue, tuple(
                ChangeEntry(e["Id"], e["ReceiptHandle"], e.get("VisibilityTimeout")) for e in r.get("Entries", [])))
        if action == "DeleteMessage":
            return DeleteMessage(queue, r["ReceiptHandle"])
        if action == "DeleteMessageBatch":
            return DeleteMessageBatch(queue, tuple(DeleteEntry(e["Id"], e["ReceiptHandle"])
                                                   for e in r.get("Entries", [])))
        if action == "PurgeQueue":
            return PurgeQueue(queue)
        raise ModelUsageError(f"this endpoint has no {action}")

    def _body(self, response: Response) -> dict[str, Any]:
        if isinstance(response, (Ok, ChangeOk)):
            return {}
        if isinstance(response, SendOk):
            return {"MessageId": response.message_id}
        if isinstance(response, AttributesOk):
            return {"Attributes": dict(response.attributes)}
        if isinstance(response, BatchOk):
            return {"Successful": [{"Id": i} for i in response.successful],
                    "Failed": [{"Id": f.id, "SenderFault": f.sender_fault, "Code": f.code, "Message": f.message}
                               for f in response.failed]}
        if isinstance(response, ReceiveOk):
            return {"Messages": [{
                "MessageId": m.message_id, "ReceiptHandle": m.receipt_handle, "Body": m.body,
                "MD5OfBody": hashlib.md5(m.body.encode()).hexdigest(),
                "Attributes": {"ApproximateReceiveCount": str(m.receive_count),
                               "ApproximateFirstReceiveTimestamp": str(round(self._epoch_zero_ms
                                                                             + (m.first_receive_ms or 0)))},
            } for m in response.messages]}
        raise ModelUsageError(f"no wire form for {type(response).__name__}")


def _error_answer(error: Error) -> tuple[int, dict[str, str], dict[str, Any]]:
    query, json_type = wire_error(error.code)
    return error.status, {"x-amzn-query-error": f"{query};Sender"}, {"__type": json_type, "message": error.message}


def _arn(queue: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue}"


def _attributes(attributes: dict[str, str]) -> dict[str, Any]:
    """Attributes as the model reads them: a RedrivePolicy names its dead-letter queue by ARN on the wire."""
    result: dict[str, Any] = dict(attributes)
    if "RedrivePolicy" in result and result["RedrivePolicy"]:
        policy = json.loads(result["RedrivePolicy"])
        result["RedrivePolicy"] = {"deadLetterTargetQueue": policy["deadLetterTargetArn"].rsplit(":", 1)[-1],
                                   "maxReceiveCount": policy["maxReceiveCount"]}
    return result
