"""Every docs/evidence.md row that states an outcome, in each profile it applies to.

Where a row is checked through `observe`, both sides are tested: a response the evidence permits must not be
flagged, and one it rules out must be flagged with the row's rule id.
"""

import dataclasses
import pytest

from sqs_conformance.model.values import (
    BatchOk, ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, CreateQueue, DeleteEntry,
    DeleteMessage, DeleteMessageBatch, Error, Ok, PeekMessage, PurgeQueue, ReceivedMessage, ReceiveMessage, ReceiveOk,
    SendMessage, SendOk, SetQueueAttributes,
)
from tests.model.scenario import Scenario, error_code

SQS = ["sqs-standard", "sqs-fifo", "sqs-2008"]
CURRENT = ["sqs-standard", "sqs-fifo"]
STANDARDISH = ["sqs-standard", "sqs-2008"]


def flagged(verdict) -> list[str]:
    return [d.rule for d in verdict.divergences]


def received(q: Scenario, message_id: str, count: int | None = None) -> ReceiveOk:
    """A target's answer returning one message, ids already translated into the model's."""
    body = q.model.messages[message_id].body
    return ReceiveOk((ReceivedMessage(message_id, body, None, count),))


EMPTY = ReceiveOk(())


# --- range ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", SQS)
@pytest.mark.parametrize("value, ok", [(0, True), (43200, True), (-1, False), (43201, False), ("30", False),
                                        (1.5, False), (True, False)])
def test_range_on_change(profile, value, ok):
    q = Scenario(profile)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert (error_code(q.change(handle, value, at=0)) is None) == ok
    if not ok:
        assert error_code(q.change(handle, value, at=0)) == "InvalidParameterValue"


@pytest.mark.parametrize("profile", SQS)
def test_range_on_receive_override(profile):
    q = Scenario(profile)
    q.send()
    response = q.do(ReceiveMessage("q", visibility_timeout=43201), 0)
    assert error_code(response) == "InvalidParameterValue"
    assert q.receivable(0) != []  # nothing was received


def test_smq_range_starts_at_one():
    q = Scenario("smq")
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert error_code(q.change(handle, 0, at=1)) == "InvalidArgument"
    assert error_code(q.change(handle, 1, at=1)) is None


def test_out_of_range_codes_not_text():
    q = Scenario()
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    op = ChangeMessageVisibility("q", handle, 43201)
    assert flagged(q.check(op, 1, Error("InvalidParameterValue", "any text at all"))) == []
    assert flagged(q.check(op, 1, Error("InvalidAttributeValue", "x"))) == ["VIS-RANGE"]
    assert flagged(q.check(op, 1, ChangeOk())) == ["VIS-RANGE"]


# --- non-additive change, shorten, terminate, not sticky --------------------------------------------------------------

@pytest.mark.parametrize("profile", SQS + ["smq"])
def test_nonadditive_extension_checked_both_ways(profile):
    def setup():
        q = Scenario(profile)
        mid = q.send()
        handle = q.receive_one(at=0).receipt_handle
        response = q.change(handle, 60, at=20)
        assert isinstance(response, ChangeOk)
        return q, mid

    q, mid = setup()
    probe = ReceiveMessage("q", max_messages=10) if profile != "smq" else ReceiveMessage("q")
    early = q.check(probe, 79, received(q, mid, 2 if profile in CURRENT else None))
    if profile in STANDARDISH:  # permitted once as an at-least-once redelivery, and counted against the rule
        assert flagged(early) == [] and early.outcome.notes[0].rules == ("VIS-EXTEND-NONADDITIVE",
                                                                         "RCV-AT-LEAST-ONCE")
    else:
        assert flagged(early) == ["VIS-EXTEND-NONADDITIVE"]
    q, mid = setup()
    assert flagged(q.check(probe, 80, received(q, mid, 2 if profile in CURRENT else None))) == []


@pytest.mark.parametrize("profile", CURRENT)
def test_additive_target_is_caught_by_a_long_poll(profile):
    q = Scenario(profile)
    q.send()
    q.change(q.receive_one(at=0).receipt_handle, 60, at=20)
    op = ReceiveMessage("q", max_messages=1, wait_time_seconds=1)
    verdict = q.check(op, 80.001, EMPTY)  # an additive target still hides it until 90
    assert verdict.divergences and verdict.divergences[0].rules[0] == "VIS-EXTEND-NONADDITIVE"
    assert "RCV-LONG-POLL" in verdict.divergences[0].rules


@pytest.mark.parametrize("profile", CURRENT)
def test_exactly_at_the_deadline_either_answer_is_permitted(profile):
    for observed_returned in (True, False):
        q = Scenario(profile)
        mid = q.send()
        q.receive_one(at=0)
        answer = received(q, mid, 2) if observed_returned else EMPTY
        verdict = q.check(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), 30, answer)
        assert flagged(verdict) == []
    q = Scenario(profile)
    q.send()
    q.receive_one(at=0)
    late = q.check(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), 30.001, EMPTY)
    assert flagged(late) == ["RCV-REAPPEAR"]


def test_short_poll_may_return_nothing_even_when_visible():
    q = Scenario()
    q.send()
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 0, EMPTY)) == []
    assert flagged(q.check(ReceiveMessage("q", max_messages=1, wait_time_seconds=2), 0, EMPTY)) == ["RCV-LONG-POLL"]


@pytest.mark.parametrize("profile", SQS)
def test_terminate_then_receive_again(profile):
    q = Scenario(profile)
    mid = q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.change(handle, 0, at=3)
    again = q.receive_one(at=3)
    assert again.message_id == mid and again.receipt_handle != handle


@pytest.mark.parametrize("profile", SQS + ["smq"])
def test_not_sticky_flagged_when_the_extension_is_remembered(profile):
    q = Scenario(profile)
    mid = q.send()
    q.change(q.receive_one(at=0).receipt_handle, 100, at=0)
    q.receive_one(at=100)
    probe = ReceiveMessage("q", max_messages=10) if profile != "smq" else ReceiveMessage("q")
    count = 3 if profile in CURRENT else None
    assert flagged(q.check(probe, 130, received(q, mid, count))) == []


def test_remembered_extension_is_attributed_to_not_sticky():
    q = Scenario()
    q.send()
    q.change(q.receive_one(at=0).receipt_handle, 100, at=0)
    q.receive_one(at=100)
    verdict = q.check(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), 130.001, EMPTY)
    assert verdict.divergences[0].rules[:2] == ("VIS-NOT-STICKY", "RCV-REAPPEAR")


# --- the 12-hour ceiling ----------------------------------------------------------------------------------------------

CEILING_TEXT = ("Value {v} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the "
                "message is beyond the limit [43200 seconds]")


@pytest.mark.parametrize("profile", CURRENT)
@pytest.mark.parametrize("period", ["", "."])
def test_ceiling_rejects_with_the_recorded_text(profile, period):
    q = Scenario(profile)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    op = ChangeMessageVisibility("q", handle, 43200)
    error = Error("InvalidParameterValue", CEILING_TEXT.format(v=43200) + period)
    assert flagged(q.check(op, 5, error)) == []


@pytest.mark.parametrize("profile", CURRENT)
def test_ceiling_clipping_target_is_flagged(profile):
    q = Scenario(profile)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert flagged(q.check(ChangeMessageVisibility("q", handle, 43200), 5, ChangeOk())) == ["VIS-CEILING"]


