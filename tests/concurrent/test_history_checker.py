"""The history checker on hand-made histories: ones that MUST be flagged (naming the rule among consumers) and ones
that must NOT (an order exists that explains every answer, or an answer was lost)."""

import multiprocessing
from dataclasses import replace

import pytest

from sqs_conformance.conformance.concurrent.checker import check_history
from sqs_conformance.conformance.concurrent.history import History
from sqs_conformance.conformance.concurrent.parts import decompose
from sqs_conformance.conformance.concurrent.search import DEFAULT_BUDGET, NOTES_TRIED, search, search_with
from sqs_conformance.conformance.concurrent.shrink import smallest
from sqs_conformance.conformance.concurrent.spread import searching
from sqs_conformance.model import Model
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.state import Timing
from sqs_conformance.model.values import (
    BatchOk, ChangeMessageVisibility, ChangeOk, CreateQueue, DeleteEntry, DeleteMessage, DeleteMessageBatch, Error, Ok,
    PurgeQueue, ReceivedMessage, ReceiveMessage, ReceiveOk, SendMessage, SendOk, Unknown,
)
from sqs_conformance.model.verdicts import StepVerdict
from tests.concurrent.histories import Story, eight_clients_on
from tests.concurrent.targets import ForgetfulConsumers


def violated(history, budget: int = DEFAULT_BUDGET) -> set[str]:
    verdict = check_history(history, budget)
    return set(verdict.rules_diverging())


# --- MUST be flagged -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
def test_two_consumers_given_one_message_at_once_is_rcv_exclusive(profile):
    # both receives overlap: in either order the second returns a message the first hid for 30 s, and the counts
    # (both 1) say it was no redelivery either
    history = (Story(profile).send(0, "m1", 0, 1.0, 1.1)
               .received(0, [("m1", "h1", 1)], 0, 2.0, 2.2).received(1, [("m1", "h2", 1)], 0, 2.1, 2.3).done())
    assert violated(history) == {"RCV-EXCLUSIVE"}


def test_a_redelivery_inside_the_timeout_is_counted_once_and_flagged_when_repeated():
    once = (Story().send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
            .received(1, [("m1", "h2", 2)], 5, 3.0, 3.1))
    verdict = check_history(once.history.in_order())
    assert verdict.conforms and [n.rule for s in verdict.steps for n in s.notes] == ["RCV-EXCLUSIVE"]
    twice = once.received(0, [("m1", "h3", 3)], 6, 4.0, 4.1).done()
    assert violated(twice) == {"RCV-EXCLUSIVE"}


def test_an_expired_fifo_handle_deleting_the_message_another_consumer_holds_is_fifo_stale_other():
    history = (Story("sqs-fifo", timeout=5).send(0, "m1", 0, 1.0, 1.1)
               .received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
               .received(1, [("m1", "h2", 2)], 6, 3.0, 3.1)
               .do(0, DeleteMessage("q.fifo", "h1"), Ok(), 7, 4.0, 4.1)
               .received(1, [], 8, 5.0, 5.1).done())
    assert violated(history) == {"FIFO-STALE-OTHER"}


def _expired_fifo_delete_and_a_refused_change(delete_sent: float, batch: bool = False) -> History:
    """Client 0 received m1 for 5 s, client 1 received it again at 10; at 12 client 0 deletes it through its expired
    handle (alone, or as a batch's one entry), accepted, and client 1's change through the current handle is
    refused: the message does not exist (as LocalStack answers). The change is sent at 4.0 and answered at 4.3; the
    delete at `delete_sent`."""
    story = Story("sqs-fifo").send(0, "m1", 0, 1.0, 1.1)
    story.received(0, [("m1", "h1", 1)], 1, 2.0, 2.1, visibility_timeout=5).received(1, [("m1", "h2", 2)], 10, 3.0, 3.1)
    gone = Error("InvalidParameterValue", "Value h2 for parameter ReceiptHandle is invalid. Reason: Message does not "
                 "exist or is not available for visibility timeout change.", 400)
    story.do(1, ChangeMessageVisibility("q.fifo", "h2", 60), gone, 12, 4.0, 4.3)
    delete, answer = (DeleteMessageBatch("q.fifo", (DeleteEntry("e1", "h1"),)), BatchOk(("e1",))) if batch else \
        (DeleteMessage("q.fifo", "h1"), Ok())
    return story.do(0, delete, answer, 12, delete_sent, delete_sent + 0.1).done()


@pytest.mark.parametrize("batch", [False, True], ids=["alone", "batch"])
def test_a_failure_standing_on_another_consumer_s_expired_fifo_delete_is_named_after_that_delete(batch):
    """Either order fails: the delete first breaks FIFO-STALE-OTHER, the change first is refused while the message
    was there. The delete, carried out as a queue not enforcing its refusal would, explains the change's refusal:
    the rule a person fixes is the delete's, whichever was sent first, alone or in a batch. A delete sent after the
    change was answered explains nothing: the change's refusal is then its own."""
    assert violated(_expired_fifo_delete_and_a_refused_change(4.1, batch)) == {"FIFO-STALE-OTHER"}
    assert violated(_expired_fifo_delete_and_a_refused_change(3.9, batch)) == {"FIFO-STALE-OTHER"}
    assert violated(_expired_fifo_delete_and_a_refused_change(4.5, batch)) == {"VIS-EXTEND-NONADDITIVE"}


