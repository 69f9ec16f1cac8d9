"""The SQLite design's visibility semantics, step by step on its virtual clock (seeds 000-003, EVIDENCE.md)."""

from __future__ import annotations

import pytest

from sqs_conformance.adapters.base import Unsupported
from benchmarks.reference_designs.sqliteq.target import SqliteQueueTarget
from sqs_conformance.model.values import (
    ChangeMessageVisibility,
    CreateQueue,
    DeleteMessage,
    Error,
    GetQueueAttributes,
    Ok,
    PeekMessage,
    ReceiveMessage,
    ReceiveOk,
    SendMessage,
)


@pytest.fixture
def queue() -> SqliteQueueTarget:
    target = SqliteQueueTarget("sqs-standard")
    assert target.execute(CreateQueue("q", {"VisibilityTimeout": 30})) == Ok()
    target.execute(SendMessage("q", "hello"))
    return target


def receive(target: SqliteQueueTarget, **kwargs: object) -> ReceiveOk:
    answer = target.execute(ReceiveMessage("q", **kwargs))
    assert isinstance(answer, ReceiveOk)
    return answer


def at(target: SqliteQueueTarget, t: float) -> None:
    target.clock.advance_to(t)


def test_a_received_message_is_hidden_then_reappears_after_the_queue_timeout(queue):
    first = receive(queue)
    assert [m.body for m in first.messages] == ["hello"]
    assert first.messages[0].receive_count == 1
    at(queue, 29.9)
    assert receive(queue).messages == ()
    at(queue, 30)
    again = receive(queue).messages
    assert [m.receive_count for m in again] == [2]
    assert again[0].first_receive_ms == 0
    assert again[0].receipt_handle != first.messages[0].receipt_handle


def test_the_receive_override_applies_to_that_receive_only(queue):
    receive(queue, visibility_timeout=5)
    at(queue, 5)
    assert len(receive(queue).messages) == 1  # the override's 5 s, not the queue's 30
    at(queue, 34.9)
    assert receive(queue).messages == ()  # this receive used the queue's 30 s again
    assert queue.execute(GetQueueAttributes("q")).attributes["VisibilityTimeout"] == "30"


def test_an_extension_counts_from_the_call_not_from_the_old_deadline(queue):
    # Seed 000's example: 30 s queue, 20 s in, extend by 60: the message is hidden until 80, not 90.
    handle = receive(queue).messages[0].receipt_handle
    at(queue, 20)
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", handle, 60)), Error)
    at(queue, 79.5)
    assert receive(queue).messages == ()
    at(queue, 80)
    assert len(receive(queue).messages) == 1


def test_a_change_to_zero_releases_the_message_at_once(queue):
    handle = receive(queue).messages[0].receipt_handle
    at(queue, 3)
    queue.execute(ChangeMessageVisibility("q", handle, 0))
    assert len(receive(queue).messages) == 1


def test_the_ceiling_counts_from_the_receive_and_is_not_reset_by_extending(queue):
    at(queue, 100)  # waiting before the receive does not count
    handle = receive(queue).messages[0].receipt_handle
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", handle, 43200)), Error)  # at the receive
    at(queue, 200)
    refused = queue.execute(ChangeMessageVisibility("q", handle, 43200))
    assert isinstance(refused, Error) and refused.code == "InvalidParameterValue"
    assert "beyond the limit [43200 seconds]" in refused.message
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", handle, 43100)), Error)  # to 43300 exactly
    at(queue, 250)
    assert isinstance(queue.execute(ChangeMessageVisibility("q", handle, 43100)), Error)  # the extension reset nothing


def test_a_deleted_message_is_gone_and_its_handle_cannot_change_it(queue):
    handle = receive(queue, visibility_timeout=0).messages[0].receipt_handle
    assert queue.execute(DeleteMessage("q", handle)) == Ok()
    assert queue.execute(DeleteMessage("q", handle)) == Ok()  # deleting twice succeeds
    assert receive(queue).messages == ()
    refused = queue.execute(ChangeMessageVisibility("q", handle, 10))
    assert isinstance(refused, Error) and "not available for visibility timeout change" in refused.message


def test_a_malformed_handle_and_out_of_range_values_are_refused(queue):
    assert queue.execute(DeleteMessage("q", "nonsense")).code == "ReceiptHandleIsInvalid"
    assert queue.execute(ChangeMessageVisibility("q", "nonsense", 10)).code == "ReceiptHandleIsInvalid"
    assert queue.execute(ReceiveMessage("q", max_messages=11)).code == "InvalidParameterValue"
    assert queue.execute(ReceiveMessage("q", wait_time_seconds=21)).code == "InvalidParameterValue"
    assert queue.execute(ReceiveMessage("q", visibility_timeout=43201)).code == "InvalidParameterValue"


def test_a_long_poll_returns_when_a_message_falls_due(queue):
    receive(queue, visibility_timeout=7)
    answer = receive(queue, wait_time_seconds=20)
    assert len(answer.messages) == 1 and queue.clock.now() == 7


def test_peek_is_not_an_sqs_operation(queue):
    with pytest.raises(Unsupported):
        queue.execute(PeekMessage("q"))