@pytest.mark.parametrize("at, value, accept_ok, reject_ok", [
    (0, 43200, True, True),  # exactly at the ceiling: AWS 'may already fail by a second'
    (1, 43198, True, False),  # a second and more below: must be accepted
    (1, 43200, False, True),  # beyond: must be rejected, never clipped
])
def test_ceiling_edge(at, value, accept_ok, reject_ok):
    for observed, permitted in [(ChangeOk(), accept_ok),
                                (Error("InvalidParameterValue", CEILING_TEXT.format(v=value)), reject_ok)]:
        q = Scenario()
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        verdict = q.check(ChangeMessageVisibility("q", handle, value), at, observed)
        assert flagged(verdict) == ([] if permitted else ["VIS-CEILING"])


def test_ceiling_counted_from_send_is_attributed():
    q = Scenario()
    q.send(at=0)
    handle = q.receive_one(at=10_000).receipt_handle
    verdict = q.check(ChangeMessageVisibility("q", handle, 43199), 10_000,
                      Error("InvalidParameterValue", CEILING_TEXT.format(v=43199)))
    assert flagged(verdict) == ["VIS-CEILING-FROM-RECEIVE"]


def test_ceiling_reset_by_an_extension_is_attributed():
    q = Scenario()
    q.send()
    handle = q.receive_one(at=0, visibility_timeout=43200).receipt_handle
    q.change(handle, 20_000, at=10_000)
    verdict = q.check(ChangeMessageVisibility("q", handle, 30_000), 20_000, ChangeOk())
    assert verdict.divergences[0].rules == ("VIS-CEILING-NO-RESET", "VIS-CEILING")


@pytest.mark.parametrize("value, accepted, refused", [
    (42_250, [], []),  # past 12 h from the stale handle's receive, within them from the latest: either answer
    (42_150, [], ["VIS-CEILING"]),  # within 12 h of both receives: accepted
    (42_310, ["VIS-CEILING"], []),  # past 12 h of both: refused
])
def test_a_stale_handle_s_ceiling_may_count_from_its_own_receive_or_the_latest(value, accepted, refused):
    """Standard queue, a change through the handle of an earlier receive (CMV-STALE): nothing records which
    receive its 12 hours count from, so what either base permits is permitted, and nothing between decides."""
    for observed, rule_ids in [(ChangeOk(), accepted),
                               (Error("InvalidParameterValue", CEILING_TEXT.format(v=value)), refused)]:
        q = Scenario(VisibilityTimeout=30)
        q.send()
        stale = q.receive_one(at=0).receipt_handle
        # received again once the first timeout lapsed, and in flight still at the change: `stale` is an older handle
        q.receive_one(at=100, visibility_timeout=2_000)
        verdict = q.check(ChangeMessageVisibility("q", stale, value), 1_000, observed)
        assert [r for d in verdict.divergences for r in d.rules if r in rule_ids] == rule_ids, (value, observed)
        assert bool(verdict.divergences) == bool(rule_ids), (value, observed)
        if not rule_ids and not accepted and not refused:
            assert "VIS-CEILING" not in verdict.decisive


@pytest.mark.parametrize("profile", ["sqs-2008", "smq"])
def test_no_cumulative_ceiling_documented_for_older_apis(profile):
    q = Scenario(profile, VisibilityTimeout=43200)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    response = q.change(handle, 43200, at=40_000)
    assert isinstance(response, ChangeOk)


# --- queue attribute change -------------------------------------------------------------------------------------------

def test_queue_attribute_change_applies_to_later_receives_with_propagation():
    q = Scenario()
    first = q.send("a")
    q.receive_one(at=0)  # in flight until 30
    q.set_attributes(1, VisibilityTimeout=5)
    assert q.receivable(29.999) == []  # in-flight deadline does not move
    second = q.send("b", at=2)
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 2, received(q, second, 1))) == []
    assert len(q.model.messages[second].states) == 2  # within 60 s of the change: hidden for 5 s or for 30 s
    long_poll = ReceiveMessage("q", max_messages=10, wait_time_seconds=1)
    verdict = q.check(long_poll, 7.5, EMPTY)
    assert flagged(verdict) == []  # not surely visible yet
    verdict = q.check(long_poll, 32, EMPTY)  # both are surely visible now
    assert flagged(verdict) and "RCV-LONG-POLL" in verdict.divergences[0].rules
    assert verdict.divergences[0].message_ids[0] in (first, second)



def test_a_queue_timeout_change_exercises_later_receives_only_where_it_finds_a_message_in_flight():
    # Its witness must change the timeout with a message in flight, so that a queue moving deadlines fails it
    q = Scenario()
    change = SetQueueAttributes("q", {"VisibilityTimeout": 5})
    assert "QATTR-LATER-RECEIVES" not in q.model.expect(change, 0).rules  # an empty queue: nothing to move
    q.send("a")
    assert "QATTR-LATER-RECEIVES" not in q.model.expect(change, 0).rules  # visible: nothing to move either
    q.receive_one(at=0)
    assert "QATTR-LATER-RECEIVES" in q.model.expect(change, 1).rules
    assert "QATTR-LATER-RECEIVES" not in q.model.expect(change, 30).rules  # its deadline passed


# --- handles ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", SQS)
def test_malformed_handle(profile):
    q = Scenario(profile)
    q.send()
    assert error_code(q.change("garbage", 10, at=0)) == "ReceiptHandleIsInvalid"
    assert error_code(q.delete("garbage", at=0)) == "ReceiptHandleIsInvalid"
    op = DeleteMessage("q", "garbage")
    text = 'The input receipt handle "garbage" is not a valid receipt handle.'
    assert flagged(q.check(op, 0, Error("ReceiptHandleIsInvalid", text))) == []
    assert flagged(q.check(op, 0, Error("ReceiptHandleIsInvalid", "something else"))) == ["HANDLE-MALFORMED"]
    assert flagged(q.check(op, 0, Ok())) == ["HANDLE-MALFORMED"]


@pytest.mark.parametrize("profile", SQS)
def test_change_on_a_deleted_message(profile):
    q = Scenario(profile)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.delete(handle, at=1)
    op = ChangeMessageVisibility("q", handle, 10)
    text = ("Value AQEBxyz for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not "
            "available for visibility timeout change.")
    assert flagged(q.check(op, 2, Error("InvalidParameterValue", text))) == []
    assert flagged(q.check(op, 2, ChangeOk())) == ["CMV-DELETED"]


@pytest.mark.parametrize("profile", STANDARDISH)
def test_change_with_an_expired_handle_answers_200_and_may_or_may_not_hide(profile):
    q = Scenario(profile)
    mid = q.send()
    handle = q.receive_one(at=0).receipt_handle
    op = ChangeMessageVisibility("q", handle, 100)
    assert flagged(q.check(op, 40, Error("MessageNotInflight", ""))) == ["CMV-EXPIRED"]
    verdict = q.check(op, 40, ChangeOk())
    assert flagged(verdict) == []
    assert len(q.model.messages[mid].states) == 2  # hidden until 140, or visible: both permitted
    # Whatever the target did, both of these answers are permitted now; observing one narrows the state.
    wait = {"wait_time_seconds": 1} if profile == "sqs-standard" else {}
    assert flagged(q.check(ReceiveMessage("q", max_messages=1, **wait), 41, EMPTY)) == []
    assert len(q.model.messages[mid].states) == 2
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 41, received(q, mid))) == []
    assert len(q.model.messages[mid].states) == 1


