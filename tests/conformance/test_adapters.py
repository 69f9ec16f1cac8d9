"""Adapters: one spelling per error code, and moto on a virtual clock (long polls included)."""

import json

import pytest

from sqs_conformance.adapters.base import normalise_error
from sqs_conformance.adapters.moto_target import MotoTarget
from sqs_conformance.adapters.sqs_api import error_code
from sqs_conformance.model.values import (
    ChangeMessageVisibility, CreateQueue, GetQueueAttributes, ReceiveMessage, ReceiveOk, SendMessage,
)


@pytest.mark.parametrize("code, expected", [
    ("InvalidParameterValue", "InvalidParameterValue"),
    ("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "TooManyEntriesInBatchRequest"),
    ("com.amazonaws.sqs#ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid"),
    ("AWS.SimpleQueueService.EmptyBatchRequest;Sender", "EmptyBatchRequest"),
])
def test_error_codes_are_normalised_once(code, expected):
    assert normalise_error(code, "a\n  message", 400).code == expected
    assert normalise_error(code, "a\n  message").message == "a message"


@pytest.mark.parametrize("details, headers, expected", [
    # botocore today: the header's code in Code, the JSON type in QueryErrorCode
    ({"Code": "InvalidParameterValue", "QueryErrorCode": "InvalidParameterValueException"},
     {"x-amzn-query-error": "InvalidParameterValue;Sender"}, "InvalidParameterValue"),
    # older botocore: the other way round; the header settles it
    ({"Code": "InvalidParameterValueException", "QueryErrorCode": "InvalidParameterValue"},
     {"x-amzn-query-error": "InvalidParameterValue;Sender"}, "InvalidParameterValue"),
    # no header (the query protocol, or an emulator that leaves it out): the code as given
    ({"Code": "InvalidParameterValueException"}, {}, "InvalidParameterValueException"),
])
def test_the_query_compatible_code_is_the_one_read(details, headers, expected):
    assert normalise_error(error_code(details, headers)).code == expected


@pytest.fixture
def moto():
    target = MotoTarget()
    yield target
    target.close()


def test_moto_long_poll_is_a_discrete_event_wait_on_the_virtual_clock(moto):
    moto.execute(CreateQueue("q"))
    moto.execute(SendMessage("q", "hello"))
    handle = moto.execute(ReceiveMessage("q", max_messages=1)).messages[0].receipt_handle
    moto.execute(ChangeMessageVisibility("q", handle, 60))
    moto.clock.advance(20)
    empty = moto.execute(ReceiveMessage("q", max_messages=1, wait_time_seconds=20))
    assert empty == ReceiveOk(()) and moto.clock.now() == pytest.approx(40, abs=0.01)  # waited the whole poll
    got = moto.execute(ReceiveMessage("q", max_messages=1, wait_time_seconds=20))
    assert len(got.messages) == 1 and moto.clock.now() == pytest.approx(60, abs=0.01)  # as soon as it reappeared
    assert got.messages[0].receive_count == 2 and got.messages[0].first_receive_ms == 0


def test_moto_long_poll_looks_again_at_once_where_its_look_changed_the_queue(moto):
    """moto's FIFO receive skips a visible message whose group another pending message holds, then releases the
    group and moves that one to the dead-letter queue: on a real clock its wait returns at once (messages are
    visible) and its next look moves the first too. The virtual wait must not jump over that look."""
    moto.execute(CreateQueue("dlq", {"FifoQueue": "true"}))
    moto.execute(CreateQueue("q", {"FifoQueue": "true",
                                   "RedrivePolicy": {"deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}))
    for body in ("m1", "m2"):
        moto.execute(SendMessage("q", body, group_id="g1", dedup_id=body))
    assert len(moto.execute(ReceiveMessage("q", max_messages=10, visibility_timeout=1)).messages) == 2
    moto.clock.advance(2)
    assert moto.execute(ReceiveMessage("q", max_messages=10, wait_time_seconds=1)) == ReceiveOk(())
    counts = moto.execute(GetQueueAttributes("q")).attributes
    assert (counts["ApproximateNumberOfMessages"], counts["ApproximateNumberOfMessagesNotVisible"]) == ("0", "0")
    assert moto.execute(GetQueueAttributes("dlq")).attributes["ApproximateNumberOfMessages"] == "2"


def test_only_one_moto_target_per_process(moto):
    from sqs_conformance.adapters.base import TargetError

    with pytest.raises(TargetError, match="already open"):
        MotoTarget()


def test_moto_queues_get_a_run_prefix_and_are_deleted(moto):
    """In-process, the housekeeping (ARN lookups, deleting a case's queues) reads moto's backend directly."""
    moto.execute(CreateQueue("dlq"))
    moto.execute(CreateQueue("q", {"RedrivePolicy": {"deadLetterTargetQueue": "dlq", "maxReceiveCount": 2}}))
    url = moto.url("q")
    assert moto.prefix in url
    policy = moto.client.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]
    dead_letter_arn = moto.client.get_queue_attributes(QueueUrl=moto.url("dlq"), AttributeNames=["QueueArn"])
    assert json.loads(policy["RedrivePolicy"])["deadLetterTargetArn"] == dead_letter_arn["Attributes"]["QueueArn"]
    moto.reset()
    assert moto.client.list_queues().get("QueueUrls", []) == []


def test_moto_long_poll_wakes_on_the_microsecond_without_float_noise(moto):
    """A long poll wakes when moto's next message becomes visible, computed from epoch milliseconds: the clock
    lands on the microsecond, so a step meant to meet a deadline meets it (0.0010000001639 was judged a hair past
    0.001, and a correct count at the deadline was flagged)."""
    moto.execute(CreateQueue("q", {"DelaySeconds": 1}))
    moto.execute(SendMessage("q", "m1"))
    moto.execute(ReceiveMessage("q", wait_time_seconds=5))
    woke = moto.clock.now()
    assert 1.0 <= woke <= 1.01 and woke == round(woke, 6)
    moto.clock.advance(0.0010000001639127731)
    assert moto.clock.now() == round(woke + 0.001, 6)