def test_a_group_handed_to_a_second_consumer_while_the_first_holds_it_is_flagged():
    history = (Story("sqs-fifo").send(0, "m1", 0, 1.0, 1.1).send(0, "m2", 0, 1.2, 1.3)
               .received(0, [("m1", "h1", 1)], 0, 2.0, 2.1, max_messages=1)
               .received(1, [("m2", "h2", 1)], 0, 3.0, 3.1, max_messages=1).done())
    assert violated(history) == {"FIFO-GROUP-LOCK"}


def _long_poll_story(receive_sent: float = 3.0, delay: int | None = None) -> Story:
    """m1 sent (client 0, answered at 1.1 s, model time 0), an empty long poll of client 1 sent at 2.0 s (model time
    5, waiting 5 s), then client 0's receive of m1 sent at `receive_sent` (model time 11)."""
    story = Story()
    story.do(0, SendMessage("q", "body-m1", delay_seconds=delay), SendOk("m1"), at=0, sent=1.0, answered=1.1)
    story.do(1, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(()), at=5, sent=2.0, answered=2.1)
    return story.received(0, [("m1", "h1", 1)], 11, receive_sent, receive_sent + 0.1)


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "spread"])
def test_an_empty_long_poll_while_a_message_lay_receivable_untouched_is_rcv_long_poll(workers):
    """The empty answer is judged in no message's part: the message's part shows it lay receivable, with nothing
    acting on it, from before the poll was sent until after its answer came. The poll's step diverges, searched in
    one process or spread (the sweep then runs in another). Its finding shrinks to that message's operations and
    the poll, and still fails there."""
    history = _long_poll_story().done()
    verdict = check_history(history, workers=workers)
    assert set(verdict.rules_diverging()) == {"RCV-LONG-POLL"}
    (violation,) = verdict.violations
    assert isinstance(violation.op.op, ReceiveMessage) and violation.op.client == 1
    poll = verdict.steps[violation.op.index]
    assert poll.verdict is StepVerdict.DIVERGENCE and "RCV-LONG-POLL" in poll.decisive
    assert [o.op for o in violation.part.ops if isinstance(o.op, SendMessage)] and violation.op in violation.part.ops
    assert "returned nothing while a message lay receivable" in violation.told()
    shrunk = smallest(history, violation.part.ops, violation.op, violation.divergence)
    assert {d.rule for v in check_history(shrunk).violations for d in [v.divergence]} == {"RCV-LONG-POLL"}


def _fifo_long_poll_story(first_received: bool, timeout: int = 30, attempt_id: str | None = None) -> History:
    """m1 and m2 sent to group g (client 0, model time 0); m1 received by client 0 at 1 if `first_received` (hidden
    for `timeout`); an empty long poll of client 1 (waiting 5 s) at 40; client 2 receives the group's first message
    at 70."""
    story = Story("sqs-fifo", timeout=timeout, clients=3).send(0, "m1", 0, 1.0, 1.1).send(0, "m2", 0, 1.2, 1.3)
    if first_received:
        story.received(0, [("m1", "h1", 1)], 1, 2.0, 2.1)
    story.do(1, ReceiveMessage("q.fifo", wait_time_seconds=5, attempt_id=attempt_id), ReceiveOk(()), 40, 3.0, 3.1)
    return story.received(2, [("m1", "h2", 2 if first_received else 1)], 70, 4.0, 4.1).done()


def test_a_fifo_empty_long_poll_while_a_group_surely_offered_a_message_is_rcv_long_poll():
    """A FIFO group counts as one: its first message there comes once every message that may be there is due. Here
    m1 lay visible (or its receipt had lapsed) before the poll, untouched until after it."""
    assert violated(_fifo_long_poll_story(first_received=False)) == {"RCV-LONG-POLL"}
    assert violated(_fifo_long_poll_story(first_received=True, timeout=10)) == {"RCV-LONG-POLL"}


def test_a_fifo_empty_long_poll_is_not_flagged_while_the_group_is_held_or_a_retry_may_repeat_an_answer():
    """m1 in flight through the poll holds the group (m2 may not come); a poll with a ReceiveRequestAttemptId may
    repeat an earlier answer to it (FIFO-ATTEMPT-ID)."""
    assert check_history(_fifo_long_poll_story(first_received=True, timeout=60)).conforms
    assert check_history(_fifo_long_poll_story(first_received=False, attempt_id="r1")).conforms