@pytest.mark.parametrize("profile", STANDARDISH)
def test_change_with_a_stale_handle_takes_effect(profile):
    q = Scenario(profile)
    mid = q.send()
    old = q.receive_one(at=0).receipt_handle
    q.receive_one(at=30)  # received again: `old` is stale
    assert isinstance(q.change(old, 0, at=31), ChangeOk)
    assert q.receivable(31) == [mid]  # v = 0 released the message


@pytest.mark.parametrize("profile", STANDARDISH)
def test_delete_with_an_expired_handle_deletes(profile):
    q = Scenario(profile)
    mid = q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert q.delete(handle, at=31) == Ok()
    assert q.receivable(31) == []
    verdict = q.check(ReceiveMessage("q", max_messages=1), 32, received(q, mid))
    assert flagged(verdict) == ["DEL-EXPIRED"]


@pytest.mark.parametrize("profile", STANDARDISH)
def test_delete_with_a_stale_handle_might_not_delete(profile):
    q = Scenario(profile)
    mid = q.send()
    old = q.receive_one(at=0).receipt_handle
    q.receive_one(at=30)
    assert flagged(q.check(DeleteMessage("q", old), 31, Ok())) == []
    # either way is permitted: it comes back at 60, or it never does
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 60, received(q, mid))) == []


def test_delete_with_a_very_old_stale_handle_may_be_rejected():
    q = Scenario()
    q.send()
    old = q.receive_one(at=0).receipt_handle
    q.receive_one(at=30)
    expired = Error("InvalidParameterValue", "The receipt handle has expired.")
    assert flagged(q.check(DeleteMessage("q", old), 100, expired)) == ["DEL-STALE"]
    assert flagged(q.check(DeleteMessage("q", old), 55_000, expired)) == []


def test_delete_with_an_expired_handle_many_hours_old_may_be_rejected():
    """boto3#2898 does not say whether the refused handle was its message's latest: past 12 hours the latest may
    be refused too (an independent design that gives handles a 12-hour life was flagged for it), not before."""
    q = Scenario()
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    expired = Error("InvalidParameterValue", "The receipt handle has expired.")
    assert flagged(q.check(DeleteMessage("q", handle), 100, expired)) == ["DEL-EXPIRED"]
    assert flagged(q.check(DeleteMessage("q", handle), 43_201, expired)) == []


def test_fifo_delete_after_the_deadline_is_rejected_inside_an_extended_one_accepted():
    q = Scenario("sqs-fifo")
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    expired = Error("InvalidParameterValue", "Value x for parameter ReceiptHandle is invalid. Reason: The receipt "
                    "handle has expired.")
    assert flagged(q.check(DeleteMessage("q", handle), 31, Ok())) == ["DEL-FIFO-EXPIRED"]
    assert flagged(q.check(DeleteMessage("q", handle), 31, expired)) == []
    q2 = Scenario("sqs-fifo")
    q2.send()
    h2 = q2.receive_one(at=0).receipt_handle
    q2.change(h2, 100, at=20)
    assert flagged(q2.check(DeleteMessage("q", h2), 110, Ok())) == []


@pytest.mark.parametrize("profile", SQS)
def test_delete_twice_succeeds_twice(profile):
    q = Scenario(profile)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert q.delete(handle, at=1) == Ok()
    assert flagged(q.check(DeleteMessage("q", handle), 2, Ok())) == []
    assert flagged(q.check(DeleteMessage("q", handle), 2, Error("ReceiptHandleIsInvalid", "x"))) \
        == ["DEL-IDEMPOTENT"]


# --- batches ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", CURRENT)
def test_batch_validation(profile):
    q = Scenario(profile)
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    eleven = tuple(DeleteEntry(f"e{i}", handle) for i in range(11))
    response = q.do(DeleteMessageBatch("q", eleven), 1)
    assert error_code(response) == "TooManyEntriesInBatchRequest"
    assert response.message == "Maximum number of entries per request are 10. You have sent 11."
    assert error_code(q.do(DeleteMessageBatch("q", ()), 1)) == "EmptyBatchRequest"
    assert error_code(q.do(DeleteMessageBatch("q", (DeleteEntry("bad id!", handle),)), 1)) \
        == "InvalidBatchEntryId"
    assert error_code(q.do(DeleteMessageBatch("q", (DeleteEntry("x" * 81, handle),)), 1)) \
        == "InvalidBatchEntryId"
    twice = (ChangeEntry("a", handle, 5), ChangeEntry("a", handle, 5))
    assert error_code(q.do(ChangeMessageVisibilityBatch("q", twice), 1)) \
        == "BatchEntryIdsNotDistinct"


@pytest.mark.parametrize("profile", CURRENT)
def test_batch_entries_fail_on_their_own(profile):
    q = Scenario(profile)
    q.send("a", group_id="g1") if profile == "sqs-fifo" else q.send("a")
    handle = q.receive_one(at=0).receipt_handle
    entries = (ChangeEntry("good", handle, 50), ChangeEntry("bad", "garbage", 5), ChangeEntry("big", handle, 43201))
    response = q.do(ChangeMessageVisibilityBatch("q", entries), 1)
    assert response.successful == ("good",)
    assert {(f.id, f.code, f.sender_fault) for f in response.failed} == {
        ("bad", "ReceiptHandleIsInvalid", True), ("big", "InvalidParameterValue", True)}
    assert q.receivable(50.999) == []
    op = ChangeMessageVisibilityBatch("q", (ChangeEntry("bad", "garbage", 5),))
    assert flagged(q.check(op, 2, BatchOk(("bad",)))) == ["HANDLE-MALFORMED"]
    invalid = next(f for f in response.failed if f.id == "bad")
    assert flagged(q.check(op, 3, BatchOk((), (invalid,)))) == []
    not_the_senders = dataclasses.replace(invalid, sender_fault=False)
    assert flagged(q.check(op, 4, BatchOk((), (not_the_senders,)))) == ["BATCH-PARTIAL"]


def test_batch_partial_is_exercised_where_an_entry_fails_before_another():
    # Its witness must have an entry after a failing one, so that a queue stopping at a failure fails it
    q = Scenario()
    q.send("a")
    handle = q.receive_one(at=0).receipt_handle

    def rules(*entries):
        return q.model.expect(ChangeMessageVisibilityBatch("q", entries), 1).canonical().rules

    good, bad = ChangeEntry("good", handle, 50), ChangeEntry("bad", "garbage", 5)
    assert "BATCH-PARTIAL" in rules(bad, good)
    assert "BATCH-PARTIAL" not in rules(good, bad) and "BATCH-PARTIAL" not in rules(good)


