"""Hand-made real-clock traces: what `check` MUST flag and what it must NOT (windows, tolerance, unknowns)."""

import json

import pytest

from sqs_conformance.conformance.check import check_traces
from sqs_conformance.conformance.trace import encode
from sqs_conformance.model.values import (
    ChangeMessageVisibility, CreateQueue, DeleteMessage, ReceivedMessage, ReceiveMessage, ReceiveOk, SendMessage,
    BatchOk, ChangeEntry, ChangeMessageVisibilityBatch, ChangeOk, DeleteEntry, DeleteMessageBatch, EntryFailure, Error,
    Ok, SendOk, SetQueueAttributes, Unknown,
)
from tests.trace_lines import trace_line

TOLERANCE = 1.0


def trace(tmp_path, steps, clock="real", tolerance=TOLERANCE, profile="sqs-standard"):
    """A trace file from (invoke, complete, operation, response) tuples, as an endpoint run writes it."""
    path = tmp_path / "trace.jsonl"
    with path.open("w") as f:
        for index, (invoke, complete, op, response) in enumerate(steps):
            f.write(json.dumps(trace_line(
                1, run_id="hand", target="endpoint", target_version="x", profile=profile, clock=clock,
                tolerance=tolerance, case=1, step=index, operation=encode(op), response=encode(response),
                invoke=invoke, complete=complete, invoke_wall=invoke, complete_wall=complete)) + "\n")
    return path