def test_a_fifo_empty_long_poll_is_not_judged_where_a_send_s_answer_was_lost():
    """m1's send got no answer, so m1 lies in a part of its own, apart from its group's: the group's part (m2) cannot
    see m1 holding the group through the poll."""
    story = Story("sqs-fifo", clients=3)
    story.do(0, SendMessage("q.fifo", "body-m1", group_id="g", dedup_id="m1"), Unknown("lost"), 0, 1.0, 1.1)
    story.send(0, "m2", 0, 1.2, 1.3).received(0, [("m1", "h1", 1)], 1, 2.0, 2.1)
    story.do(1, ReceiveMessage("q.fifo", wait_time_seconds=5), ReceiveOk(()), 10, 3.0, 3.1)
    story.do(0, DeleteMessage("q.fifo", "h1"), Ok(), 20, 3.5, 3.6)
    assert check_history(story.received(2, [("m2", "h2", 1)], 30, 4.0, 4.1).done()).conforms


def test_a_fifo_empty_long_poll_after_a_send_raced_a_purge_is_rcv_long_poll_whichever_came_first():
    """m1's send overlaps the purge: in one order it was purged, in the other it heads group g. Either way, once
    both had settled, m2 was sent and group g offered a message through the poll, untouched until m3's send: every
    order those operations could take leaves the group returned once due."""
    story = Story("sqs-fifo", clients=3).send(0, "m0", 0, 1.0, 1.1)
    story.do(1, PurgeQueue("q.fifo"), Ok(), 5, 2.0, 2.5).send(0, "m1", 5, 2.1, 2.2).send(0, "m2", 6, 3.0, 3.1)
    story.do(1, ReceiveMessage("q.fifo", wait_time_seconds=5), ReceiveOk(()), 10, 4.0, 4.1)
    assert violated(story.send(2, "m3", 20, 6.0, 6.1).done()) == {"RCV-LONG-POLL"}


# --- must NOT be flagged --------------------------------------------------------------------------------------------

def test_a_redelivery_explained_by_an_overlapping_change_to_zero_is_no_early_return():
    # client 1's receive overlaps client 0's change to 0: the change may have come first, so nothing is early
    history = (Story().send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
               .do(0, ChangeMessageVisibility("q", "h1", 0), ChangeOk(), 4, 3.05, 3.15)
               .received(1, [("m1", "h2", 2)], 4, 3.0, 3.2).done())
    verdict = check_history(history)
    assert verdict.conforms and not [n for s in verdict.steps for n in s.notes]


def test_racing_sends_of_one_deduplication_id_in_two_groups_may_take_effect_either_way():
    # (A correct Redis FIFO design, 8 clients.) c1's send of B (group h) went out first, c0's (group g) got the
    # same id back: the queue took c0's first, so B is g's, and C (h) is free while A and B are held. The two
    # orders of the sends reach models that differ only in B's group: the search's memo must tell them apart.
    def story(sends_apart: bool) -> History:
        h_answered = 2.05 if sends_apart else 2.4
        return (Story("sqs-fifo", clients=3).send(0, "A", 0, 1.0, 1.1, group="g")
                .send(1, "B", 0, 2.0, h_answered, group="h").send(0, "B", 0, 2.1, 2.5, group="g")
                .received(2, [("A", "h1", 1), ("B", "h2", 1)], 0, 3.0, 3.1, max_messages=2)
                .send(1, "C", 0, 4.0, 4.4, group="h")
                .received(0, [("C", "h3", 1)], 0, 4.1, 4.3, max_messages=3, wait_time_seconds=3).done())

    assert violated(story(sends_apart=False)) == set()
    # h's send of B answered before g's was sent: B is h's, and C comes while B is held
    assert violated(story(sends_apart=True)) == {"FIFO-GROUP-LOCK"}


def test_a_retry_answered_afresh_after_another_group_s_message_of_its_answer_changed_is_permitted():
    # The first answer to attempt r1 held A (group g) and B (group h); B deleted since, a retry may be answered
    # afresh (FIFO-ATTEMPT-ID: unless none of its messages changed): A again, with a new receipt. Its parts (g, h)
    # are judged as one, or g's could not see B's delete.
    def story(b_deleted: bool) -> History:
        first = (Story("sqs-fifo").send(0, "A", 0, 1.0, 1.1, group="g").send(0, "B", 0, 1.2, 1.3, group="h")
                 .received(0, [("A", "h1", 1), ("B", "h2", 1)], 10, 2.0, 2.1, max_messages=2, attempt_id="r1",
                           visibility_timeout=2))
        if b_deleted:
            first.do(0, DeleteMessage("q.fifo", "h2"), Ok(), 11, 3.0, 3.1)
        return first.received(1, [("A", "h3", 2)], 20, 4.0, 4.1, max_messages=1, attempt_id="r1").done()

    assert violated(story(b_deleted=True)) == set()
    assert violated(story(b_deleted=False)) == {"FIFO-ATTEMPT-ID"}  # nothing changed: the same answer was due


def test_a_receive_of_a_message_whose_send_overlaps_it_is_permitted():
    history = Story().send(0, "m1", 0, 1.0, 1.3).received(1, [("m1", "h1", 1)], 0, 1.1, 1.2).done()
    assert check_history(history).conforms


def test_a_receive_overlapping_the_delete_of_the_message_is_permitted():
    history = (Story(timeout=0).send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
               .do(0, DeleteMessage("q", "h1"), Ok(), 0, 3.0, 3.3)
               .received(1, [("m1", "h2", 2)], 0, 3.1, 3.2).done())
    assert check_history(history).conforms


