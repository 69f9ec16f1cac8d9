"""The design's own check, from the documents' worked examples:
`python -m benchmarks.reference_designs.leaseq.selfcheck`.

It drives `LeaseQueueTarget.execute` on both profiles and builds every mutant (an edit that does not apply exactly
once raises). It runs no mutant: whether a suite notices them is for the suite to show.
"""

from __future__ import annotations

from benchmarks.reference_designs.leaseq.mutants import MUTANTS
from benchmarks.reference_designs.leaseq.target import LeaseQueueTarget
from sqs_conformance.model.values import (
    AttributesOk,
    BatchOk,
    ChangeEntry,
    ChangeMessageVisibility,
    ChangeMessageVisibilityBatch,
    CreateQueue,
    DeleteEntry,
    DeleteMessage,
    DeleteMessageBatch,
    Error,
    GetQueueAttributes,
    Ok,
    PeekMessage,
    PeekOk,
    PurgeQueue,
    ReceiveMessage,
    ReceiveOk,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)


def received(response: object) -> list:
    assert isinstance(response, ReceiveOk), response
    return list(response.messages)


def counts(target: LeaseQueueTarget, queue: str) -> tuple[int, int, int]:
    response = target.execute(GetQueueAttributes(queue))
    assert isinstance(response, AttributesOk), response
    a = response.attributes
    return (int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"]),
            int(a["ApproximateNumberOfMessagesDelayed"]))


def error_code(response: object) -> str:
    assert isinstance(response, Error), response
    return response.code