def received_for(seconds, fifo=False):
    """Create, send, and receive m1 for `seconds` in a window [0.2, 0.4]: its deadline lies in [s+0.2, s+0.4].
    A standard queue may redeliver early now and then (a counted note, not a divergence); FIFO may not."""
    attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if fifo else {}
    send = SendMessage("q", "m1", group_id="g") if fifo else SendMessage("q", "m1")
    return [
        (0.0, 0.1, CreateQueue("q", attributes), Ok()),
        (0.1, 0.2, send, SendOk("id-1")),
        (0.2, 0.4, ReceiveMessage("q", visibility_timeout=seconds),
         ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", None, None),))),
    ]


def again(invoke, complete, returned, wait=None):
    return (invoke, complete, ReceiveMessage("q", wait_time_seconds=wait),
            ReceiveOk((ReceivedMessage("id-1", "m1", "h-2", None, None),) if returned else ()))


def divergent_rules(path):
    """Every rule any divergence of the case names, and of any counted early redelivery (a standard queue may
    redeliver early now and then, so `check` notes it rather than fails; a timing bug would show there)."""
    (case,) = check_traces([path])
    return {rule for _, d in case.divergences + case.notes for rule in d.rules}


# --- must NOT be flagged -----------------------------------------------------------------------------------

@pytest.mark.parametrize("window", [(2.3, 2.35), (1.5, 1.6), (3.0, 3.1)])
def test_a_reappearance_within_the_window_and_tolerance_is_permitted(tmp_path, window):
    # deadline in [2.2, 2.4]; with 1 s tolerance a return from 1.2 on is permitted
    assert divergent_rules(trace(tmp_path, received_for(2) + [again(*window, returned=True)])) == set()


def test_a_late_reappearance_within_tolerance_is_permitted_even_by_a_long_poll(tmp_path):
    # surely visible only after 2.4 + 1: a long poll answering empty over [2.2, 3.2] is not a divergence
    assert divergent_rules(trace(tmp_path, received_for(2) + [again(2.2, 3.2, returned=False, wait=1)])) == set()


def test_an_empty_long_poll_is_judged_by_the_end_of_its_wait_not_its_start(tmp_path):
    # It began at 3.0, before the message was surely visible (3.4), and waited until 4.0: it had to return it.
    flagged = divergent_rules(trace(tmp_path, received_for(2) + [again(3.0, 4.0, returned=False, wait=1)]))
    assert {"RCV-REAPPEAR", "RCV-LONG-POLL"} <= flagged
    # and the poll that did not wake for it is named first: the deadline itself may have been kept
    (case,) = check_traces([trace(tmp_path, received_for(2) + [again(3.0, 4.0, returned=False, wait=1)])])
    assert case.divergences[0][1].rule == "RCV-LONG-POLL"


def test_a_short_poll_may_answer_empty_while_the_message_is_visible(tmp_path):
    assert divergent_rules(trace(tmp_path, received_for(2) + [again(30.0, 30.1, returned=False)])) == set()


def test_after_an_unknown_receive_the_message_may_or_may_not_be_in_flight(tmp_path):
    steps = received_for(2)[:2] + [(0.2, 5.2, ReceiveMessage("q", visibility_timeout=30), Unknown("read timeout"))]
    assert divergent_rules(trace(tmp_path, steps + [again(6.0, 6.1, returned=True)])) == set()
    assert divergent_rules(trace(tmp_path, steps + [again(6.0, 7.0, returned=False, wait=1)])) == set()


def test_after_an_unknown_change_both_deadlines_are_permitted(tmp_path):
    steps = received_for(2) + [(0.5, 0.6, ChangeMessageVisibility("q", "h-1", 60), Unknown("connection reset"))]
    assert divergent_rules(trace(tmp_path, steps + [again(5.0, 5.1, returned=True)])) == set()
    assert divergent_rules(trace(tmp_path, steps + [again(5.0, 6.0, returned=False, wait=1)])) == set()


def test_a_change_straddling_the_deadline_may_be_accepted_or_not(tmp_path):
    # deadline in [2.2, 2.4]: a change over [2.3, 2.5] may find the receipt in flight or expired
    steps = received_for(2) + [(2.3, 2.5, ChangeMessageVisibility("q", "h-1", 30), ChangeOk())]
    assert divergent_rules(trace(tmp_path, steps + [again(4.0, 4.1, returned=False)])) == set()


def test_an_unknown_send_ends_the_judging_of_its_case(tmp_path):
    steps = [(0.0, 0.1, CreateQueue("q", {}), Ok()), (0.1, 5.1, SendMessage("q", "m1"), Unknown("timeout")),
             again(6.0, 6.1, returned=True)]
    (case,) = check_traces([trace(tmp_path, steps)])
    assert case.abandoned_at == 1 and not case.divergences


# --- MUST be flagged ----------------------------------------------------------------------------------------

def test_a_return_well_before_the_deadline_is_flagged(tmp_path):
    # deadline no earlier than 2.2; with 1 s tolerance, returning it by 1.1 is too early
    steps = received_for(2, fifo=True) + [again(1.0, 1.1, returned=True)]
    assert "RCV-OVERRIDE" in divergent_rules(trace(tmp_path, steps, profile="sqs-fifo"))


def test_a_long_poll_that_misses_a_surely_visible_message_is_flagged(tmp_path):
    rules = divergent_rules(trace(tmp_path, received_for(2) + [again(3.5, 4.5, returned=False, wait=1)]))
    assert "RCV-LONG-POLL" in rules


def test_the_same_trace_on_a_virtual_clock_is_judged_exactly(tmp_path):
    # deadline exactly 2.2: a return at 2.1 is within the real-clock tolerance, not on a virtual clock
    steps = [(t0, t0, op, r) for t0, _, op, r in received_for(2, fifo=True)] + [again(2.1, 2.1, returned=True)]
    assert divergent_rules(trace(tmp_path, steps, profile="sqs-fifo")) == set()
    exact = trace(tmp_path, steps, clock="virtual", tolerance=0.0, profile="sqs-fifo")
    assert "RCV-OVERRIDE" in divergent_rules(exact)


def test_after_an_unknown_receive_a_long_poll_still_must_find_the_message(tmp_path):
    steps = received_for(2)[:2] + [(0.2, 0.4, ReceiveMessage("q", visibility_timeout=2), Unknown("read timeout"))]
    rules = divergent_rules(trace(tmp_path, steps + [again(4.0, 5.0, returned=False, wait=1)]))
    assert "RCV-LONG-POLL" in rules


def test_a_delete_with_an_unknown_answer_then_a_return_while_surely_hidden_is_flagged(tmp_path):
    steps = received_for(30, fifo=True) + [(0.5, 0.6, DeleteMessage("q", "h-1"), Unknown("timeout")),
                                           again(5.0, 5.1, returned=True)]
    assert "RCV-OVERRIDE" in divergent_rules(trace(tmp_path, steps, profile="sqs-fifo"))


# --- answers lost where a message may move on, or a receive may repeat ------------------------------------------

def _redriven_after(lost_receives: int):
    """A message whose first receive passes maxReceiveCount 1 with the next one, then `lost_receives` receives whose
    answers never came, then a receive on the dead-letter queue that finds it."""
    create = [(0.0, 0.1, CreateQueue("dlq", {}), Ok()),
              (0.1, 0.2, CreateQueue("q", {"VisibilityTimeout": 0, "RedrivePolicy": {
                  "deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}), Ok()),
              (0.2, 0.3, SendMessage("q", "m1"), SendOk("id-1"))]
    lost = [(0.3 + i, 0.4 + i, ReceiveMessage("q"), Unknown("connection closed")) for i in range(lost_receives)]
    found = (5.0, 5.1, ReceiveMessage("dlq"), ReceiveOk((ReceivedMessage("id-1", "m1", "h-9", None, None),)))
    return create + lost + [found]


def test_after_two_lost_receives_a_message_may_have_moved_to_the_dead_letter_queue(tmp_path):
    # the first may have received it, the second then moved it: the dead-letter queue may hold it
    assert divergent_rules(trace(tmp_path, _redriven_after(2), tolerance=0.05)) == set()


def test_after_one_lost_receive_the_message_cannot_be_in_the_dead_letter_queue(tmp_path):
    # one receive could take it at most once: nothing moved it
    assert "REDRIVE-DLQ" in divergent_rules(trace(tmp_path, _redriven_after(1), tolerance=0.05))


def _fifo_retry_after(change_answer, retried: str):
    """A FIFO receive with attempt id a1 takes m1 as h-1; a change of h-1 to 0 answers `change_answer`; the receive
    is retried with a1 and returns m1 under `retried`."""
    return [(0.0, 0.1, CreateQueue("q", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}), Ok()),
            (0.1, 0.2, SendMessage("q", "m1", group_id="g"), SendOk("id-1")),
            (0.2, 0.3, ReceiveMessage("q", visibility_timeout=30, attempt_id="a1"),
             ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", None, None),))),
            (0.3, 0.4, ChangeMessageVisibility("q", "h-1", 0), change_answer),
            (1.0, 1.1, ReceiveMessage("q", visibility_timeout=30, attempt_id="a1"),
             ReceiveOk((ReceivedMessage("id-1", "m1", retried, None, None),)))]


@pytest.mark.parametrize("retried", ["h-1", "h-2"])
def test_after_a_lost_change_a_retried_receive_may_repeat_or_receive_afresh(tmp_path, retried):
    # the change may not have happened (a repeat is due) or may have (the message was modified: a new receive)
    path = trace(tmp_path, _fifo_retry_after(Unknown("connection closed"), retried), profile="sqs-fifo")
    assert divergent_rules(path) == set()


def test_a_retried_receive_that_ignores_its_attempt_id_is_flagged(tmp_path):
    steps = _fifo_retry_after(Unknown("connection closed"), "h-2")
    untouched = steps[:3] + steps[4:]  # nothing touched m1 since: the retry must repeat the first answer
    assert "FIFO-ATTEMPT-ID" in divergent_rules(trace(tmp_path, untouched, profile="sqs-fifo"))


def _delayed_then_received(lost: bool, first_receive_ms: int):
    """m1 delayed 1 s; a long poll over [0.2, 1.3] whose answer is lost (or that answered empty), then a receive
    at 40 s, past its 30 s timeout, telling when m1 was first received."""
    poll = (0.2, 1.3, ReceiveMessage("q", wait_time_seconds=1),
            Unknown("connection closed") if lost else ReceiveOk(()))
    later = ReceiveOk((ReceivedMessage("id-1", "m1", "h-2", 2, first_receive_ms),))
    return [(0.0, 0.1, CreateQueue("q", {}), Ok()), (0.1, 0.2, SendMessage("q", "m1", delay_seconds=1), SendOk("id-1")),
            poll, (40.0, 40.1, ReceiveMessage("q"), later)]


def test_a_first_receive_whose_answer_was_lost_may_be_dated_anywhere_in_its_window(tmp_path):
    # the lost poll found m1 once its delay ended, about 1.2 s: a later receive says so, and counts 2
    assert divergent_rules(trace(tmp_path, _delayed_then_received(True, 1200), tolerance=0.05)) == set()


def test_a_first_receive_dated_outside_every_receive_it_may_have_been_is_flagged(tmp_path):
    assert "RCV-FIRST-TIMESTAMP" in divergent_rules(trace(tmp_path, _delayed_then_received(True, 5000),
                                                         tolerance=0.05))


def _smq_change_answered(next_visible_ms: int):
    """SMQ: a change of 60 s over [0.5, 0.7] answers a new handle and the new deadline, NextVisibleTime."""
    return [(0.0, 0.1, CreateQueue("q", {}), Ok()), (0.1, 0.2, SendMessage("q", "m1"), SendOk("id-1")),
            (0.2, 0.3, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", None, None),))),
            (0.5, 0.7, ChangeMessageVisibility("q", "h-1", 60), ChangeOk("h-2", next_visible_ms))]


def test_an_smq_deadline_answered_from_any_instant_of_the_change_is_permitted(tmp_path):
    for answered in (60_500, 60_620, 60_700):
        path = trace(tmp_path, _smq_change_answered(answered), tolerance=0.05, profile="smq")
        assert divergent_rules(path) == set(), answered


def test_an_smq_deadline_outside_the_changes_window_is_flagged(tmp_path):
    path = trace(tmp_path, _smq_change_answered(61_700), tolerance=0.05, profile="smq")
    assert "VIS-EXTEND-NONADDITIVE" in divergent_rules(path)


def _sqs_2008_lock_after(lost: bool):
    """sqs-2008: a change addressed by message id locks a message never received; before it, a receive whose
    answer was lost (it may have received m1) or that answered m1."""
    receive = (0.2, 0.3, ReceiveMessage("q"),
               Unknown("connection closed") if lost else ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", None, None),)))
    return [(0.0, 0.1, CreateQueue("q", {}), Ok()), (0.1, 0.2, SendMessage("q", "m1"), SendOk("id-1")), receive,
            (0.5, 0.6, ChangeMessageVisibility("q", "id-1", 30), ChangeOk())]


def test_after_a_lost_receive_a_change_may_still_lock_a_message_by_its_id(tmp_path):
    assert divergent_rules(trace(tmp_path, _sqs_2008_lock_after(True), tolerance=0.05, profile="sqs-2008")) == set()


def test_a_change_by_message_id_of_a_received_message_is_flagged(tmp_path):
    path = trace(tmp_path, _sqs_2008_lock_after(False), tolerance=0.05, profile="sqs-2008")
    assert "HANDLE-MALFORMED" in divergent_rules(path)


# --- which rule a contradiction names --------------------------------------------------------------------------

def _refused_then_not_in_the_dead_letter_queue(long_poll_found_it_due: bool):
    """Moto's case (virtual clock): m1 received twice (maxReceiveCount 2), a long poll over its second deadline
    answers empty, a stale delete is accepted, a change through the latest handle is refused as an invalid handle,
    and the dead-letter queue is empty. With the poll ending exactly at the deadline, m1 may have moved at that
    instant or not; ending a second later it surely moved."""
    poll_end = 10.0 if long_poll_found_it_due else 11.0
    return [(0.0, 0.0, CreateQueue("dlq", {}), Ok()),
            (0.0, 0.0, CreateQueue("q", {"VisibilityTimeout": 5, "RedrivePolicy": {
                "deadLetterTargetQueue": "dlq", "maxReceiveCount": 2}}), Ok()),
            (0.0, 0.0, SendMessage("q", "m1"), SendOk("id-1")),
            (0.0, 0.0, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", 1, 0),))),
            (5.0, 5.0, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("id-1", "m1", "h-2", 2, 0),))),
            (poll_end - 5.0, poll_end, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(())),
            (poll_end, poll_end, DeleteMessage("q", "h-1"), Ok()),
            (poll_end, poll_end, ChangeMessageVisibility("q", "h-2", 0),
             Error("ReceiptHandleIsInvalid", "The input receipt handle is invalid.")),
            (poll_end, poll_end, ReceiveMessage("dlq", wait_time_seconds=1), ReceiveOk(()))]


def first_rule(path):
    (case,) = check_traces([path])
    return case.divergences[0][1].rule


def test_a_refusal_only_a_world_later_contradicted_permitted_names_the_rule_it_broke_elsewhere(tmp_path):
    # The refusal was permitted only if m1 had moved at the poll's last instant; the empty dead-letter queue says
    # it had not: the refusal of a change of a deleted message is what is wrong (CMV-DELETED), not the redrive.
    path = trace(tmp_path, _refused_then_not_in_the_dead_letter_queue(True), clock="virtual", tolerance=0.0)
    assert first_rule(path) == "CMV-DELETED"
    assert "REDRIVE-DLQ" in divergent_rules(path)  # named too: the other way to explain it


def test_a_message_surely_moved_then_missing_from_the_dead_letter_queue_names_the_redrive(tmp_path):
    path = trace(tmp_path, _refused_then_not_in_the_dead_letter_queue(False), clock="virtual", tolerance=0.0)
    assert first_rule(path) == "REDRIVE-DLQ"


def _changed(seconds: int, in_a_batch: bool):
    """A change of m1 through the handle h-1, accepted: alone, or as the one entry of a batch."""
    if in_a_batch:
        return ChangeMessageVisibilityBatch("q", (ChangeEntry("e1", "h-1", seconds),)), BatchOk(("e1",))
    return ChangeMessageVisibility("q", "h-1", seconds), ChangeOk()


@pytest.mark.parametrize("in_a_batch", [False, True])
def test_a_success_only_a_world_later_contradicted_permitted_names_the_rule_it_broke_elsewhere(tmp_path, in_a_batch):
    # fauxqs' case (virtual clock, FIFO): m1 received for 0 s, so its handle has expired; a change to 120 s is
    # accepted (m1 hidden again or not); a change past the 12-hour ceiling is accepted too, which only the world
    # where m1 was not hidden permits; then a long poll does not find m1. Had that second answer not been heard, m1
    # could be hidden: the change past the ceiling is what is wrong, not the long poll. The same where the changes
    # were entries of batches (fauxqs again: a batch's entries are weighed as its single calls are).
    create = CreateQueue("q", {"FifoQueue": "true", "ContentBasedDeduplication": "true"})
    steps = [(0.0, 0.0, create, Ok()), (0.0, 0.0, SendMessage("q", "m1", group_id="g"), SendOk("id-1")),
             (0.0, 0.0, ReceiveMessage("q", visibility_timeout=0),
              ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", 1, 0),))),
             (0.5, 0.5, *_changed(120, in_a_batch)),
             (1.0, 1.0, *_changed(43200, in_a_batch)),
             (2.0, 3.0, ReceiveMessage("q", wait_time_seconds=1), ReceiveOk(()))]
    path = trace(tmp_path, steps, clock="virtual", tolerance=0.0, profile="sqs-fifo")
    assert first_rule(path).startswith("VIS-CEILING")
    assert "RCV-LONG-POLL" in divergent_rules(path)  # still named: the other way to explain it


def _expired_handle_changed_to(seconds: int):
    # m1 received for 30 s (deadline in [30.2, 30.4], 1 s tolerance); at 32 its handle has surely expired, and a
    # change through it is accepted (whether m1 is hidden again is not recorded: both permitted); then a long poll
    # does not find m1.
    return received_for(30) + [(32.0, 32.05, ChangeMessageVisibility("q", "h-1", seconds), ChangeOk()),
                               again(33.0, 34.0, returned=False, wait=1)]


def test_an_expired_handle_accepted_and_applied_past_the_ceiling_names_the_ceiling(tmp_path):
    # LocalStack's case: 43170 s from 32 s ends past the 12-hour ceiling of the receive at [0.2, 0.4], so the change
    # could only have been accepted without hiding m1, and m1 must come back. A target that hid m1 for it did what
    # only the ceiling forbids: that is the rule to fix, not the long poll's.
    path = trace(tmp_path, _expired_handle_changed_to(43170))
    assert first_rule(path).startswith("VIS-CEILING")
    assert "RCV-LONG-POLL" in divergent_rules(path)  # still named: the other way to explain it


def test_an_expired_handle_accepted_and_applied_within_the_ceiling_is_permitted(tmp_path):
    assert divergent_rules(trace(tmp_path, _expired_handle_changed_to(600))) == set()


def test_changes_accepted_for_a_message_then_found_in_the_dead_letter_queue_name_the_moved_world(tmp_path):
    # LocalStack's case (real clock, FIFO, maxReceiveCount 1): m1 received for 5 s; a long poll over its deadline
    # answers empty (m1 may have moved then, or not yet); two changes through its expired handle are accepted, which
    # a FIFO queue may do if m1 is still there; then m1 is in the dead-letter queue, where only a move at that poll
    # can have put it. The changes are what is wrong, and the rules of the world where m1 had moved say why, not
    # the expired-handle rule, whose every answer was permitted where m1 was still there.
    fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    steps = [(0.0, 0.05, CreateQueue("dlq", fifo), Ok()),
             (0.05, 0.1, CreateQueue("q", {**fifo, "RedrivePolicy": {
                 "deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}), Ok()),
             (0.1, 0.15, SendMessage("q", "m1", group_id="g"), SendOk("id-1")),
             (0.15, 0.2, ReceiveMessage("q", visibility_timeout=5),
              ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", None, None),))),
             (5.2, 5.9, ReceiveMessage("q", wait_time_seconds=1), ReceiveOk(())),
             (5.95, 6.0, ChangeMessageVisibility("q", "h-1", 0), ChangeOk()),
             (6.0, 6.05, ChangeMessageVisibility("q", "h-1", 1), ChangeOk()),
             (7.1, 7.2, ReceiveMessage("dlq", wait_time_seconds=1),
              ReceiveOk((ReceivedMessage("id-1", "m1", "h-2", None, None),)))]
    path = trace(tmp_path, steps, tolerance=0.5, profile="sqs-fifo")
    assert first_rule(path) in ("REDRIVE-DLQ", "CMV-DELETED")


def _one_handle_deleted_twice_in_a_batch(failing: str | None):
    """ministack's case: m1 received with a 0 s timeout (its handle expired at once), then a batch deleting it
    twice through that handle, the entry `failing` refused as an invalid handle."""
    entries = (DeleteEntry("e0", "h-1"), DeleteEntry("e1", "h-1"))
    failed = tuple(EntryFailure(e.id, "ReceiptHandleIsInvalid", "The input receipt handle is invalid.")
                   for e in entries if e.id == failing)
    return [(0.0, 0.0, CreateQueue("q", {"VisibilityTimeout": 0}), Ok()),
            (0.0, 0.0, SendMessage("q", "m1"), SendOk("id-1")),
            (0.0, 0.0, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", 1, 0),))),
            (0.5, 0.5, DeleteMessageBatch("q", entries),
             BatchOk(tuple(e.id for e in entries if e.id != failing), failed))]


@pytest.mark.parametrize("failing", ["e0", "e1"])
def test_a_batch_entry_refused_after_another_deleted_its_message_names_the_second_delete(tmp_path, failing):
    # Either entry may have come first; one succeeded, so the refused one most likely came after it, when its
    # handle was that of a deleted message (DEL-IDEMPOTENT), not the expired handle it was before (DEL-EXPIRED).
    path = trace(tmp_path, _one_handle_deleted_twice_in_a_batch(failing), clock="virtual", tolerance=0.0)
    assert first_rule(path) == "DEL-IDEMPOTENT"
    assert "DEL-EXPIRED" in divergent_rules(path)  # still named: had it come first, that rule was broken


def test_a_batch_deleting_one_message_twice_through_its_handle_conforms(tmp_path):
    path = trace(tmp_path, _one_handle_deleted_twice_in_a_batch(None), clock="virtual", tolerance=0.0)
    assert divergent_rules(path) == set()


def test_a_change_of_a_redriven_message_refused_with_another_code_names_the_check_that_refuses_it(tmp_path):
    # fauxqs' case: m1 moved to the dead-letter queue by an empty long poll; a change through its handle is refused
    # with the right text but the code MessageNotInflight, not InvalidParameterValue. The move was right; the
    # refusal of a change of a message no longer there is what is wrong (CMV-DELETED).
    steps = [(0.0, 0.0, CreateQueue("dlq", {}), Ok()),
             (0.0, 0.0, CreateQueue("q", {"RedrivePolicy": {"deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}),
              Ok()),
             (0.0, 0.0, SendMessage("q", "m1"), SendOk("id-1")),
             (0.0, 0.0, ReceiveMessage("q", visibility_timeout=1),
              ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", 1, 0),))),
             (2.0, 3.0, ReceiveMessage("q", wait_time_seconds=1), ReceiveOk(())),
             (3.0, 3.0, ChangeMessageVisibility("q", "h-1", 10),
              Error("MessageNotInflight", "Message does not exist or is not available for visibility timeout change."))]
    path = trace(tmp_path, steps, clock="virtual", tolerance=0.0)
    assert first_rule(path) == "CMV-DELETED"


def _fifo_head_delayed_longer(returned: tuple[str, ...]):
    """Every emulator's case: a FIFO queue delaying by 5 s, m1 sent; the delay set to 0, m3 sent to the same group
    (it may be delayed or not yet: the attribute takes time to apply); a receive at once returns `returned`."""
    fifo = {"FifoQueue": "true", "DelaySeconds": 5}
    bodies = {"id-1": "m1", "id-3": "m3"}
    return [(0.0, 0.0, CreateQueue("q", fifo), Ok()),
            (0.0, 0.0, SendMessage("q", "m1", group_id="g1", dedup_id="u1"), SendOk("id-1")),
            (0.04, 0.04, SetQueueAttributes("q", {"DelaySeconds": 0}), Ok()),
            (0.04, 0.04, SendMessage("q", "m3", group_id="g1", dedup_id="u3"), SendOk("id-3")),
            (0.06, 0.06, ReceiveMessage("q", max_messages=1),
             ReceiveOk(tuple(ReceivedMessage(i, bodies[i], "h-1", 1, 60) for i in returned)))]


def test_a_later_message_of_a_fifo_group_returned_while_its_head_is_delayed_is_permitted(tmp_path):
    # Every emulator does so (the matrix of 2026-11-24), and nothing records what AWS does: permitted.
    path = trace(tmp_path, _fifo_head_delayed_longer(("id-3",)), clock="virtual", tolerance=0.0, profile="sqs-fifo")
    assert divergent_rules(path) == set()


def test_a_fifo_group_waiting_for_its_delayed_head_conforms(tmp_path):
    path = trace(tmp_path, _fifo_head_delayed_longer(()), clock="virtual", tolerance=0.0, profile="sqs-fifo")
    assert divergent_rules(path) == set()


def test_a_fifo_message_returned_before_the_received_message_ahead_of_it_times_out_breaks_the_groups_lock(
        tmp_path):
    # The must-flag side of the same group: its head received (in flight, not delayed), m3 returned anyway.
    fifo = {"FifoQueue": "true"}
    steps = [(0.0, 0.0, CreateQueue("q", fifo), Ok()),
             (0.0, 0.0, SendMessage("q", "m1", group_id="g1", dedup_id="u1"), SendOk("id-1")),
             (0.0, 0.0, ReceiveMessage("q", max_messages=1), ReceiveOk((ReceivedMessage("id-1", "m1", "h-1", 1, 0),))),
             (0.1, 0.1, SendMessage("q", "m3", group_id="g1", dedup_id="u3"), SendOk("id-3")),
             (0.2, 0.2, ReceiveMessage("q", max_messages=1),
              ReceiveOk((ReceivedMessage("id-3", "m3", "h-2", 1, 200),)))]
    path = trace(tmp_path, steps, clock="virtual", tolerance=0.0, profile="sqs-fifo")
    assert first_rule(path) == "FIFO-GROUP-LOCK"
