"""The event-log queue's own behaviour, checked directly against the documents' worked examples."""

from __future__ import annotations

import pytest

from sqs_conformance.adapters.base import Unsupported
from benchmarks.reference_designs.eventlogq.target import EventLogQueueTarget
from sqs_conformance.model.values import (
    AttributesOk,
    BatchOk,
    ChangeEntry,
    ChangeMessageVisibility,
    ChangeMessageVisibilityBatch,
    ChangeOk,
    CreateQueue,
    DeleteMessage,
    Error,
    GetQueueAttributes,
    Ok,
    PeekMessage,
    PurgeQueue,
    ReceiveMessage,
    ReceiveOk,
    SendMessage,
)


@pytest.fixture
def queue() -> EventLogQueueTarget:
    target = EventLogQueueTarget("sqs-standard")
    assert target.execute(CreateQueue("q")) == Ok()
    return target


def _receive(target: EventLogQueueTarget, **kwargs) -> ReceiveOk:
    answer = target.execute(ReceiveMessage("q", **kwargs))
    assert isinstance(answer, ReceiveOk)
    return answer


def _sent_and_received(target: EventLogQueueTarget) -> str:
    target.execute(SendMessage("q", "body"))
    (message,) = _receive(target).messages
    return message.receipt_handle


def test_a_received_message_is_hidden_then_reappears_after_the_timeout(queue):
    _sent_and_received(queue)
    queue.clock.advance(29.5)
    assert _receive(queue).messages == ()
    queue.clock.advance(0.5)
    (again,) = _receive(queue).messages
    assert again.receive_count == 2
    assert again.first_receive_ms == 0


def test_an_extension_counts_from_the_call_not_from_the_old_deadline(queue):
    # Seed 000: 30 s queue, at 20 s extend by 60 -> 60 s from then (expires at 80), not 10 + 60 = 70 (at 90).
    handle = _sent_and_received(queue)
    queue.clock.advance(20)
    assert queue.execute(ChangeMessageVisibility("q", handle, 60)) == ChangeOk()
    queue.clock.advance(59)
    assert _receive(queue).messages == ()
    queue.clock.advance(1)
    assert len(_receive(queue).messages) == 1


def test_a_shortened_timeout_counts_from_the_call(queue):
    # Seed 002: 60 s queue, 15 s in, change to 10 -> expires at 25 s.
    queue.execute(CreateQueue("short", {"VisibilityTimeout": 60}))
    queue.execute(SendMessage("short", "body"))
    (message,) = queue.execute(ReceiveMessage("short")).messages
    queue.clock.advance(15)
    queue.execute(ChangeMessageVisibility("short", message.receipt_handle, 10))
    queue.clock.advance(10)
    assert len(queue.execute(ReceiveMessage("short")).messages) == 1


def test_terminating_makes_the_message_receivable_at_once(queue):
    handle = _sent_and_received(queue)
    assert queue.execute(ChangeMessageVisibility("q", handle, 0)) == ChangeOk()
    assert len(_receive(queue).messages) == 1


def test_a_change_is_not_sticky(queue):
    handle = _sent_and_received(queue)
    queue.execute(ChangeMessageVisibility("q", handle, 3600))
    queue.clock.advance(3600)
    _receive(queue)
    queue.clock.advance(30)  # the queue's 30 s, not the 3600 s of the earlier change
    assert len(_receive(queue).messages) == 1


def test_the_ceiling_counts_from_the_receive_and_is_refused_not_clipped(queue):
    queue.execute(SendMessage("q", "body"))
    queue.clock.advance(1000)  # waiting before the receive does not count against the 12 hours
    (message,) = _receive(queue).messages
    assert queue.execute(ChangeMessageVisibility("q", message.receipt_handle, 43200)) == ChangeOk()
    queue.clock.advance(100)
    refused = queue.execute(ChangeMessageVisibility("q", message.receipt_handle, 43200))
    assert isinstance(refused, Error) and refused.code == "InvalidParameterValue"
    assert "beyond the limit [43200 seconds]" in refused.message
    assert queue.execute(ChangeMessageVisibility("q", message.receipt_handle, 43100)) == ChangeOk()


def test_delete_removes_the_message_and_later_changes_are_refused(queue):
    handle = _sent_and_received(queue)
    assert queue.execute(DeleteMessage("q", handle)) == Ok()
    assert queue.execute(DeleteMessage("q", handle)) == Ok()  # twice succeeds
    refused = queue.execute(ChangeMessageVisibility("q", handle, 0))
    assert isinstance(refused, Error) and "not available for visibility timeout change" in refused.message
    queue.clock.advance(60)
    assert _receive(queue).messages == ()


def test_malformed_handles_and_out_of_range_values(queue):
    assert queue.execute(DeleteMessage("q", "nonsense")).code == "ReceiptHandleIsInvalid"
    assert queue.execute(ChangeMessageVisibility("q", "nonsense", 5)).code == "ReceiptHandleIsInvalid"
    assert queue.execute(ChangeMessageVisibility("q", "nonsense", 43201)).code == "InvalidParameterValue"
    assert queue.execute(ReceiveMessage("q", max_messages=11)).code == "InvalidParameterValue"
    assert queue.execute(SendMessage("q", "x", delay_seconds=901)).code == "InvalidParameterValue"


def test_batch_entries_fail_one_by_one(queue):
    handle = _sent_and_received(queue)
    answer = queue.execute(ChangeMessageVisibilityBatch("q", (ChangeEntry("a", handle, 0), ChangeEntry("b", "x", 0))))
    assert isinstance(answer, BatchOk)
    assert answer.successful == ("a",)
    assert [f.code for f in answer.failed] == ["ReceiptHandleIsInvalid"]


def test_long_poll_returns_when_a_delayed_message_comes_due(queue):
    queue.execute(SendMessage("q", "later", delay_seconds=5))
    (message,) = _receive(queue, wait_time_seconds=20).messages
    assert queue.clock.now() == 5
    assert message.body == "later"


def test_counts_purge_and_redrive(queue):
    queue.execute(CreateQueue("dlq"))
    queue.execute(CreateQueue("src", {"RedrivePolicy": {"deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}))
    queue.execute(SendMessage("src", "poison"))
    assert len(queue.execute(ReceiveMessage("src", visibility_timeout=0)).messages) == 1
    assert queue.execute(ReceiveMessage("src")).messages == ()  # the second receive moves it instead
    assert queue.execute(GetQueueAttributes("dlq")).attributes["ApproximateNumberOfMessages"] == "1"
    queue.execute(SendMessage("q", "a"))
    queue.execute(SendMessage("q", "b", delay_seconds=10))
    _receive(queue)
    attributes = queue.execute(GetQueueAttributes("q"))
    assert isinstance(attributes, AttributesOk)
    assert (attributes.attributes["ApproximateNumberOfMessagesNotVisible"],
            attributes.attributes["ApproximateNumberOfMessagesDelayed"]) == ("1", "1")
    assert queue.execute(PurgeQueue("q")) == Ok()
    assert queue.execute(PurgeQueue("q")).code == "PurgeQueueInProgress"
    queue.clock.advance(60)
    assert _receive(queue).messages == ()


def test_peek_is_unsupported(queue):
    with pytest.raises(Unsupported):
        queue.execute(PeekMessage("q"))