def standard() -> None:
    t = LeaseQueueTarget("sqs-standard")
    x, clock = t.execute, t.clock
    assert x(CreateQueue("q", {"VisibilityTimeout": 30})) == Ok()
    assert x(CreateQueue("q", {"VisibilityTimeout": "30"})) == Ok()
    assert error_code(x(CreateQueue("q", {"VisibilityTimeout": 31}))) == "QueueAlreadyExists"
    assert error_code(x(CreateQueue("bad", {"VisibilityTimeout": 43201}))) == "InvalidAttributeValue"
    assert error_code(x(CreateQueue("bad", {"Colour": "red"}))) == "InvalidAttributeName"
    assert isinstance(x(SendMessage("q", "a")), SendOk)

    # Non-additive change: 30 s queue, +60 at 20 s gives 60 s from then (seed 000).
    [m] = received(x(ReceiveMessage("q")))
    assert (m.receive_count, m.first_receive_ms) == (1, 0)
    assert counts(t, "q") == (0, 1, 0)
    clock.advance(20)
    assert x(ChangeMessageVisibility("q", m.receipt_handle, 60)) is not None
    clock.advance(59)
    assert received(x(ReceiveMessage("q"))) == []
    clock.advance(1)
    assert counts(t, "q") == (1, 0, 0)  # a lease expiring at t no longer holds at t

    # Shortening: 60 s override, 10 s set at 15 s: visible at 25 s (seed 002).
    [m] = received(x(ReceiveMessage("q", visibility_timeout=60)))
    assert m.receive_count == 2 and m.first_receive_ms == 0
    clock.advance(15)
    x(ChangeMessageVisibility("q", m.receipt_handle, 10))
    clock.advance(9.5)
    assert received(x(ReceiveMessage("q"))) == []
    clock.advance(0.5)
    [m] = received(x(ReceiveMessage("q")))  # the queue's 30 s again: the change was not sticky

    # Terminate with 0, then the 12-hour ceiling counted from the receive.
    assert x(ChangeMessageVisibility("q", m.receipt_handle, 0)) is not None
    [m] = received(x(ReceiveMessage("q")))
    assert m.receive_count == 4
    assert not isinstance(x(ChangeMessageVisibility("q", m.receipt_handle, 43200)), Error)
    clock.advance(100)
    assert error_code(x(ChangeMessageVisibility("q", m.receipt_handle, 43200))) == "InvalidParameterValue"
    assert not isinstance(x(ChangeMessageVisibility("q", m.receipt_handle, 43100)), Error)
    assert error_code(x(ChangeMessageVisibility("q", "nonsense", 5))) == "ReceiptHandleIsInvalid"
    assert error_code(x(ChangeMessageVisibility("q", m.receipt_handle, -1))) == "InvalidParameterValue"

    # Delete, twice; then a change on the deleted message is refused.
    assert x(DeleteMessage("q", m.receipt_handle)) == Ok()
    assert x(DeleteMessage("q", m.receipt_handle)) == Ok()
    assert error_code(x(ChangeMessageVisibility("q", m.receipt_handle, 5))) == "InvalidParameterValue"
    assert error_code(x(DeleteMessage("q", "nonsense"))) == "ReceiptHandleIsInvalid"

    # An expired standard handle still deletes (EVIDENCE: REC 2025-03-28).
    x(SendMessage("q", "b"))
    [m] = received(x(ReceiveMessage("q", visibility_timeout=5)))
    clock.advance(6)
    assert x(DeleteMessage("q", m.receipt_handle)) == Ok()
    assert counts(t, "q") == (0, 0, 0)

    # Delays: per message and the queue's; a long poll returns as soon as one is receivable, on the virtual clock.
    x(SendMessage("q", "late", delay_seconds=10))
    assert counts(t, "q") == (0, 0, 1)
    start = clock.now()
    [m] = received(x(ReceiveMessage("q", wait_time_seconds=20)))
    assert clock.now() - start == 10 and m.body == "late"
    x(DeleteMessage("q", m.receipt_handle))
    start = clock.now()
    assert received(x(ReceiveMessage("q", wait_time_seconds=20))) == []
    assert clock.now() - start == 20
    x(SetQueueAttributes("q", {"DelaySeconds": 20, "ReceiveMessageWaitTimeSeconds": 20}))
    x(SendMessage("q", "queue-delayed"))
    start = clock.now()
    [m2] = received(x(ReceiveMessage("q")))
    assert clock.now() - start == 20 and m2.body == "queue-delayed"
    x(SetQueueAttributes("q", {"DelaySeconds": 0, "ReceiveMessageWaitTimeSeconds": 0}))
    assert error_code(x(ReceiveMessage("q", max_messages=11))) == "InvalidParameterValue"
    assert error_code(x(ReceiveMessage("q", wait_time_seconds=21))) == "InvalidParameterValue"
    assert error_code(x(SendMessage("q", "x", delay_seconds=901))) == "InvalidParameterValue"

    # Batches: per-entry results, whole-batch refusals.
    x(PurgeQueue("q"))
    for body in "cde":
        x(SendMessage("q", body))
    ms = received(x(ReceiveMessage("q", max_messages=10)))
    assert len(ms) == 3
    change = x(ChangeMessageVisibilityBatch("q", (ChangeEntry("a", ms[0].receipt_handle, 0),
                                                  ChangeEntry("b", "junk", 0),
                                                  ChangeEntry("c", ms[1].receipt_handle, 0))))
    assert isinstance(change, BatchOk) and change.successful == ("a", "c")
    assert [f.code for f in change.failed] == ["ReceiptHandleIsInvalid"]
    delete = x(DeleteMessageBatch("q", (DeleteEntry("a", "junk"), DeleteEntry("b", ms[2].receipt_handle))))
    assert isinstance(delete, BatchOk) and delete.successful == ("b",) and delete.failed[0].id == "a"
    assert error_code(x(DeleteMessageBatch("q", ()))) == "EmptyBatchRequest"
    assert error_code(x(DeleteMessageBatch("q", tuple(DeleteEntry(f"e{i}", "h") for i in range(11))))) \
        == "TooManyEntriesInBatchRequest"
    assert error_code(x(DeleteMessageBatch("q", (DeleteEntry("a", "h"), DeleteEntry("a", "h"))))) \
        == "BatchEntryIdsNotDistinct"
    assert error_code(x(DeleteMessageBatch("q", (DeleteEntry("a b", "h"),)))) == "InvalidBatchEntryId"

    # Purge: in-flight messages too, once every 60 s.
    received(x(ReceiveMessage("q")))
    assert error_code(x(PurgeQueue("q"))) == "PurgeQueueInProgress"
    clock.advance(60)
    assert x(PurgeQueue("q")) == Ok()
    assert counts(t, "q") == (0, 0, 0)

    # Redrive: maxReceiveCount 1; the dead-letter copy keeps its receive count.
    x(CreateQueue("dlq"))
    policy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}'
    assert x(CreateQueue("src", {"RedrivePolicy": policy, "VisibilityTimeout": 0})) == Ok()
    assert error_code(x(CreateQueue("src2", {"RedrivePolicy": policy.replace("dlq", "nope")}))) \
        == "InvalidParameterValue"
    x(SendMessage("src", "poison"))
    [m] = received(x(ReceiveMessage("src")))
    assert m.receive_count == 1
    assert received(x(ReceiveMessage("src"))) == []
    [d] = received(x(ReceiveMessage("dlq")))
    assert (d.message_id, d.receive_count) == (m.message_id, 2)

    # Peek: regardless of visibility, changing nothing.
    peek = x(PeekMessage("dlq"))
    assert isinstance(peek, PeekOk) and peek.messages[0].receipt_handle is None
    assert counts(t, "dlq") == (0, 1, 0)

    # Redrive in the adapter contract's form (the dead-letter queue by name): moved after maxReceiveCount receives,
    # reported as SQS spells it.
    x(CreateQueue("dlq2"))
    named = {"deadLetterTargetQueue": "dlq2", "maxReceiveCount": 3}
    assert x(CreateQueue("src3", {"RedrivePolicy": named, "VisibilityTimeout": 0})) == Ok()
    assert error_code(x(CreateQueue("src4", {"RedrivePolicy": {**named, "maxReceiveCount": 0}}))) \
        == "InvalidParameterValue"
    assert error_code(x(CreateQueue("src4", {"RedrivePolicy": {**named, "deadLetterTargetQueue": "nope"}}))) \
        == "InvalidParameterValue"
    x(SendMessage("src3", "poison"))
    for n in (1, 2, 3):
        [m] = received(x(ReceiveMessage("src3")))
        assert m.receive_count == n
    assert received(x(ReceiveMessage("src3"))) == []
    [d] = received(x(ReceiveMessage("dlq2")))
    assert (d.message_id, d.receive_count) == (m.message_id, 4)
    attrs = x(GetQueueAttributes("src3"))
    assert isinstance(attrs, AttributesOk) and attrs.attributes["RedrivePolicy"] \
        == '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq2","maxReceiveCount":3}'
    t.reset()
    assert error_code(x(GetQueueAttributes("q"))) == "NonExistentQueue"