def test_the_same_receive_after_the_delete_surely_took_effect_is_flagged():
    history = (Story(timeout=0).send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
               .do(0, DeleteMessage("q", "h1"), Ok(), 0, 3.0, 3.05)
               .received(1, [("m1", "h2", 2)], 0, 3.1, 3.2).done())
    assert violated(history) == {"DEL-REMOVES"}


# What a design's race shows that the evidence permits on a standard queue: the PostgreSQL design's variants
# DeleteStaleHandle, ChangeReadThenWrite and PurgeWithoutLock (benchmarks/reference_designs/pgq/variants.py), which no
# run of `benchmarks.races` catches, for these reasons.

def test_a_delete_through_an_expired_handle_may_remove_the_message_another_consumer_received_since():
    # DeleteStaleHandle: c0's delete checked h1 current, h1 lapsed, c1 received m1 again, the delete removed it.
    # Evidence row `delete-stale`: a delete with an older handle succeeds and the message may or may not go.
    history = (Story(timeout=5).send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
               .do(0, DeleteMessage("q", "h1"), Ok(), 6, 3.0, 3.3)
               .received(1, [("m1", "h2", 2)], 6, 3.1, 3.2)
               .received(1, [], 20, 4.0, 4.1, wait_time_seconds=3).done())  # gone, though h2 lapsed at 11
    assert check_history(history).conforms


def test_a_change_through_an_expired_handle_answered_ok_while_the_message_is_deleted_is_permitted():
    # ChangeReadThenWrite: c0's change read m1 through h1 (lapsed), c1 received it again and deleted it, the change
    # then wrote nothing and answered OK. Evidence row `cmv-stale`: a change through an earlier receive's handle is
    # accepted; taking effect before the delete, it leaves nothing to see.
    history = (Story(timeout=5).send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.1)
               .received(1, [("m1", "h2", 2)], 6, 3.0, 3.1)
               .do(0, ChangeMessageVisibility("q", "h1", 30), ChangeOk(), 6, 3.2, 3.6)
               .do(1, DeleteMessage("q", "h2"), Ok(), 6, 3.3, 3.4)
               .received(1, [], 40, 4.0, 4.1, wait_time_seconds=3).done())
    assert check_history(history).conforms


def test_a_message_sent_while_a_purge_is_under_way_may_survive_it_and_one_sent_before_may_not():
    # PurgeWithoutLock: a send answered inside the purge's window survives it (the send may come after the purge);
    # a send answered before the purge was sent must not (PURGE-ALL).
    def story(send_answered: float) -> History:
        return (Story().do(0, PurgeQueue("q"), Ok(), 5, 2.0, 2.5).send(1, "m1", 5, 1.9, send_answered)
                .received(1, [("m1", "h1", 1)], 6, 3.0, 3.1, wait_time_seconds=3).done())

    assert check_history(story(send_answered=2.2)).conforms
    assert violated(story(send_answered=1.95)) == {"PURGE-ALL"}


def test_an_empty_long_poll_is_not_flagged_where_the_message_was_taken_hidden_or_maybe_purged():
    """Not where another consumer's receive of the message overlaps the poll (it may have taken it first); nor
    where the message's delay outlasts the poll; nor where a purge overlaps the poll and nothing acts on the
    message after (the purge is in the message's part only within its span: it may have been purged)."""
    assert check_history(_long_poll_story(receive_sent=2.05).done()).conforms
    assert check_history(_long_poll_story(delay=10).done()).conforms
    story = Story()
    story.do(0, SendMessage("q", "body-m1"), SendOk("m1"), at=0, sent=1.0, answered=1.1)
    story.do(1, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(()), at=5, sent=2.0, answered=2.2)
    story.do(0, PurgeQueue("q"), Ok(), at=5, sent=2.05, answered=2.1)
    assert check_history(story.done()).conforms


def test_an_empty_long_poll_is_not_flagged_where_another_order_of_the_operations_before_leaves_the_message_hidden():
    """Two changes of one receipt overlap: the search's order (60 s, then 0) leaves m1 visible through the poll, the
    other (0, then 60 s) hidden until after it. Both fit every answer, so the poll may have found nothing."""
    story = Story().send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 1, 2.0, 2.1)
    story.do(0, ChangeMessageVisibility("q", "h1", 60), ChangeOk(), 2, 3.0, 3.3)
    story.do(1, ChangeMessageVisibility("q", "h1", 0), ChangeOk(), 2, 3.1, 3.2)
    story.do(1, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(()), 10, 4.0, 4.1)
    assert check_history(story.received(0, [("m1", "h2", 2)], 70, 5.0, 5.1).done()).conforms