# --- receive parameters -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", SQS)
def test_max_number_of_messages(profile):
    q = Scenario(profile)
    for body in "abc":
        q.send(body, group_id=body) if profile == "sqs-fifo" else q.send(body)
    response = q.do(ReceiveMessage("q", max_messages=11), 0)
    assert response.message == "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between " \
                               "1 and 10, if provided."
    assert error_code(q.do(ReceiveMessage("q", max_messages=0), 0)) == "InvalidParameterValue"
    assert len(q.receive(at=0, max_messages=2)) == 2
    op = ReceiveMessage("q", max_messages=1)
    mids = list(q.model.messages)
    one = ReceiveOk((ReceivedMessage(mids[2], q.model.messages[mids[2]].body, None),))
    assert flagged(q.check(op, 100, one)) == []
    two = ReceiveOk(tuple(ReceivedMessage(m, q.model.messages[m].body, None) for m in mids[:2]))
    assert flagged(q.check(op, 100, two)) == ["RCV-MAX-MESSAGES"]


@pytest.mark.parametrize("profile", SQS)
def test_the_message_bound_is_exercised_where_it_bites(profile):
    # A witness aimed at it must then ask for fewer than are visible: one that returns a message too many fails it
    q = Scenario(profile)
    for body in "ab":
        q.send(body, group_id=body) if profile == "sqs-fifo" else q.send(body)
    assert "RCV-MAX-MESSAGES" not in q.model.expect(ReceiveMessage("q", max_messages=2), 0).rules
    assert "RCV-MAX-MESSAGES" in q.model.expect(ReceiveMessage("q", max_messages=1), 0).rules


@pytest.mark.parametrize("profile", CURRENT)
def test_wait_time_seconds_range(profile):
    q = Scenario(profile)
    response = q.do(ReceiveMessage("q", wait_time_seconds=21), 0)
    assert response.message == "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and " \
                               "<= 20, if provided."


def test_a_receive_with_several_parameters_out_of_range_may_refuse_any_of_them():
    # Nothing records the order a receive checks its parameters in (fauxqs names VisibilityTimeout first).
    q = Scenario("sqs-standard")
    both = ReceiveMessage("q", max_messages=10, visibility_timeout=-1, wait_time_seconds=-1)
    visibility = Error("InvalidParameterValue", "Value -1 for parameter VisibilityTimeout is invalid. Reason: Must be "
                                                "between 0 and 43200.")
    wait = Error("InvalidParameterValue", "Value -1 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 "
                                          "and <= 20, if provided.")
    assert flagged(q.check(both, 0, visibility)) == [] and flagged(q.check(both, 0, wait)) == []
    assert flagged(q.check(both, 0, Error("InvalidAttributeValue", "no"))) != []  # a code of neither
    assert flagged(q.check(both, 0, ReceiveOk(()))) != []


def test_long_poll_returns_as_soon_as_a_message_is_available():
    q = Scenario()
    q.send()
    q.receive_one(at=0)
    response, outcome = q.model.step(ReceiveMessage("q", max_messages=1, wait_time_seconds=20), 15)
    assert len(response.messages) == 1 and outcome.at == 30


def poll_answered(q: Scenario, at: float, answered_at: float, answer: ReceiveOk):
    """A target's 1-second long poll called at `at` and answered at `answered_at`, on a virtual clock."""
    return q.model.observe(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), at, answer,
                           completed_at=answered_at)


def hidden_until_30() -> tuple[Scenario, str]:
    q = Scenario()
    mid = q.send()
    q.receive_one(at=0)
    return q, mid


@pytest.mark.parametrize("answered_at, problem", [(30.0, None), (30.005, None), (30.4, "answered at 30.400")])
def test_a_long_poll_on_a_virtual_clock_answers_at_the_deadline_not_later(answered_at, problem):
    q, mid = hidden_until_30()
    verdict = poll_answered(q, 29.5, answered_at, received(q, mid, 2))  # 10 ms of slack: moto takes 1 ms
    assert flagged(verdict) == ([] if problem is None else ["RCV-LONG-POLL"])
    assert problem is None or problem in verdict.divergences[0].observed


@pytest.mark.parametrize("called, answered_at, problem", [(29.5, 29.5, "within the wait"), (28.0, 29.0, None)])
def test_an_empty_long_poll_on_a_virtual_clock_must_not_give_up_before_a_message_comes(called, answered_at,
                                                                                      problem):
    q, _ = hidden_until_30()
    verdict = poll_answered(q, called, answered_at, EMPTY)  # the message comes back at 30
    assert flagged(verdict) == ([] if problem is None else ["RCV-LONG-POLL"])
    assert problem is None or problem in verdict.divergences[0].expected


# --- at-least-once ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile, permitted", [("sqs-standard", True), ("sqs-2008", True), ("sqs-fifo", False)])
def test_redelivery_of_a_hidden_message(profile, permitted):
    q = Scenario(profile)
    mid = q.send()
    q.receive_one(at=0)
    count = 2 if profile in CURRENT else None
    verdict = q.check(ReceiveMessage("q", max_messages=1), 1, received(q, mid, count))
    if permitted:
        assert flagged(verdict) == [] and verdict.outcome.notes[0].rules == ("RCV-HIDE", "RCV-AT-LEAST-ONCE")
    else:
        assert flagged(verdict) == ["RCV-HIDE"]


# --- receive count, first receive timestamp ---------------------------------------------------------------------------

@pytest.mark.parametrize("profile", CURRENT)
def test_receive_count_rises_on_every_receive_zero_timeouts_included(profile):
    q = Scenario(profile)
    q.send(at=0)
    counts = [q.receive_one(at=t, visibility_timeout=0) for t in (1.5, 2, 3)]
    assert [m.receive_count for m in counts] == [1, 2, 3]
    assert {m.first_receive_ms for m in counts} == {1500}
    mid = counts[0].message_id
    op = ReceiveMessage("q", max_messages=1)
    for count, first_ms, rule_ids in [(3, 1500, ["RCV-COUNT"]), (4, 4000, ["RCV-FIRST-TIMESTAMP"]), (4, 1500, [])]:
        fresh = Scenario(profile)
        fresh.send(at=0)
        for t in (1.5, 2, 3):
            fresh.receive_one(at=t, visibility_timeout=0)
        observed = ReceiveOk((ReceivedMessage(mid, "body", None, count, first_ms),))
        assert flagged(fresh.check(op, 4, observed)) == rule_ids


@pytest.mark.parametrize("later_first_ms, rule_ids", [(1005, []), (10, ["RCV-FIRST-TIMESTAMP"])])
def test_a_first_receive_timestamp_seen_in_its_window_is_the_one_later_receives_repeat(later_first_ms, rule_ids):
    """On a real clock a first receive happens somewhere in its window (here a long poll that waited a second for
    a delayed message): the target's timestamp inside it is kept, and a later receive must repeat that one, not
    the window's start."""
    from sqs_conformance.model import Model
    from sqs_conformance.model.state import Timing

    model = Model("sqs-standard", Timing(windowed=True, tolerance=0.1))
    assert model.observe(CreateQueue("q", {"VisibilityTimeout": 0}), 0.0, Ok(), 0.001).ok
    assert model.observe(SendMessage("q", "m", delay_seconds=1), 0.002, SendOk(None), 0.003).ok  # a fresh id
    first = ReceiveOk((ReceivedMessage("msg-1", "m", None, 1, 1005),))
    assert flagged(model.observe(ReceiveMessage("q", 10, None, 1), 0.004, first, 1.006)) == []
    later = ReceiveOk((ReceivedMessage("msg-1", "m", None, 2, later_first_ms),))
    assert flagged(model.observe(ReceiveMessage("q", 10), 1.01, later, 1.012)) == rule_ids


