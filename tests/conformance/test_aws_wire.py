"""The endpoint adapter reads errors as AWS sends them over SQS's JSON protocol: the query-compatible code of the
`x-amzn-query-error` header, not the JSON type of the body. Checked against a loopback endpoint of our own that
answers as AWS does (tests/aws_wire.py), so `--target aws` is checked without AWS."""

import pytest

from sqs_conformance.adapters.endpoint import EndpointTarget
from sqs_conformance.conformance.runner import RunOptions, run
from sqs_conformance.model.values import (
    CreateQueue, DeleteEntry, DeleteMessage, DeleteMessageBatch, Error, PurgeQueue,
    ReceiveMessage, SendMessage, SetQueueAttributes,
)
from tests.aws_wire import AwsLikeEndpoint, sqs_error_codes, wire_error


@pytest.fixture
def wire():
    endpoint = AwsLikeEndpoint("sqs-fifo")
    yield endpoint
    endpoint.stop()
    assert endpoint.failures == []


@pytest.fixture
def target(wire):
    target = EndpointTarget(endpoint_url=wire.url, local_credentials=True)
    yield target
    target.close()


def test_every_error_the_model_knows_is_sent_with_a_json_type_unlike_its_code():
    """The wire format this file checks against: were the body's type the code, nothing here could fail."""
    assert {wire_error(code)[1].split("#")[-1] != code for code in
            {"InvalidParameterValue", "MissingParameter"}} == {True}
    assert wire_error("EmptyBatchRequest")[0] == "AWS.SimpleQueueService.EmptyBatchRequest"


@pytest.mark.parametrize("code", sorted(sqs_error_codes()))
def test_each_error_reads_as_the_query_compatible_code(wire, target, code):
    target.execute(CreateQueue("q", {"FifoQueue": "true"}))
    sent = Error(code, f"what went wrong with {code}", 403 if code == "OverLimit" else 400)
    wire.inject("ReceiveMessage", sent)
    assert target.execute(ReceiveMessage("q", 1)) == sent


def test_errors_the_model_answers_reach_the_adapter_as_the_model_gave_them(wire, target):
    """The same errors, reached by sequences rather than injected: the adapter sees what the model answered."""
    model_answers = []
    target.execute(CreateQueue("q", {"FifoQueue": "true"}))
    steps = [
        SendMessage("q", "no group"),  # MissingParameter
        SendMessage("q", "m", group_id="g", dedup_id="d"),
        ReceiveMessage("q", 20),  # InvalidParameterValue
        SetQueueAttributes("q", {"VisibilityTimeout": "-1"}),  # InvalidAttributeValue
        DeleteMessage("q", "garbage"),  # ReceiptHandleIsInvalid
        DeleteMessageBatch("q", ()),  # EmptyBatchRequest
        DeleteMessageBatch("q", tuple(DeleteEntry(f"e{i}", "garbage") for i in range(11))),  # TooManyEntries
        DeleteMessageBatch("q", (DeleteEntry("bad id!", "garbage"),)),  # InvalidBatchEntryId
        DeleteMessageBatch("q", (DeleteEntry("a", "x"), DeleteEntry("a", "y"))),  # BatchEntryIdsNotDistinct
        PurgeQueue("q"),
        PurgeQueue("q"),  # PurgeQueueInProgress
    ]
    for op in steps:
        answer = target.execute(op)
        model_answers.append(wire.model_answers[-1])
        assert answer == model_answers[-1], op
    codes = {a.code for a in model_answers if isinstance(a, Error)}
    assert codes == sqs_error_codes() - {"OverLimit"}  # OverLimit wants 120,000 messages in flight: injected above


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
def test_the_model_behind_the_aws_wire_conforms_on_every_witness(profile):
    """A whole run through the wire, on a real clock: every error rule is judged on codes read from it."""
    wire = AwsLikeEndpoint(profile)
    first = EndpointTarget(endpoint_url=wire.url, local_credentials=True)
    jobs = [first] + [first.another_connection() for _ in range(7)]
    try:
        result = run(jobs, profile, RunOptions(seed=1, search=False))
    finally:
        for job in jobs:
            job.close()
        wire.stop()
    assert wire.failures == []
    assert {"InvalidParameterValue", "ReceiptHandleIsInvalid"} <= {a.code for a in wire.model_answers
                                                                   if isinstance(a, Error)}
    assert sorted(result.findings) == []