def _one_deduplication_id_sent_to_two_groups(deleted_before_the_poll: bool) -> History:
    """Client 0 sends X to group g2 and client 1 to g1 with one deduplication id, at once: both are answered with
    mx, the message of whichever took effect first. m2 follows in g1; client 2 receives mx for 60 s (if it heads g1,
    m2 is held behind it) and deletes it after an empty long poll of client 1, or before it."""
    story = Story("sqs-fifo", clients=3)
    story.do(0, SendMessage("q.fifo", "body-mx", group_id="g2", dedup_id="d"), SendOk("mx"), 0, 1.0, 1.3)
    story.do(1, SendMessage("q.fifo", "body-mx", group_id="g1", dedup_id="d"), SendOk("mx"), 0, 1.1, 1.2)
    story.send(0, "m2", 1, 2.0, 2.1, group="g1").received(2, [("mx", "h1", 1)], 3, 3.0, 3.1, visibility_timeout=60)
    delete = (DeleteMessage("q.fifo", "h1"), Ok())
    if deleted_before_the_poll:
        story.do(2, *delete, 5, 3.5, 3.6)
    story.do(1, ReceiveMessage("q.fifo", wait_time_seconds=5), ReceiveOk(()), 10, 4.0, 4.1)
    if not deleted_before_the_poll:
        story.do(2, *delete, 50, 5.0, 5.1)
    return story.received(2, [("m2", "h2", 1)], 71, 6.0, 6.1).done()


def test_a_message_sent_to_two_fifo_groups_may_hold_either_through_an_empty_long_poll():
    """Which group mx is in depends on which send came first: the two groups are one part. Held by mx in flight, g1
    may offer nothing (a part of g1 alone, without mx, took m2 for receivable); once mx is deleted, g1 offers m2."""
    assert check_history(_one_deduplication_id_sent_to_two_groups(deleted_before_the_poll=False)).conforms
    assert violated(_one_deduplication_id_sent_to_two_groups(deleted_before_the_poll=True)) == {"RCV-LONG-POLL"}


def test_an_empty_long_poll_is_not_judged_across_parts_on_a_queue_sent_as_many_messages_as_its_in_flight_quota(
        monkeypatch):
    """INFLIGHT-QUOTA: at the quota a long poll returns nothing more, and the count in flight is the queue's, which
    no part sees: a queue sent that many messages may have reached it (here a quota of 1, the story's one send)."""
    monkeypatch.setitem(PROFILES, "sqs-standard", replace(PROFILES["sqs-standard"], inflight_quota=1))
    assert check_history(_long_poll_story().done()).conforms


def _send_during_a_long_poll(clock: str, send_answered: float) -> History:
    """An empty long poll of client 1 waiting 5 s from time 10 (sent at 10, answered at 15.2); a send of client 0
    sent at 10.5 and answered at `send_answered`; client 0 receives the message at 20. Model time is wall time here,
    on a real clock (tolerance 0.5) or a virtual one (whose clock would stand still in between: the same windows)."""
    history = History("sqs-standard", clock, 0.5 if clock == "real" else 0.0, 2)
    history.add(0, CreateQueue("q", {"VisibilityTimeout": "30"}), Ok(), 0, 0.1, 0, 0.1)
    history.add(1, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(()), 10, 15.2, 10, 15.2)
    history.add(0, SendMessage("q", "body-m1"), SendOk("m1"), 10.5, send_answered, 10.5, send_answered)
    received = ReceiveOk((ReceivedMessage("m1", "body-m1", "h1", 1, None),))
    history.add(0, ReceiveMessage("q"), received, 20, 20.1, 20, 20.1)
    return history.in_order()


def test_a_message_sent_during_a_long_poll_is_its_to_return_on_a_real_clock_only():
    """On a real clock a message sent well inside a long poll's wait (due by more than the tolerance before the
    poll answered) had to wake it; sent just before the answer, it may have come after the poll's last look. On a
    virtual clock the wait passes in one move of the clock, right after the poll's last look: a message sent
    while the poll is under way may always have come after it."""
    assert set(check_history(_send_during_a_long_poll("real", 11.0)).rules_diverging()) == {"RCV-LONG-POLL"}
    assert check_history(_send_during_a_long_poll("real", 14.9)).conforms
    assert check_history(_send_during_a_long_poll("virtual", 11.0)).conforms


def test_an_empty_long_poll_is_not_flagged_where_a_receive_sent_before_it_answered_took_effect_later_in_the_order():
    """Real clock. R1 (sent at 2.0) returned m1 counted twice, R2 (sent at 2.1) counted once and for 0 s: R2 took
    effect first. In that order nothing acted on m1 before R2 was sent, but R1, sent already, may have taken it
    before the poll (answered at 2.05) looked last: no stretch of rest ends at R2, which the search put before an
    operation sent earlier."""
    history = History("sqs-standard", "real", 0.5, 4)
    history.add(0, CreateQueue("q", {"VisibilityTimeout": "30"}), Ok(), 0, 0.1, 0, 0.1)
    history.add(0, SendMessage("q", "body-m1"), SendOk("m1"), 1.0, 1.1, 1.0, 1.1)
    history.add(1, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(()), 1.95, 2.05, 1.95, 2.05)
    history.add(2, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("m1", "body-m1", "h1", 2, None),)),
                2.0, 3.0, 2.0, 3.0)
    history.add(3, ReceiveMessage("q", visibility_timeout=0),
                ReceiveOk((ReceivedMessage("m1", "body-m1", "h2", 1, None),)), 2.1, 2.2, 2.1, 2.2)
    assert check_history(history.in_order()).conforms