# --- delay ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", CURRENT)
def test_delay_hides_and_is_counted_as_delayed(profile):
    if profile == "sqs-fifo":
        q = Scenario(profile, DelaySeconds=10)
        mid = q.send()
    else:
        q = Scenario(profile)
        mid = q.send(delay_seconds=10)
        assert error_code(q.do(SendMessage("q", "x", delay_seconds=901), 0)) == "InvalidParameterValue"
    attributes = q.attributes(at=5)
    assert (attributes["ApproximateNumberOfMessagesDelayed"], attributes["ApproximateNumberOfMessagesNotVisible"]) \
        == ("1", "0")
    assert q.receivable(9.999) == []
    assert q.receivable(10) == [mid]
    verdict = q.check(ReceiveMessage("q", max_messages=1), 5, received(q, mid, 1))
    assert flagged(verdict) == ["DELAY-HIDES"]


# --- redrive ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", CURRENT)
def test_redrive_moves_instead_of_returning(profile):
    def setup():
        q = Scenario.with_dead_letter_queue(profile, max_receive_count=2)
        mid = q.send()
        q.receive_one(at=0, visibility_timeout=0)
        q.receive_one(at=1, visibility_timeout=0)
        return q, mid

    q, mid = setup()
    assert q.receive(at=2) == []
    assert [m.message_id for m in q.do(ReceiveMessage("dlq", max_messages=1), 3).messages] == [mid]
    q, mid = setup()
    verdict = q.check(ReceiveMessage("q", max_messages=1), 2, received(q, mid, 3))
    assert flagged(verdict) == ["REDRIVE-DLQ"]


def test_a_fifo_long_poll_waits_for_a_group_head_that_is_to_move_then_returns_the_next_message():
    # The head is in flight until 2 and is to move once released: it holds its group until then (FIFO-GROUP-LOCK),
    # so a long poll from 1 answers at 2 with the next message, never at once with nothing.
    q = Scenario.with_dead_letter_queue("sqs-fifo", VisibilityTimeout=2)
    head, second = q.send("head"), q.send("second")
    assert q.receive_one(at=0).message_id == head
    response, outcome = q.model.step(ReceiveMessage("q", max_messages=1, wait_time_seconds=5), 1)
    assert outcome.at == 2 and [m.message_id for m in response.messages] == [second]
    assert [m.message_id for m in q.do(ReceiveMessage("dlq", max_messages=1), 3).messages] == [head]


@pytest.mark.parametrize("windowed", [False, True])
def test_a_fifo_long_poll_returns_a_group_s_head_as_soon_as_it_is_free_while_another_group_stays_locked(windowed):
    """Group A stays locked by a1 in flight; b2 comes back at 2 during a poll from 1 to 6. With b1 (its group's
    first) deleted, b2 is the group's head then and the poll must return it at 2: an answer at the end of the
    wait, empty or with b2, diverges (an empty one on a real clock too, whose window cannot tell when b2 came).
    With b1 still in flight past the wait, b2 is held behind it: the empty answer is permitted."""
    from sqs_conformance.model.state import EXACT, Timing

    def polled(answer, b1_deleted: bool):
        q = Scenario("sqs-fifo", timing=Timing(windowed=True, tolerance=0.05) if windowed else EXACT,
                     VisibilityTimeout=60)
        q.send("a1", group_id="A")
        _, b2 = q.send("b1", group_id="B"), q.send("b2", group_id="B")
        assert q.receive_one(at=0).body == "a1"
        received = {m.body: m.receipt_handle for m in q.receive(at=0, max_messages=2)}
        assert set(received) == {"b1", "b2"}
        q.change(received["b2"], 1, at=1)  # visible again at 2
        if b1_deleted:
            q.delete(received["b1"], at=1)
        poll = ReceiveMessage(q.queue, max_messages=10, wait_time_seconds=5)
        return q.model.observe(poll, 1, answer(b2), completed_at=6)

    def empty(_):
        return EMPTY

    def b2_again(b2):
        return ReceiveOk((ReceivedMessage(b2, "b2", None, 2, None),))

    assert flagged(polled(empty, b1_deleted=True)) == ["RCV-LONG-POLL"]
    if not windowed:
        assert flagged(polled(b2_again, b1_deleted=True)) == ["RCV-LONG-POLL"]  # answered at 6, not at 2
    assert flagged(polled(empty, b1_deleted=False)) == []


@pytest.mark.parametrize("profile", CURRENT)
def test_an_empty_long_poll_moved_a_message_surely_due(profile):
    # It looked at every message: the due one went to the dead-letter queue, where it must now be
    def due():
        q = Scenario.with_dead_letter_queue(profile)
        return q, q.send(), q.receive_one(at=0)

    dlq_receive = ReceiveMessage("dlq", max_messages=10, wait_time_seconds=1)
    q, mid, _ = due()
    assert flagged(q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 31, EMPTY)) == []
    assert flagged(q.check(dlq_receive, 31, EMPTY)) == ["REDRIVE-DLQ"]  # a message lost in the move
    q, mid, _ = due()
    q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 31, EMPTY)
    assert flagged(q.check(dlq_receive, 31, received(q, mid, 2))) == []
    q, mid, _ = due()  # a short poll samples: it may not have looked at the message, which then stays put
    q.check(ReceiveMessage("q", max_messages=10), 31, EMPTY)
    assert flagged(q.check(dlq_receive, 31, EMPTY)) == []


@pytest.mark.parametrize("profile", CURRENT)
def test_a_message_that_may_already_be_in_the_dead_letter_queue_is_moved_by_an_empty_long_poll(profile):
    # A receive that returned another message may or may not have moved the due one: it is then in one queue or
    # the other. An empty long poll of the source settles it: it is in the dead-letter queue, which must show it.
    def maybe_moved():
        q = Scenario.with_dead_letter_queue(profile)
        due = q.send("due", group_id="a") if profile == "sqs-fifo" else q.send("due")
        other = q.send("other", group_id="b") if profile == "sqs-fifo" else q.send("other")
        assert q.receive_one(at=0).message_id == due
        q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 31, received(q, other, 1))
        q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 32, EMPTY)
        return q, due

    dlq_receive = ReceiveMessage("dlq", max_messages=10, wait_time_seconds=1)
    q, due = maybe_moved()
    assert flagged(q.check(dlq_receive, 40, EMPTY)) == ["REDRIVE-DLQ"]  # lost in the move
    q, due = maybe_moved()
    assert flagged(q.check(dlq_receive, 40, received(q, due, 2))) == []


@pytest.mark.parametrize("profile", CURRENT)
def test_a_deleted_message_found_in_the_dead_letter_queue_names_the_redrive(profile):
    """local-aws-sqs: a message received once (of three permitted), then deleted with success, turns up in the
    dead-letter queue. A failed delete would have left it in its own queue: what a person fixes is the move."""
    def deleted():
        q = Scenario.with_dead_letter_queue(profile, max_receive_count=3)
        mid = q.send("m", group_id="g") if profile == "sqs-fifo" else q.send("m")
        q.delete(q.receive_one(at=0).receipt_handle, at=1)
        return q, mid

    q, mid = deleted()
    assert flagged(q.check(ReceiveMessage("dlq", max_messages=10), 2, received(q, mid, 1)))[0] == "REDRIVE-DLQ"
    q, mid = deleted()  # back in its own queue: the delete did not remove it
    assert flagged(q.check(ReceiveMessage("q", max_messages=10), 40, received(q, mid, 2)))[0] == "DEL-REMOVES"


