"""The reproduction script a finding comes with sends exactly what the adapter sent: one builder of SQS calls."""

from types import SimpleNamespace

import pytest

from sqs_conformance.adapters.base import Unsupported, VirtualClock
from sqs_conformance.adapters.sqs_api import SqsApiTarget
from sqs_conformance.adapters.sqs_calls import sqs_call
from sqs_conformance.conformance.report import _call_lines
from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteEntry, DeleteMessage,
    DeleteMessageBatch, GetQueueAttributes, PeekMessage, PurgeQueue, ReceiveMessage, ReceiveOk, SendMessage,
    SetQueueAttributes,
)

OPERATIONS = [
    CreateQueue("dlq", {}),
    CreateQueue("q", {"VisibilityTimeout": 30, "DelaySeconds": "2",
                      "RedrivePolicy": {"deadLetterTargetQueue": "dlq", "maxReceiveCount": 3}}),
    CreateQueue("f", {"FifoQueue": "true", "ContentBasedDeduplication": True}),
    SetQueueAttributes("q", {"VisibilityTimeout": -1}),
    GetQueueAttributes("q"),
    SendMessage("q", "m1", delay_seconds=0),
    SendMessage("f", "m2", group_id="g", dedup_id="d"),
    ReceiveMessage("q", max_messages=11, visibility_timeout=43201, wait_time_seconds=1),
    ReceiveMessage("f", attempt_id="a1"),
    ChangeMessageVisibility("q", "rh-1", -5),
    ChangeMessageVisibilityBatch("q", (ChangeEntry("e1", "rh-1", 0), ChangeEntry("bad id!", "garbage", 60))),
    DeleteMessage("q", "rh-1"),
    DeleteMessageBatch("q", (DeleteEntry("e1", "rh-1"),)),
    PurgeQueue("q"),
]


class RecordingClient:
    """A boto3 SQS client that records every call and answers just enough for the caller to go on."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def __getattr__(self, method: str):
        def record(**params):
            self.calls.append((method, params))
            if method == "create_queue":
                return {"QueueUrl": "https://sqs.local/123456789012/" + params["QueueName"]}
            if method == "get_queue_attributes" and params.get("AttributeNames") == ["QueueArn"]:
                return {"Attributes": {"QueueArn": "arn:" + params["QueueUrl"].rsplit("/", 1)[1]}}
            return {"MessageId": "id", "Messages": [], "Successful": [], "Failed": [], "Attributes": {}}
        return record


def sent(calls: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The calls that perform operations (the ARN lookups each side makes in its own order left out)."""
    return [(m, p) for m, p in calls if not (m == "get_queue_attributes" and p["AttributeNames"] == ["QueueArn"])]


def test_the_script_sends_what_the_adapter_sent():
    adapter_client = RecordingClient()
    target = SqsApiTarget("recorded", adapter_client, VirtualClock(), prefix="run-", clock_origin_ms=lambda: 0.0)
    for op in OPERATIONS:
        target.execute(op)

    script_client = RecordingClient()

    def made(queue, reply):  # as the script's own: the queue's URL and ARN remembered
        namespace["queues"][queue] = reply["QueueUrl"]
        namespace["arns"][queue] = script_client.get_queue_attributes(
            QueueUrl=reply["QueueUrl"], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return reply

    namespace = {"sqs": script_client, "queues": {}, "arns": {}, "handles": {}, "prefix": "run-0-",
                 "call": lambda label, method, **params: getattr(script_client, method)(**params),
                 "remember": lambda reply, by_body: reply, "made": made}
    for index, op in enumerate(OPERATIONS):
        step = SimpleNamespace(op=op, index=index, verdict=SimpleNamespace(outcome=SimpleNamespace(
            response=ReceiveOk(()))))
        for line in _call_lines(step):
            exec(line, {"json": __import__("json")}, namespace)

    assert len(sent(adapter_client.calls)) == len(OPERATIONS)
    assert sent(script_client.calls) == sent(adapter_client.calls)
    # attributes go as strings, the redrive policy with the dead-letter queue's ARN
    create = sent(adapter_client.calls)[1][1]
    assert create["Attributes"]["VisibilityTimeout"] == "30"
    assert '"deadLetterTargetArn": "arn:run-0-dlq"' in create["Attributes"]["RedrivePolicy"]


def test_an_operation_sqs_has_no_call_for_is_refused_before_anything_is_sent():
    client = RecordingClient()
    target = SqsApiTarget("recorded", client, VirtualClock(), prefix="run-", clock_origin_ms=lambda: 0.0)
    with pytest.raises(Unsupported):
        target.execute(PeekMessage("q", 1))
    with pytest.raises(Unsupported):
        sqs_call(PeekMessage("q", 1))
    assert client.calls == []