def _timeout_lapsing_during_a_long_poll(clock: str, answered: float = 34, received_again: float = 40,
                                        timeout: int = 30) -> History:
    """m1 received by client 0 at 1 (hidden until 1 + `timeout`); an empty long poll of client 1 waiting 5 s from 29
    (answered at `answered`); client 2 receives m1 again at `received_again`. Model time is wall time, as above."""
    history = History("sqs-standard", clock, 0.5 if clock == "real" else 0.0, 3)
    history.add(0, CreateQueue("q", {"VisibilityTimeout": str(timeout)}), Ok(), 0, 0.1, 0, 0.1)
    history.add(0, SendMessage("q", "body-m1"), SendOk("m1"), 0.2, 0.3, 0.2, 0.3)
    history.add(0, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("m1", "body-m1", "h1", 1, None),)), 1, 1.1, 1, 1.1)
    history.add(1, ReceiveMessage("q", wait_time_seconds=5), ReceiveOk(()), 29, answered, 29, answered)
    history.add(2, ReceiveMessage("q"), ReceiveOk((ReceivedMessage("m1", "body-m1", "h2", 2, None),)),
                received_again, received_again + 0.1, received_again, received_again + 0.1)
    return history.in_order()


def test_a_timeout_lapsing_inside_a_long_poll_s_wait_is_its_to_return_on_a_real_clock_only():
    """A real clock's long poll looks throughout its wait: a receipt lapsing 3 s before its end (more than the
    tolerance) had to be returned. A virtual clock's may pass its wait in one move of the clock, its own or another
    client's (the correct spool design's did): only what was receivable as it was sent had to be."""
    assert set(check_history(_timeout_lapsing_during_a_long_poll("real")).rules_diverging()) == {"RCV-LONG-POLL"}
    assert check_history(_timeout_lapsing_during_a_long_poll("virtual")).conforms


def test_a_virtual_clock_s_long_poll_answering_empty_before_a_message_came_due_in_its_wait_is_rcv_long_poll():
    """A poll that answered at once (the clock did not move), though the receipt lapsed 2 s into its wait and
    nothing acted on the message until its wait was over, did not wait for it: a poll that waited saw it (the
    spool design's LongPollGivesUpOnRace). Not where the message came due only after the wait, nor where another
    consumer's receive of it came within the wait (a poll that waited might have lost it to that one)."""
    gave_up = _timeout_lapsing_during_a_long_poll("virtual", answered=29)
    assert set(check_history(gave_up).rules_diverging()) == {"RCV-LONG-POLL"}
    assert check_history(_timeout_lapsing_during_a_long_poll("virtual", answered=29, timeout=34)).conforms
    assert check_history(_timeout_lapsing_during_a_long_poll("virtual", answered=29, received_again=32)).conforms


EXPIRED = Error("InvalidParameterValue", "Value h1 for parameter ReceiptHandle is invalid. Reason: The receipt handle "
                "has expired.", 400)


def _moved_by_an_empty_poll(max_receive_count: int, change_answer) -> History:
    """LocalStack, real clock: a FIFO queue with a 0 s timeout and a dead-letter queue; m1 received once, an empty
    long poll (which moves m1 if it was received `max_receive_count` times), m1's old handle refused as expired on a
    delete and given `change_answer` on a change, then the dead-letter queue returns m1."""
    fifo = {"FifoQueue": "true"}
    redrive = {"deadLetterTargetQueue": "dlq", "maxReceiveCount": max_receive_count}
    history = History("sqs-fifo", "real", 0.5, 1)
    for op, answer, sent, answered in [
            (CreateQueue("dlq", fifo), Ok(), 0, 0.004),
            (CreateQueue("q", {**fifo, "VisibilityTimeout": 0, "RedrivePolicy": redrive}), Ok(), 0.005, 0.01),
            (SendMessage("q", "m1", group_id="g1", dedup_id="u1"), SendOk("msg-1"), 0.014, 0.02),
            (ReceiveMessage("q", max_messages=1), ReceiveOk((ReceivedMessage("msg-1", "m1", "h1", 1, None),)),
             0.039, 0.045),
            (ReceiveMessage("q", max_messages=10, wait_time_seconds=1), ReceiveOk(()), 0.047, 0.052),
            (DeleteMessage("q", "h1"), EXPIRED, 0.053, 0.058),
            (ChangeMessageVisibility("q", "h1", 0), change_answer, 0.059, 0.065),
            (ReceiveMessage("dlq", max_messages=10, wait_time_seconds=1),
             ReceiveOk((ReceivedMessage("msg-1", "m1", "h2", None, None),)), 0.072, 0.08)]:
        history.add(0, op, answer, sent, answered, sent, answered)
    return history.in_order()