def test_a_long_poll_that_moves_a_message_keeps_waiting_for_one_to_return():
    q = Scenario.with_dead_letter_queue()
    q.send("due")
    later = q.send("later", delay_seconds=1)
    q.receive_one(at=0, visibility_timeout=0)
    response, outcome = q.model.step(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 0)
    assert [m.message_id for m in response.messages] == [later] and outcome.at == 1


# --- FIFO groups ------------------------------------------------------------------------------------------------------

def test_fifo_visible_prefix_and_order_after_timeout():
    q = Scenario("sqs-fifo")
    a, b, c = q.send("a"), q.send("b"), q.send("c")
    got = q.receive(at=0, max_messages=3)
    assert [m.message_id for m in got] == [a, b, c]  # as many of one group as it can, in order
    q.change(got[1].receipt_handle, 100, at=10)  # b stays hidden; a and c time out at 30
    assert q.receivable(30) == [a]  # only the visible prefix before b
    verdict = q.check(ReceiveMessage("q", max_messages=10), 31, ReceiveOk((ReceivedMessage(a, "a", None, 2),
                                                                           ReceivedMessage(c, "c", None, 2))))
    assert flagged(verdict)[0] == "FIFO-VISIBLE-PREFIX"


def test_fifo_a_long_poll_holding_back_the_visible_prefix_breaks_the_prefix_rule_first():
    # moto locks the whole group while b is in flight: the rule at stake is the visible prefix, not a's deadline
    q = Scenario("sqs-fifo")
    q.send("a")
    q.send("b")
    got = q.receive(at=0, max_messages=2)
    q.change(got[1].receipt_handle, 600, at=1)
    verdict = q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 31, EMPTY)
    assert flagged(verdict) == ["FIFO-VISIBLE-PREFIX"]
    assert q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 31, EMPTY).divergences


def test_fifo_order_after_a_timeout():
    q = Scenario("sqs-fifo")
    a, b = q.send("a"), q.send("b")
    q.receive(at=0, max_messages=2)
    assert q.receivable(30) == [a, b]
    verdict = q.check(ReceiveMessage("q", max_messages=2), 30, ReceiveOk((ReceivedMessage(b, "b", None, 2),
                                                                          ReceivedMessage(a, "a", None, 2))))
    assert flagged(verdict) == ["FIFO-ORDER"]


def test_fifo_group_lock_flagged():
    q = Scenario("sqs-fifo")
    q.send("a")
    b = q.send("b")
    q.receive_one(at=0)
    verdict = q.check(ReceiveMessage("q", max_messages=1), 5, ReceiveOk((ReceivedMessage(b, "b", None, 1),)))
    assert flagged(verdict) == ["FIFO-GROUP-LOCK"]


def test_fifo_group_lock_is_exercised_only_where_it_holds_a_message_back():
    # Its witness must show a message held back, so that a queue without the lock fails it
    q = Scenario("sqs-fifo")
    q.send("a")
    q.receive_one(at=0)
    assert "FIFO-GROUP-LOCK" not in q.model.expect(ReceiveMessage("q", max_messages=10), 1).rules
    q.send("b", at=1)
    assert "FIFO-GROUP-LOCK" in q.model.expect(ReceiveMessage("q", max_messages=10), 2).rules


def test_fifo_long_poll_waits_while_the_only_visible_message_is_held_behind_its_group():
    # A target waits out its wait there; the model's own answer must too, or a probe timed on it comes late.
    q = Scenario("sqs-fifo")
    q.send("a", group_id="g1")
    q.receive(at=0, max_messages=1)  # a in flight until 30
    q.send("b", group_id="g1")
    poll = ReceiveMessage("q", max_messages=10, wait_time_seconds=20)
    assert q.model.expect(poll, 1).at == 21
    assert q.model.expect(poll, 25).at == 30  # a comes back within the wait


def test_fifo_groups_are_independent():
    q = Scenario("sqs-fifo")
    q.send("a", group_id="g1")
    b = q.send("b", group_id="g2")
    q.receive(at=0, max_messages=1)
    assert q.receivable(1) == [b]


def test_fifo_attempt_id_retry_returns_the_same_messages_and_handles():
    q = Scenario("sqs-fifo")
    q.send("a")
    first = q.receive(at=0, max_messages=1, attempt_id="try-1")
    again = q.receive(at=10, max_messages=1, attempt_id="try-1")
    assert again == first
    verdict = q.check(ReceiveMessage("q", max_messages=1, attempt_id="try-1"), 11, EMPTY)
    assert flagged(verdict) == ["FIFO-ATTEMPT-ID"]
    q.delete(first[0].receipt_handle, at=12)
    assert q.receive(at=13, max_messages=1, attempt_id="try-1") == []  # deleted since: a fresh receive


def test_fifo_attempt_id_retry_after_an_answer_that_only_narrowed_what_the_checker_holds_possible():
    # A new queue timeout may not have reached the receive yet (both timeouts possible); a change answered
    # "expired" rules one out. Nothing modified the message, so the retry must still repeat the receive.
    q = Scenario("sqs-fifo")
    q.set_attributes(0, VisibilityTimeout=0)
    mid = q.send("a")
    retry = ReceiveMessage("q", max_messages=1, attempt_id="try-1")
    assert flagged(q.check(retry, 0, received(q, mid, 1))) == []
    (first,) = q.model.queues["q"].attempts["try-1"].messages  # as the checker bound the target's handle
    assert len(q.model.messages[mid].states) == 2  # hidden for 0 s or for 30 s
    expired = Error("InvalidParameterValue", "Value <handle> for parameter ReceiptHandle is invalid. Reason: The "
                                             "receipt handle has expired.")
    assert flagged(q.check(ChangeMessageVisibility("q", first.receipt_handle, 120), 15, expired)) == []
    assert len(q.model.messages[mid].states) == 1
    assert flagged(q.check(retry, 16, ReceiveOk((first,)))) == []
    assert flagged(q.check(retry, 17, EMPTY)) == ["FIFO-ATTEMPT-ID"]


def test_fifo_dedup_and_send_parameters():
    q = Scenario("sqs-fifo")
    first = q.do(SendMessage("q", "x", group_id="g"), 0)
    assert q.do(SendMessage("q", "x", group_id="g"), 10) == first  # content-based dedup within 5 minutes
    assert q.do(SendMessage("q", "x", group_id="g"), 301) != first
    assert error_code(q.do(SendMessage("q", "x"), 0)) == "MissingParameter"
    assert error_code(q.do(SendMessage("q", "x", group_id="g", delay_seconds=5), 0)) == "InvalidParameterValue"


def test_fifo_dedup_is_exercised_by_a_send_it_deduplicates_not_by_every_send():
    # Its witness must repeat a deduplication id, so that a queue that forgets them fails it
    q = Scenario("sqs-fifo")
    first = q.check(SendMessage("q", "x", group_id="g", dedup_id="d"), 0, SendOk(None))
    assert "FIFO-DEDUP" not in first.outcome.rules
    again = q.check(SendMessage("q", "y", group_id="g", dedup_id="d"), 1, first.outcome.response)
    assert again.outcome.rules == ("FIFO-DEDUP",) and flagged(again) == []


