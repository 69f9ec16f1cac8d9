"""spoolq on its own, without the suite: a lone client gets the documented answers, and concurrent clients over one
spool never share a message while its visibility timeout runs."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.reference_designs.spoolq.target import SpoolQueue
from benchmarks.reference_designs.spoolq.variants import VARIANTS
from sqs_conformance.adapters.base import Unsupported
from sqs_conformance.model import errors
from sqs_conformance.model.values import (
    AttributesOk,
    BatchOk,
    ChangeEntry,
    ChangeMessageVisibility,
    ChangeMessageVisibilityBatch,
    ChangeOk,
    CreateQueue,
    DeleteEntry,
    DeleteMessage,
    DeleteMessageBatch,
    Error,
    GetQueueAttributes,
    Ok,
    PeekMessage,
    PurgeQueue,
    ReceivedMessage,
    ReceiveMessage,
    ReceiveOk,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)


@pytest.fixture
def queue() -> Iterator[SpoolQueue]:
    target = SpoolQueue("sqs-standard")
    assert target.execute(CreateQueue("q")) == Ok()
    yield target
    target.close()


def send(target: SpoolQueue, body: str = "m", queue: str = "q", delay: int | None = None) -> str:
    sent = target.execute(SendMessage(queue, body, delay_seconds=delay))
    assert isinstance(sent, SendOk) and sent.message_id
    return sent.message_id


def receive(target: SpoolQueue, queue: str = "q", **kwargs: Any) -> tuple[ReceivedMessage, ...]:
    answer = target.execute(ReceiveMessage(queue, **kwargs))
    assert isinstance(answer, ReceiveOk), answer
    return answer.messages


def only(target: SpoolQueue, **kwargs: Any) -> ReceivedMessage:
    messages = receive(target, **kwargs)
    assert len(messages) == 1, messages
    return messages[0]


def test_a_received_message_hides_for_the_queue_timeout_then_comes_back(queue: SpoolQueue) -> None:
    message_id = send(queue, "hello")
    first = only(queue)
    assert (first.message_id, first.body, first.receive_count, first.first_receive_ms) == (message_id, "hello", 1, 0)
    queue.clock.advance(29.9)
    assert receive(queue) == ()
    queue.clock.advance(0.1)
    again = only(queue)
    assert again.receive_count == 2 and again.first_receive_ms == 0
    assert again.receipt_handle != first.receipt_handle


def test_a_receive_override_applies_to_that_receive_only(queue: SpoolQueue) -> None:
    send(queue)
    only(queue, visibility_timeout=5)
    queue.clock.advance(5)
    only(queue)  # the queue's 30 s now
    queue.clock.advance(29)
    assert receive(queue) == ()
    answer = queue.execute(GetQueueAttributes("q"))
    assert isinstance(answer, AttributesOk) and answer.attributes["VisibilityTimeout"] == "30"


def test_a_change_counts_from_the_call_not_from_the_old_deadline(queue: SpoolQueue) -> None:
    send(queue)
    handle = only(queue).receipt_handle
    queue.clock.advance(20)
    assert queue.execute(ChangeMessageVisibility("q", handle, 60)) == ChangeOk()
    queue.clock.advance(59.9)  # 79.9: 20 + 60 is not reached; 30 + 60 would be 90
    assert receive(queue) == ()
    queue.clock.advance(0.1)
    only(queue)


def test_a_change_shortens_and_zero_releases_at_once(queue: SpoolQueue) -> None:
    assert queue.execute(SetQueueAttributes("q", {"VisibilityTimeout": "60"})) == Ok()
    send(queue)
    handle = only(queue).receipt_handle
    queue.clock.advance(15)
    assert queue.execute(ChangeMessageVisibility("q", handle, 10)) == ChangeOk()
    queue.clock.advance(9.9)
    assert receive(queue) == ()
    queue.clock.advance(0.1)
    handle = only(queue).receipt_handle
    assert queue.execute(ChangeMessageVisibility("q", handle, 0)) == ChangeOk()
    assert only(queue).receive_count == 3


def test_the_ceiling_is_twelve_hours_from_the_receive(queue: SpoolQueue) -> None:
    send(queue)
    handle = only(queue, visibility_timeout=43200).receipt_handle
    queue.clock.advance(40000)
    refused = queue.execute(ChangeMessageVisibility("q", handle, 3201))
    assert refused == errors.beyond_ceiling(3201).instantiate()
    assert queue.execute(ChangeMessageVisibility("q", handle, 3200)) == ChangeOk()


def test_delete_removes_and_twice_is_no_error(queue: SpoolQueue) -> None:
    send(queue)
    handle = only(queue, visibility_timeout=0).receipt_handle
    assert queue.execute(DeleteMessage("q", handle)) == Ok()
    assert queue.execute(DeleteMessage("q", handle)) == Ok()
    assert receive(queue) == ()
    gone = queue.execute(ChangeMessageVisibility("q", handle, 10))
    assert isinstance(gone, Error) and errors.not_available_for_change().matches(gone)


def test_delay_hides_before_the_first_receive_and_a_long_poll_waits_for_it(queue: SpoolQueue) -> None:
    send(queue, delay=5)
    assert receive(queue) == ()
    message = only(queue, wait_time_seconds=20)
    assert queue.clock.now() == 5.0 and message.first_receive_ms == 5000


def test_a_long_poll_on_an_empty_queue_returns_at_the_end_of_its_wait(queue: SpoolQueue) -> None:
    assert receive(queue, wait_time_seconds=7) == ()
    assert queue.clock.now() == 7.0


def test_purge_removes_in_flight_messages_too(queue: SpoolQueue) -> None:
    send(queue)
    send(queue)
    only(queue)
    assert queue.execute(PurgeQueue("q")) == Ok()
    queue.clock.advance(30)
    assert receive(queue, max_messages=10) == ()


def test_redrive_moves_the_message_keeping_its_count(queue: SpoolQueue) -> None:
    assert queue.execute(CreateQueue("dlq")) == Ok()
    policy = '{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:dlq", "maxReceiveCount": 1}'
    assert queue.execute(SetQueueAttributes("q", {"RedrivePolicy": policy})) == Ok()
    send(queue)
    only(queue, visibility_timeout=0)
    assert receive(queue) == ()
    assert only(queue, queue="dlq").receive_count == 2


def test_errors_as_sqs_spells_them(queue: SpoolQueue) -> None:
    assert queue.execute(ReceiveMessage("q", max_messages=11)) == errors.max_messages_out_of_range(11).instantiate()
    assert queue.execute(ReceiveMessage("q", wait_time_seconds=21)) == errors.wait_out_of_range(21).instantiate()
    refused = queue.execute(ReceiveMessage("q", visibility_timeout=43201))
    assert isinstance(refused, Error) and refused.code == errors.INVALID_PARAMETER_VALUE
    refused = queue.execute(SetQueueAttributes("q", {"VisibilityTimeout": -1}))
    assert isinstance(refused, Error) and refused.code == errors.INVALID_ATTRIBUTE_VALUE
    bad = queue.execute(DeleteMessage("q", "not-a-handle"))
    assert any(spec.matches(bad) for spec in errors.malformed_handle("not-a-handle", with_text=True, dialect="sqs"))
    bad = queue.execute(ChangeMessageVisibility("q", "not-a-handle", 5))
    assert isinstance(bad, Error) and (bad.code, bad.status) == (errors.RECEIPT_HANDLE_IS_INVALID, 404)
    entries = tuple(DeleteEntry(f"e{i}", "x") for i in range(11))
    assert queue.execute(DeleteMessageBatch("q", entries)) == errors.too_many_entries(11).instantiate()
    twice = (DeleteEntry("a", "x"), DeleteEntry("a", "y"))
    assert queue.execute(DeleteMessageBatch("q", twice)) == errors.batch_ids_not_distinct().instantiate()
    missing = queue.execute(GetQueueAttributes("nowhere"))
    assert isinstance(missing, Error) and missing.code == "QueueDoesNotExist"


def test_batches_report_each_entry(queue: SpoolQueue) -> None:
    send(queue)
    handle = only(queue).receipt_handle
    changed = queue.execute(ChangeMessageVisibilityBatch("q", (ChangeEntry("ok", handle, 0),
                                                               ChangeEntry("bad", "junk", 0))))
    assert isinstance(changed, BatchOk) and changed.successful == ("ok",)
    assert [(f.id, f.code, f.sender_fault) for f in changed.failed] == [("bad", errors.RECEIPT_HANDLE_IS_INVALID, True)]
    deleted = queue.execute(DeleteMessageBatch("q", (DeleteEntry("d", handle),)))
    assert deleted == BatchOk(("d",), ())


def test_fifo_and_peek_are_unsupported(queue: SpoolQueue) -> None:
    with pytest.raises(Unsupported):
        SpoolQueue("sqs-fifo")
    with pytest.raises(Unsupported):
        queue.execute(CreateQueue("q.fifo", {"FifoQueue": "true"}))
    with pytest.raises(Unsupported):
        queue.execute(PeekMessage("q"))


def test_a_shared_connection_shares_queues_and_clock_and_owns_nothing(queue: SpoolQueue) -> None:
    other = queue.shared_connection()
    assert other.clock is queue.clock
    send(other, "from the other")
    assert only(queue).body == "from the other"
    other.close()
    assert queue.directory.exists()
    queue.reset()
    assert other.clock is queue.clock and queue.clock.now() == 0.0
    assert isinstance(other.execute(GetQueueAttributes("q")), Error)


def test_eight_consumers_never_share_a_message_while_it_is_hidden(queue: SpoolQueue) -> None:
    sent = {send(queue, f"m{i}") for i in range(50)}
    delivered: Counter[str] = Counter()
    lock = threading.Lock()
    clients = [queue.shared_connection() for _ in range(8)]
    start = threading.Barrier(len(clients))

    def consume(client: SpoolQueue, seed: int) -> None:
        rng = random.Random(seed)
        start.wait()
        empty = 0
        while empty < 3:
            messages = receive(client, max_messages=rng.randint(1, 10), visibility_timeout=3600)
            empty = 0 if messages else empty + 1
            with lock:
                delivered.update(m.message_id for m in messages if m.message_id)

    threads = [threading.Thread(target=consume, args=(client, i)) for i, client in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    twice = [m for m, n in delivered.items() if n > 1]
    assert twice == []
    assert set(delivered) == sent


def test_concurrent_long_polls_only_move_the_clock_forward(queue: SpoolQueue) -> None:
    readings: list[list[float]] = [[] for _ in range(8)]
    clients = [queue.shared_connection() for _ in range(8)]

    def poll(i: int) -> None:
        for wait in (1, 3, 2):
            readings[i].append(clients[i].clock.now())
            receive(clients[i], wait_time_seconds=wait)
            readings[i].append(clients[i].clock.now())

    threads = [threading.Thread(target=poll, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for seen in readings:
        assert seen == sorted(seen)
    assert queue.clock.now() >= 6.0


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda cls: cls.__name__)
def test_each_variant_answers_a_lone_client(variant: type[SpoolQueue]) -> None:
    assert variant.__doc__
    target = variant("sqs-standard")
    try:
        assert target.execute(CreateQueue("q")) == Ok()
        message_id = send(target, "alone")
        first = only(target)
        assert (first.message_id, first.body, first.receive_count) == (message_id, "alone", 1)
        assert receive(target) == ()
        target.clock.advance(30)
        assert only(target).receive_count == 2
    finally:
        target.close()