def test_a_receive_on_a_redrive_queue_may_move_a_message_of_a_part_it_is_not_in():
    """REDRIVE-DLQ: a receive moves a message received maxReceiveCount times instead of returning it, whatever it
    answered. The empty poll is in no message's part, so without it m1's part never moved m1, and the dead-letter
    queue returning it was flagged (a single client's case of the same answers conforms). Where m1 was received
    fewer times than that, nothing could move it: still flagged."""
    refused = Error("ReceiptHandleIsInvalid", "The input receipt handle is invalid.", 400)
    verdict = check_history(_moved_by_an_empty_poll(1, refused))
    assert verdict.conforms
    assert {s.verdict for s in verdict.steps} == {StepVerdict.OK}  # the poll held as unanswered in m1's part only
    assert violated(_moved_by_an_empty_poll(5, EXPIRED)) == {"REDRIVE-DLQ"}


def test_a_lost_receive_answer_leaves_both_worlds_open():
    # client 0's receive got no answer: it may have hidden m1 or not, so client 1 receiving it is no violation,
    # and neither is client 1 finding nothing
    for answer in ([("m1", "h2", 1)], []):
        story = Story().send(0, "m1", 0, 1.0, 1.1).do(0, ReceiveMessage("q"), Unknown("timeout"), 0, 2.0, 2.1)
        assert check_history(story.received(1, answer, 0, 3.0, 3.1).done()).conforms


def test_a_search_out_of_budget_is_undecided_never_a_violation():
    history = (Story("sqs-fifo").send(0, "m1", 0, 1.0, 1.1)
               .received(0, [("m1", "h1", 1)], 0, 2.0, 2.2).received(1, [("m1", "h2", 1)], 0, 2.1, 2.3).done())
    verdict = check_history(history, budget=2)
    assert verdict.conforms and verdict.undecided


def test_a_part_longer_than_the_budget_is_judged_where_it_needs_no_turn_back():
    # the queue's own part of a long history is a long line of empty receives: the budget bounds the turns back
    story = Story()
    for i in range(12):
        story.received(i % 2, [], 0, 1 + i, 1.1 + i)
    verdict = check_history(story.done(), budget=2)
    assert verdict.conforms and not verdict.undecided
    story.received(0, [], 0, 20, 20.1, max_messages=11)  # a count past 10 answered instead of refused
    assert violated(story.done(), budget=2) == {"RCV-MAX-MESSAGES"}


def test_parts_are_per_message_on_standard_and_per_group_on_fifo():
    standard = Story().send(0, "m1", 0, 1, 1.1).send(1, "m2", 0, 1, 1.1).received(
        0, [("m1", "h1", 1), ("m2", "h2", 1)], 0, 2, 2.1).done()
    assert sorted(p.key for p in decompose(standard).parts) == ["message m1", "message m2", "the queue itself"]
    fifo = Story("sqs-fifo").send(0, "m1", 0, 1, 1.1, group="a").send(1, "m2", 0, 1, 1.1, group="a").send(
        1, "m3", 0, 1, 1.1, group="b").done()
    assert sorted(p.key for p in decompose(fifo).parts) == ["group a of q.fifo", "group b of q.fifo",
                                                            "the queue itself"]
    # a receive that returned messages of two parts is cut: each part judges the message it follows
    cut = [o for p in decompose(standard).parts for o in p.ops if isinstance(o.response, ReceiveOk)]
    assert sorted(len(o.response.messages) for o in cut) == [1, 1]


def test_an_operation_given_another_answer_settles_as_that_answer_says():
    """A part holds a receive of a queue with a redrive policy as lost (it may have moved that part's message) and
    cuts another's answer to its messages: each copy settles as its own answer says, whenever the original's was
    read."""
    o = Story().received(0, [("m1", "h1", 1)], 0, 1.0, 1.2).done().ops[-1]
    assert o.settles_by == 1.2
    assert o.answered(Unknown("it may have moved")).settles_by == float("inf")
    assert o.answered(ReceiveOk(())).settles_by == 1.2


def test_parts_the_semantics_bind_are_one():
    """Messages of several parts are judged together where one answer binds them: a batch's entries, the messages
    of every answer to one ReceiveRequestAttemptId (whatever their groups), the groups of two sends answered with
    one message id. Parts nothing binds stay apart."""
    def keys(story: Story) -> list[str]:
        return sorted(p.key for p in decompose(story.done()).parts if p.key != "the queue itself")

    def sent(profile: str, groups: str = "abc") -> Story:
        story = Story(profile)
        for number, group in enumerate(groups, 1):
            story.send(0, f"m{number}", 0, number, number + 0.1, group=group)
        return story.received(0, [("m1", "h1", 1), ("m2", "h2", 1)], 0, 5, 5.1, max_messages=2)

    assert len(keys(sent("sqs-standard"))) == 3
    batch = DeleteMessageBatch("q", (DeleteEntry("e1", "h1"), DeleteEntry("e2", "h2")))
    assert len(keys(sent("sqs-standard").do(0, batch, BatchOk(("e1", "e2")), 0, 6, 6.1))) == 2
    assert len(keys(sent("sqs-fifo"))) == 3
    # the answers to attempt r1: m2 (group b), then m3 (group c): b and c are one part, a another
    retried = sent("sqs-fifo").received(1, [("m2", "h3", 2)], 0, 5.5, 6.2, attempt_id="r1", max_messages=2)
    assert len(keys(retried.received(0, [("m3", "h4", 1)], 0, 7, 7.1, attempt_id="r1"))) == 2
    # m1 sent to groups a and b (one deduplication id): a and b are one part, c another
    twice = Story("sqs-fifo").send(0, "m1", 0, 1, 1.1, group="a").send(1, "m1", 0, 1, 1.1, group="b")
    assert len(keys(twice.send(0, "m2", 0, 2, 2.1, group="b").send(0, "m3", 0, 3, 3.1, group="c"))) == 2