def test_a_send_answered_with_another_message_than_the_deduplicated_one_leaves_the_model_unsure():
    # The target enqueued a duplicate: later answers about "that" message are about another one, so the model
    # cannot follow; an engine abandons the case there instead of reporting the consequences.
    q = Scenario("sqs-fifo")
    q.do(SendMessage("q", "x", group_id="g"), 0)
    verdict = q.check(SendMessage("q", "x", group_id="g"), 10, SendOk(None))
    assert flagged(verdict) == ["FIFO-DEDUP"] and not verdict.consistent
    assert q.check(SendMessage("q", "y", group_id="g"), 11, SendOk(None)).consistent  # a fresh one is fine


# --- purge ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", CURRENT)
def test_purge_removes_in_flight_messages(profile):
    q = Scenario(profile)
    mid = q.send()
    q.receive_one(at=0)
    assert q.do(PurgeQueue("q"), 1) == Ok()
    assert q.receivable(100) == []
    assert error_code(q.do(PurgeQueue("q"), 30)) == "PurgeQueueInProgress"
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 100, received(q, mid, 2))) == ["PURGE-ALL"]


# --- SMQ --------------------------------------------------------------------------------------------------------------

def test_smq_change_returns_a_new_handle_and_the_old_one_stops_working():
    q = Scenario("smq")
    q.send()
    old = q.receive_one(at=0).receipt_handle
    response = q.change(old, 60, at=10)
    assert response.receipt_handle not in (None, old) and response.next_visible_ms == 70_000
    assert error_code(q.change(old, 60, at=11)) == "MessageNotExist"
    assert isinstance(q.change(response.receipt_handle, 60, at=11), ChangeOk)


def test_smq_change_only_on_an_invisible_message():
    q = Scenario("smq")
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert error_code(q.change(handle, 10, at=30)) == "MessageNotExist"  # visible again: not consumed
    op = ChangeMessageVisibility("q", handle, 10)
    assert flagged(q.check(op, 31, ChangeOk("h", 41_000))) == ["SMQ-INVISIBLE-ONLY"]


def test_smq_peek_changes_nothing():
    q = Scenario("smq")
    mid = q.send()
    assert [m.message_id for m in q.peek(at=0)] == [mid]
    assert q.receive_one(at=0).receive_count == 1


@pytest.mark.parametrize("profile", ["sqs-2008", "smq"])
def test_a_peek_exercises_its_rule_where_there_is_a_message_to_peek_at(profile):
    # Its witness must peek at a message, so that a peek that counts as a receive fails it
    q = Scenario(profile)
    assert q.model.expect(PeekMessage("q", 10), 0).rules == ()
    q.send()
    assert q.model.expect(PeekMessage("q", 10), 0).rules == ("PEEK-NO-CHANGE",)


def test_fifo_long_poll_need_not_return_a_message_whose_group_may_still_be_held():
    """Found by the engine checking the model against itself: msg-1 may still be in flight (the queue timeout
    changed within 60 s of its receive, and a change at its possible deadline instant may have hidden it
    again), so msg-2 behind it in the same group is not surely receivable."""
    q = Scenario("sqs-fifo")
    first = q.send("m1", group_id="g1")
    assert q.set_attributes(0, VisibilityTimeout=60) == Ok()
    assert flagged(q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 0, received(q, first, 1))) == []
    assert flagged(q.check(ChangeMessageVisibility("q", q.model.messages[first].states[0].receipt, 120), 30,
                           ChangeOk())) == []
    q.send("m2", group_id="g1", at=30)
    verdict = q.check(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 30, EMPTY)
    assert flagged(verdict) == []


@pytest.mark.parametrize("observed, rules", [
    (Ok(), []), (Error("ReceiptHandleIsInvalid", "x"), []), (Error("InvalidParameterValue", "x"), ["PURGE-ALL"])])
def test_a_handle_of_a_purged_message_is_hedged(observed, rules):
    q = Scenario()
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.do(PurgeQueue("q"), 1)
    assert flagged(q.check(DeleteMessage("q", handle), 2, observed)) == rules


def test_counts_at_the_exact_deadline_instant_are_hedged():
    from sqs_conformance.model.values import AttributesOk, GetQueueAttributes

    def counts(visible, not_visible):
        return AttributesOk({"ApproximateNumberOfMessages": str(visible),
                             "ApproximateNumberOfMessagesNotVisible": str(not_visible),
                             "ApproximateNumberOfMessagesDelayed": "0"})

    for at, permitted in [(30, {(1, 0), (0, 1)}), (30.001, {(1, 0)}), (29.999, {(0, 1)})]:
        for pair in [(1, 0), (0, 1)]:
            q = Scenario()
            q.send()
            q.receive_one(at=0)
            verdict = q.check(GetQueueAttributes("q"), at, counts(*pair))
            assert (flagged(verdict) == []) == (pair in permitted), (at, pair)


def test_counts_of_a_message_that_may_be_deleted_range_from_without_it_to_with_it():
    """A delete whose answer was lost may or may not have taken effect: the message is counted 0 or 1 times, in
    the count of the state it would be in, and no other count moves."""
    from sqs_conformance.model.values import GetQueueAttributes, Unknown

    q = Scenario()
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.model.observe(DeleteMessage("q", handle), 1, Unknown("lost"))
    assert q.model.expect(GetQueueAttributes("q"), 2).bounds() == {
        "ApproximateNumberOfMessages": (0, 0), "ApproximateNumberOfMessagesNotVisible": (0, 1),
        "ApproximateNumberOfMessagesDelayed": (0, 0)}
    assert q.model.expect(GetQueueAttributes("q"), 31).bounds() == {
        "ApproximateNumberOfMessages": (0, 1), "ApproximateNumberOfMessagesNotVisible": (0, 0),
        "ApproximateNumberOfMessagesDelayed": (0, 0)}


def test_a_rejected_handle_is_blamed_on_the_rule_that_accepts_it():
    q = Scenario()
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    verdict = q.check(ChangeMessageVisibility("q", handle, 43199), 31, Error("ReceiptHandleIsInvalid", "x"))
    assert flagged(verdict) == ["CMV-EXPIRED"]
    assert verdict.consistent  # rejected either way: nothing changed on either side
    accepted_instead = q.check(ChangeMessageVisibility("q", handle, 43201), 32, ChangeOk())
    assert flagged(accepted_instead) == ["VIS-RANGE"] and not accepted_instead.consistent


def test_fifo_attempt_id_retry_of_a_long_poll_answers_at_once_even_when_the_first_answer_was_empty():
    q = Scenario("sqs-fifo")
    retry = ReceiveMessage("q", max_messages=10, wait_time_seconds=2, attempt_id="try-1")
    assert q.receive(at=0, wait_time_seconds=2, attempt_id="try-1") == []
    expectation = q.model.expect(retry, 4)
    assert expectation.replay is not None and expectation.at == 4  # not at 6, the end of a wait it does not do
    q.send("a", at=5)
    assert flagged(q.check(retry, 5, received(q, "msg-1", 1))) == ["FIFO-ATTEMPT-ID"]