def fifo() -> None:
    t = LeaseQueueTarget("sqs-fifo")
    x, clock = t.execute, t.clock
    assert x(CreateQueue("f", {"VisibilityTimeout": 10})) == Ok()
    ids = []
    for i in range(4):
        sent = x(SendMessage("f", f"m{i}", group_id="g" if i < 3 else "h", dedup_id=f"d{i}"))
        assert isinstance(sent, SendOk)
        ids.append(sent.message_id)
    assert x(SendMessage("f", "again", group_id="g", dedup_id="d0")) == SendOk(ids[0])  # deduplicated
    assert counts(t, "f") == (4, 0, 0)
    assert error_code(x(SendMessage("f", "x", group_id="g"))) == "InvalidParameterValue"
    assert error_code(x(SendMessage("f", "x", dedup_id="z"))) == "MissingParameter"

    # One group at a time, in order, the rest of a group locked while any of its messages is in flight.
    ms = received(x(ReceiveMessage("f", max_messages=2, attempt_id="try-1")))
    assert [m.body for m in ms] == ["m0", "m1"]
    again = received(x(ReceiveMessage("f", max_messages=2, attempt_id="try-1")))
    assert again == ms  # same messages, same handles
    [h] = received(x(ReceiveMessage("f", max_messages=10)))
    assert h.body == "m3"  # group g is locked
    x(ChangeMessageVisibility("f", ms[0].receipt_handle, 0))
    [m0] = received(x(ReceiveMessage("f", max_messages=10)))
    assert m0.body == "m0" and m0.receive_count == 2  # only the visible prefix before m1
    fresh = received(x(ReceiveMessage("f", max_messages=2, attempt_id="try-1")))
    assert fresh == []  # m0 was changed: a fresh receive, and g is still locked

    # After the timeout the group comes back in its original order; an expired FIFO handle no longer deletes.
    clock.advance(10)
    assert error_code(x(DeleteMessage("f", ms[1].receipt_handle))) == "InvalidParameterValue"
    back = received(x(ReceiveMessage("f", max_messages=10)))
    assert [m.body for m in back] == ["m0", "m1", "m2", "m3"]
    for m in back:
        assert x(DeleteMessage("f", m.receipt_handle)) == Ok()

    # The deduplication window runs 5 minutes from the first send, deleted or not.
    clock.advance(300 - 10 - 1)
    assert x(SendMessage("f", "again", group_id="g", dedup_id="d0")) == SendOk(ids[0])
    clock.advance(1)
    assert x(SendMessage("f", "again", group_id="g", dedup_id="d0")) != SendOk(ids[0])
    x(SetQueueAttributes("f", {"ContentBasedDeduplication": "true"}))
    first = x(SendMessage("f", "same body", group_id="k"))
    assert x(SendMessage("f", "same body", group_id="k")) == first
    assert error_code(x(SendMessage("f", "x", group_id="k", delay_seconds=5))) == "InvalidParameterValue"


def main() -> None:
    standard()
    fifo()
    for m in MUTANTS:
        assert m.bug and m.target.__mro__[1] is LeaseQueueTarget, m.name
        m.target("sqs-standard")
    fifo_only = sum(m.name.startswith(("fifo-", "attempt-", "dedup-")) for m in MUTANTS)
    print(f"leaseq selfcheck: design ok on both profiles; {len(MUTANTS)} mutants build "
          f"({len(MUTANTS) - fifo_only} standard, {fifo_only} FIFO-only)")


if __name__ == "__main__":
    main()