def test_every_single_answer_lost_in_a_conforming_history_stays_conforming(model_history):
    history = model_history
    assert check_history(history).conforms
    for o in history.ops[1:]:  # each answer lost alone
        lost = history.of([replace(x, response=Unknown("lost")) if x is o else x for x in history.ops])
        assert check_history(lost).conforms, o


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
def test_parts_searched_in_two_processes_give_the_verdict_of_one(profile):
    """A history with violations, early returns and clean parts alike: spread over processes (`spread.py`), every
    step's verdict, every violation and every count of early returns is the same as checked in one."""
    history = eight_clients_on(ForgetfulConsumers(profile), profile, seed=3, rounds=12)
    alone, spread = check_history(history, workers=1), check_history(history, workers=2)
    assert alone.violations or alone.repeated  # something to agree on
    assert [(s.verdict, s.rules, s.decisive, s.divergences, s.notes) for s in spread.steps] == \
        [(s.verdict, s.rules, s.decisive, s.divergences, s.notes) for s in alone.steps]
    assert [(v.part.key, v.op.index, v.divergence) for v in spread.violations] == \
        [(v.part.key, v.op.index, v.divergence) for v in alone.violations]
    assert [(o.index, d, [p.key for p in parts]) for o, d, parts in spread.repeated] == \
        [(o.index, d, [p.key for p in parts]) for o, d, parts in alone.repeated]


def test_a_spread_search_read_in_part_order_and_left_early_leaves_no_worker_behind():
    """The checker counts each part as it comes back while the workers search on (`spread.searching`): the workers
    start as the block opens (before anything is read: the checker works meanwhile), the parts come in their order,
    the same as searched alone, and leaving the block after the first (a stop) ends the pool's processes there and
    then."""
    history = eight_clients_on(ForgetfulConsumers("sqs-standard"), "sqs-standard", seed=3, rounds=12)
    parts = decompose(history).parts
    base = Model(history.profile, Timing(windowed=True, tolerance=history.tolerance), indexed=False)
    alone = [search(p.ops, base).order for p in parts]
    with searching(parts, base, DEFAULT_BUDGET, workers=2) as results:
        assert multiprocessing.active_children()
        assert [found.order for found in results] == alone
    with searching(parts, base, DEFAULT_BUDGET, workers=2) as results:
        assert next(results).order == alone[0]
    assert not multiprocessing.active_children()


def _turning_back() -> list[History]:
    """Histories whose search must go back: a receive sent before the send of the message it returned (taken
    first, it fits nowhere), and on FIFO two receives of one message at once (no order fits)."""
    return [Story().received(1, [("m1", "h1", 1)], 0, 1.0, 1.3).send(0, "m1", 0, 1.1, 1.2).done(),
            Story().received(1, [("m1", "h1", 1)], 0, 1.0, 1.3).send(0, "m1", 0, 1.1, 1.2)
            .received(0, [("m1", "h2", 2)], 0, 1.25, 1.4).done(),
            Story("sqs-fifo").send(0, "m1", 0, 1.0, 1.1).received(0, [("m1", "h1", 1)], 0, 2.0, 2.2)
            .received(1, [("m1", "h2", 1)], 0, 2.1, 2.3).done()]


def test_a_walk_first_finds_what_a_search_that_may_always_turn_back_finds():
    """`search` walks a part once keeping nothing to go back to, and searches again only where that walk had to
    turn back: on every part of histories that need a turn back, and of ones with violations and early returns,
    the same status, order, verdicts and failure as a search that keeps every branch from the start."""
    walked_again = 0
    for history in [*_turning_back(), *(eight_clients_on(ForgetfulConsumers(profile), profile, seed=4, rounds=12)
                                        for profile in ("sqs-standard", "sqs-fifo"))]:
        base = Model(history.profile, Timing(windowed=True, tolerance=history.tolerance), indexed=False)
        for part in decompose(history).parts:
            found = search(part.ops, base)
            passes = []
            for allowed in NOTES_TRIED:
                passes.append(search_with(part.ops, base, len(part.ops) + DEFAULT_BUDGET, allowed))
                walked_again += search_with(part.ops, base, len(part.ops), allowed, turn_back=False).status == "again"
                if passes[-1].status != "none":
                    break
            reference = passes[-1] if passes[-1].status != "none" else max(passes, key=lambda f: len(f.order))
            assert (found.status, found.order, found.verdicts, found.failed_at) == \
                (reference.status, reference.order, reference.verdicts, reference.failed_at), part.key
    assert walked_again  # some walk had to turn back: both ways were compared