def test_a_dead_letter_copy_keeps_its_receive_count():
    """docs/evidence.md row 'dead-letter-copy': received twice in the source, moved by the third receive, the copy's
    first receive in the dead-letter queue shows 3. Counted afresh (1) or the move counted (4): REDRIVE-KEEPS-COUNT,
    the rule a person would fix, named first; the receive decides it."""
    for count, rule_ids in [(3, []), (1, ["REDRIVE-KEEPS-COUNT"]), (4, ["REDRIVE-KEEPS-COUNT"])]:
        q = Scenario(VisibilityTimeout=5)
        q.do(CreateQueue("dlq", {}), 0)
        q.set_attributes(0, RedrivePolicy={"deadLetterTargetQueue": "dlq", "maxReceiveCount": 2})
        mid = q.send()
        q.receive_one(at=0)
        q.receive_one(at=10)
        assert q.receive(at=20) == []  # the third receive moves it
        observed = ReceiveOk((ReceivedMessage(mid, "body", None, count, 0),))
        verdict = q.check(ReceiveMessage("dlq", max_messages=1), 21, observed)
        assert flagged(verdict) == rule_ids, count
        assert "REDRIVE-KEEPS-COUNT" in (verdict.decisive if not rule_ids else verdict.outcome.rules)
    # a receive in the source queue does not exercise it
    q = Scenario(VisibilityTimeout=5)
    mid = q.send()
    in_the_source = q.check(ReceiveMessage("q", max_messages=1), 0, received(q, mid, 1))
    assert "REDRIVE-KEEPS-COUNT" not in in_the_source.outcome.rules


def test_nothing_records_whether_a_change_checks_its_value_or_its_handle_first():
    """A garbage handle with an out-of-range value: either refusal is permitted, acceptance is not."""
    q = Scenario()
    q.send()
    q.receive_one(at=0)
    op = ChangeMessageVisibility("q", "garbage", 50_000)
    handle_first = Error("ReceiptHandleIsInvalid", 'The input receipt handle "garbage" is not a valid receipt handle.',
                         404)
    value_first = Error("InvalidParameterValue", "Value 50000 for parameter VisibilityTimeout is invalid.")
    assert flagged(q.check(op, 1, handle_first)) == []
    assert flagged(q.check(op, 1, value_first)) == []
    assert flagged(q.check(op, 1, ChangeOk())) == ["VIS-RANGE"]


def test_a_batch_naming_one_message_twice_may_leave_it_as_either_entry_did():
    from sqs_conformance.model.values import ChangeEntry, ChangeMessageVisibilityBatch

    def changed_twice():  # FIFO: no early redelivery is permitted there, so every answer is judged plainly
        q = Scenario("sqs-fifo")
        mid = q.send()
        handle = q.receive_one(at=0).receipt_handle
        op = ChangeMessageVisibilityBatch("q", (ChangeEntry("a", handle, 0), ChangeEntry("b", handle, 60)))
        assert q.check(op, 1, BatchOk(("a", "b"))).ok  # judging a target, which applied them in some order
        return q, mid

    q, mid = changed_twice()
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 2, EMPTY)) == []  # applied in order: hidden 60 s
    q, mid = changed_twice()
    assert flagged(q.check(ReceiveMessage("q", max_messages=1), 2, received(q, mid, 2))) == []  # the other order
    q, mid = changed_twice()
    assert flagged(q.check(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), 61.5, EMPTY)) != []


def test_a_batch_entry_is_judged_after_the_other_entries_naming_its_message_in_any_order():
    """FIFO: a change to 0 expires its handle. A queue applying [change(h, 0), change(h, 30)] in order refuses the
    second as expired; one applying them the other way accepts both. Either is permitted; an answer no order of
    the entries gives is not."""
    from sqs_conformance.model import errors
    from sqs_conformance.model.outcomes import concrete
    from sqs_conformance.model.values import EntryFailure

    expired = concrete(errors.handle_expired())
    refused = EntryFailure("b", expired.code, expired.message)

    def terminate_then_extend(observed: BatchOk):
        q = Scenario("sqs-fifo")
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        op = ChangeMessageVisibilityBatch("q", (ChangeEntry("a", handle, 0), ChangeEntry("b", handle, 30)))
        return q.check(op, 1, observed)

    assert flagged(terminate_then_extend(BatchOk(("a",), (refused,)))) == []  # applied in order
    assert flagged(terminate_then_extend(BatchOk(("a", "b")))) == []  # b first, then a
    both = BatchOk((), (EntryFailure("a", expired.code, expired.message), refused))
    assert flagged(terminate_then_extend(both)) == ["VIS-TERMINATE"]  # no order refuses both: a came in flight


def test_a_fifo_group_of_many_hedged_messages_keeps_every_world_in_which_its_head_holds_it():
    """A head that may be visible again or hidden for 2 s more, a message behind it that is surely visible, and
    eleven more behind those, each delayed or not (a queue DelaySeconds just set may not have reached the send):
    thousands of combinations. In those where the head is hidden the group is held, so an empty long poll is
    permitted; where the head is visible in every world, it is not."""
    def group_behind(second_timeout: int):
        q = Scenario("sqs-fifo")
        q.send("head")
        handle = q.receive_one(at=0).receipt_handle
        q.send("behind")
        q.set_attributes(0, DelaySeconds=5)
        for i in range(11):
            q.send(f"m{i}")
        op = ChangeMessageVisibilityBatch("q", (ChangeEntry("a", handle, 0), ChangeEntry("b", handle, second_timeout)))
        assert q.check(op, 0, BatchOk(("a", "b"))).ok  # applied in either order: the head visible, or hidden 2 s
        return q

    poll = ReceiveMessage("q", max_messages=10, wait_time_seconds=1)
    assert flagged(group_behind(2).check(poll, 0.5, EMPTY)) == []
    assert flagged(group_behind(0).check(poll, 0.5, EMPTY)) != []  # the head is visible in every world


def test_a_fifo_message_that_may_be_elsewhere_does_not_hold_its_group_in_this_queue():
    # m2 may have been moved to the dead-letter queue, or may still be in flight here: in the world where it
    # stays here, the dead-letter queue's group is m1 then m3, and nothing must stand between them.
    q = Scenario.with_dead_letter_queue("sqs-fifo", VisibilityTimeout=0)
    first, second, third = (q.send(body, group_id="g") for body in ("m1", "m2", "m3"))
    poll = ReceiveMessage("q", max_messages=10, wait_time_seconds=1)
    q.check(poll, 0, ReceiveOk(tuple(ReceivedMessage(m, b, None, 1, 0)
                                     for m, b in ((first, "m1"), (second, "m2"), (third, "m3")))))
    q.set_attributes(1, VisibilityTimeout=60)  # the next receive may still use 0, or already 60
    q.check(ReceiveMessage("q", max_messages=10), 1, EMPTY)  # m1 and m3 moved, m2 perhaps not
    dlq = ReceiveMessage("dlq", max_messages=10, wait_time_seconds=1)
    both = ReceiveOk((ReceivedMessage(first, "m1", None, 2), ReceivedMessage(third, "m3", None, 2)))
    assert flagged(q.check(dlq, 2, both)) == []
