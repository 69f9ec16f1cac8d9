"""A step exercises a rule decisively only where a queue breaking the rule would have given an answer the model
does not permit there: elsewhere the rule could not have failed, and a pass would mean nothing."""

from sqs_conformance.model import Model
from sqs_conformance.model.outcomes import Outcome
from sqs_conformance.model.state import Timing
from sqs_conformance.model.values import (
    BatchOk, ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, CreateQueue, Error, Ok,
    ReceivedMessage, ReceiveMessage, ReceiveOk, SendMessage, SendOk,
)
from tests.model.scenario import Scenario


def receive(q: Scenario, at: float, observed: ReceiveOk, **kw):
    return q.check(ReceiveMessage(q.queue, max_messages=10, **kw), at, observed)


def test_a_receive_count_is_decided_only_on_a_message_returned():
    q = Scenario()
    mid = q.send()
    empty = receive(q, 0, ReceiveOk(()))
    assert {"RCV-COUNT", "RCV-FIRST-TIMESTAMP"} <= set(empty.outcome.rules)
    assert not {"RCV-COUNT", "RCV-FIRST-TIMESTAMP"} & set(empty.decisive)
    got = receive(q, 0, ReceiveOk((ReceivedMessage(mid, "body", None, 1, 0),)))
    assert {"RCV-COUNT", "RCV-FIRST-TIMESTAMP", "RCV-HIDE"} <= set(got.decisive)


def test_a_fifo_order_is_decided_only_where_two_messages_of_a_group_could_come():
    one = Scenario("sqs-fifo")
    first = one.send("a")
    verdict = receive(one, 0, ReceiveOk((ReceivedMessage(first, "a", None, 1, 0),)))
    assert "FIFO-ORDER" in verdict.outcome.rules and "FIFO-ORDER" not in verdict.decisive
    two = Scenario("sqs-fifo")
    first, second = two.send("a"), two.send("b")
    both = ReceiveOk((ReceivedMessage(first, "a", None, 1, 0), ReceivedMessage(second, "b", None, 1, 0)))
    assert "FIFO-ORDER" in receive(two, 0, both).decisive


def test_a_reappearance_is_decided_by_a_long_poll_not_by_a_short_poll_that_may_sample():
    for wait, decided in ((None, False), (1, True)):
        q = Scenario(VisibilityTimeout=10)
        mid = q.send()
        q.receive_one(at=0)
        back = ReceiveOk((ReceivedMessage(mid, "body", None, 2, 0),))
        verdict = receive(q, 20, back, wait_time_seconds=wait)
        assert "RCV-REAPPEAR" in verdict.outcome.rules
        assert ("RCV-REAPPEAR" in verdict.decisive) is decided, wait


def received_in_model_space(model: Model) -> None:
    """A queue, a message sent to it and received: each answer conforming, as the engine hands answers to the
    model (an id or handle the target issues for the first time reads as None)."""
    setup = [(CreateQueue("q"), 0.0, Ok(), 0.01), (SendMessage("q", "m"), 0.01, SendOk(None), 0.02),
             (ReceiveMessage("q", 1), 0.02, ReceiveOk((ReceivedMessage("msg-1", "m", None, 1, 20),)), 0.03)]
    for op, invoked, answer, completed in setup:
        assert model.observe(op, invoked, answer, completed).ok, op


def test_nothing_is_decided_where_the_timing_permits_an_answer_of_another_kind():
    """A change right at the 12-hour ceiling under a real clock's window: accepted and refused are both
    permitted, so neither answer can show VIS-CEILING broken; well inside the ceiling the change decides."""
    model = Model("sqs-standard", Timing(windowed=True, tolerance=0.5))
    received_in_model_space(model)
    handle = next(iter(model.handles))
    inside = model.observe(ChangeMessageVisibility("q", handle, 600), 1.0, ChangeOk(), 1.01)
    assert inside.decisive == ("VIS-EXTEND-NONADDITIVE",)
    at_edge = model.observe(ChangeMessageVisibility("q", handle, 43199), 1.0, ChangeOk(), 1.01)
    assert "VIS-CEILING" in at_edge.outcome.rules and at_edge.decisive == ()


def test_a_receive_that_hands_back_an_earlier_handle_of_the_message_diverges():
    """In model space a handle the target issued before reads as the model's own name for it, a new one as None."""
    q = Scenario(VisibilityTimeout=0)
    mid = q.send()
    first = q.receive_one(at=0)
    again = receive(q, 1, ReceiveOk((ReceivedMessage(mid, "body", first.receipt_handle, 2, 0),)))
    assert [d.rule for d in again.divergences] == ["RCV-NEW-HANDLE"]
    fresh = Scenario(VisibilityTimeout=0)
    mid = fresh.send()
    fresh.receive_one(at=0)
    new = receive(fresh, 1, ReceiveOk((ReceivedMessage(mid, "body", None, 2, 0),)))
    assert new.divergences == () and "RCV-NEW-HANDLE" in new.decisive


def test_a_refused_receive_is_blamed_on_the_range_check_of_the_parameter_its_error_names():
    """A queue refusing VisibilityTimeout=43200 on a receive breaks VIS-RANGE, whatever else the receive exercised."""
    q = Scenario()
    q.send()
    refusal = Error("InvalidParameterValue", "Value 43200 for parameter VisibilityTimeout is invalid.")
    verdict = q.check(ReceiveMessage("q", max_messages=10, visibility_timeout=43200, wait_time_seconds=1), 0, refusal)
    assert verdict.divergences[0].rule == "VIS-RANGE"


def test_a_purge_decides_purge_all_only_where_it_finds_a_message_and_names_one_in_flight():
    from sqs_conformance.model.values import PurgeQueue

    empty = Scenario()
    assert "PURGE-ALL" not in empty.check(PurgeQueue("q"), 0, Ok()).decisive
    visible = Scenario()
    visible.send()
    purged = visible.check(PurgeQueue("q"), 0, Ok())
    assert "PURGE-ALL" in purged.decisive and purged.outcome.situation_of("PURGE-ALL") == ""
    flying = Scenario()
    flying.send()
    flying.receive_one(at=0)
    assert flying.check(PurgeQueue("q"), 1, Ok()).outcome.situation_of("PURGE-ALL") == "in flight"


# --- situations: where a rule holds in one situation and may break in another, with the same answer ----------------

def test_a_value_at_either_edge_of_its_range_or_past_either_side_is_a_situation_of_the_rules_reading_it():
    q = Scenario()
    q.send()
    at_top = receive(q, 0, ReceiveOk(()), visibility_timeout=43200)  # nothing returned yet: VIS-RANGE still decided
    assert at_top.outcome.situation_of("RCV-OVERRIDE") == "VisibilityTimeout at its highest"
    assert at_top.outcome.situation_of("RCV-MAX-MESSAGES") == "MaxNumberOfMessages at its highest"
    assert receive(q, 0, ReceiveOk(()), visibility_timeout=30).outcome.situation_of("RCV-OVERRIDE") == ""
    for value, side in ((-1, "below its range"), (43201, "above its range")):
        refused = q.check(ChangeMessageVisibility("q", "rh-1", value), 1, Error("InvalidParameterValue", ""))
        assert refused.outcome.situation_of("VIS-RANGE") == f"VisibilityTimeout {side}"
    created = q.check(CreateQueue("other", {"DelaySeconds": 900}), 2, Ok())
    assert created.outcome.situation_of("DELAY-HIDES") == "DelaySeconds at its highest"


def test_more_situations_make_a_new_outcome_and_leave_the_one_permitted_as_it_was():
    # An enumerated check hands back the very outcome it permitted where one alone matches: situated in place, an
    # expectation kept and checked again would carry the edge of the first answer into the second.
    permitted = Outcome(ChangeOk(), ("VIS-RANGE",), situations=(("VIS-RANGE", "at its lowest"),))
    situated = permitted.in_situations((("VIS-RANGE", "at its highest"),))
    assert situated.situation_of("VIS-RANGE") == "at its lowest, at its highest"
    assert permitted.situation_of("VIS-RANGE") == "at its lowest"
    assert (situated.response, situated.rules, situated.effects) == (permitted.response, permitted.rules,
                                                                     permitted.effects)


def test_a_ceiling_that_a_later_receive_leaves_room_for_is_a_situation_of_its_own():
    q = Scenario(VisibilityTimeout=10)
    q.send()
    q.receive_one(at=0)
    later = q.receive_one(at=20_000)  # the first receive's 12 hours end at 43,200; this one's at 63,200
    accepted = q.check(ChangeMessageVisibility("q", later.receipt_handle, 43_000), 20_001, ChangeOk())
    assert "VIS-CEILING-FROM-RECEIVE" in accepted.decisive
    assert accepted.outcome.situation_of("VIS-CEILING-FROM-RECEIVE") == "counted from a later receive"
    first = Scenario()
    first.send()
    handle = first.receive_one(at=0).receipt_handle
    near = first.check(ChangeMessageVisibility("q", handle, 43_190), 1, ChangeOk())
    assert near.outcome.situation_of("VIS-CEILING-FROM-RECEIVE") == ""


def test_a_purge_refused_where_only_an_earlier_purge_is_past_the_window_is_a_situation_of_its_own():
    from sqs_conformance.model.values import PurgeQueue

    q = Scenario()
    in_progress = Error("PurgeQueueInProgress", "")
    q.check(PurgeQueue("q"), 0, Ok())
    assert q.check(PurgeQueue("q"), 30, in_progress).outcome.situation_of("PURGE-IN-PROGRESS") == ""
    q.check(PurgeQueue("q"), 61, Ok())
    refused = q.check(PurgeQueue("q"), 100, in_progress)
    assert refused.ok and refused.outcome.situation_of("PURGE-IN-PROGRESS") == "an earlier purge past its window"


def test_the_queues_default_wait_and_a_handle_purged_in_flight_are_situations():
    from sqs_conformance.model.values import PurgeQueue

    q = Scenario(ReceiveMessageWaitTimeSeconds=5)
    mid = q.send(delay_seconds=2)
    polled = q.check(ReceiveMessage("q", max_messages=10), 0, ReceiveOk((ReceivedMessage(mid, "body", None, 1, 2000),)))
    assert polled.ok and polled.outcome.situation_of("RCV-LONG-POLL") == (
        "the queue's default wait, a message due during the wait")  # delayed 2 s into a 5 s wait
    handle = polled.outcome.response.messages[0].receipt_handle
    q.check(PurgeQueue("q"), 3, Ok())
    from sqs_conformance.model import errors
    from sqs_conformance.model.outcomes import concrete

    refused = q.check(ChangeMessageVisibility("q", handle, 10), 4, concrete(errors.not_available_for_change()))
    assert refused.ok and refused.outcome.situation_of("PURGE-ALL") == "purged in flight"


def test_a_long_poll_is_decided_only_where_a_message_is_surely_receivable_before_its_wait_ends():
    empty = Scenario()
    assert "RCV-LONG-POLL" not in receive(empty, 0, ReceiveOk(()), wait_time_seconds=5).decisive  # as a short poll
    coming = Scenario()
    mid = coming.send(delay_seconds=2)
    got = receive(coming, 0, ReceiveOk((ReceivedMessage(mid, "body", None, 1, 2000),)), wait_time_seconds=5)
    assert got.ok and "RCV-LONG-POLL" in got.decisive
    assert got.outcome.situation_of("RCV-LONG-POLL") == "a message due during the wait"
    there = Scenario()
    mid = there.send()
    got = receive(there, 0, ReceiveOk((ReceivedMessage(mid, "body", None, 1, 0),)), wait_time_seconds=5)
    assert "RCV-LONG-POLL" in got.decisive and got.outcome.situation_of("RCV-LONG-POLL") == ""
    later = Scenario()
    later.send(delay_seconds=10)  # due only after the wait: a short poll would answer the same
    assert "RCV-LONG-POLL" not in receive(later, 0, ReceiveOk(()), wait_time_seconds=5).decisive


def test_a_batch_decides_only_the_rules_its_entries_decided():
    """Under a real clock's window a change at the 12-hour ceiling may be accepted or refused: as a batch entry it
    decides VIS-CEILING no more than as a single call does."""
    model = Model("sqs-standard", Timing(windowed=True, tolerance=0.5))
    received_in_model_space(model)
    handle = next(iter(model.handles))
    at_edge = model.observe(ChangeMessageVisibilityBatch("q", (ChangeEntry("a", handle, 43199),)), 1.0,
                            BatchOk(("a",)), 1.01)
    assert at_edge.ok and "VIS-CEILING" in at_edge.outcome.rules and "VIS-CEILING" not in at_edge.decisive
    inside = model.observe(ChangeMessageVisibilityBatch("q", (ChangeEntry("a", handle, 600),)), 2.0,
                           BatchOk(("a",)), 2.01)
    assert inside.ok and "VIS-SHORTEN" in inside.decisive  # well inside the ceiling: shorter than 43199 s


def test_a_rule_is_decided_where_every_other_answer_permitted_rests_on_it_and_refuses_alike():
    """A handle of a message purged in flight may be refused with either of two errors (nothing records which),
    but a queue whose purge spared in-flight messages would accept the change: PURGE-ALL is decided, while
    CMV-DELETED, whose text the other error does not have, is not. A delete through that handle decides neither:
    a second delete is accepted too."""
    from sqs_conformance.model import errors
    from sqs_conformance.model.outcomes import concrete
    from sqs_conformance.model.values import DeleteMessage, PurgeQueue

    q = Scenario()
    q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.check(PurgeQueue("q"), 1, Ok())
    for refusal in (concrete(errors.not_available_for_change()), Error("ReceiptHandleIsInvalid", "", 404)):
        refused = q.check(ChangeMessageVisibility("q", handle, 10), 2, refusal)
        assert refused.ok and "PURGE-ALL" in refused.decisive, refusal
        assert refused.outcome.situation_of("PURGE-ALL") == "purged in flight"
        assert "CMV-DELETED" not in refused.decisive
    deleted = q.check(DeleteMessage("q", handle), 3, Ok())
    assert deleted.ok and "PURGE-ALL" not in deleted.decisive


def test_a_rule_the_evidence_leaves_open_is_decided_where_an_answer_outside_its_hedge_is_excluded():
    """A FIFO change through an expired handle may be refused as expired or accepted (nothing records which): a
    queue answering otherwise (another error) breaks the rule, so either permitted answer decides it, where the
    ceiling's firm rule, open only by the timing, is not decided by either of its two answers."""
    from sqs_conformance.model import errors
    from sqs_conformance.model.outcomes import concrete

    def change_after_expiry(answer):
        q = Scenario("sqs-fifo", VisibilityTimeout=5)
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        return q.check(ChangeMessageVisibility("q", handle, 10), 10, answer)

    for answer in (concrete(errors.handle_expired()), ChangeOk()):
        verdict = change_after_expiry(answer)
        assert verdict.ok and "CMV-FIFO-EXPIRED" in verdict.decisive, answer
    other = change_after_expiry(Error("ReceiptHandleIsInvalid", "", 404))
    assert [d.rule for d in other.divergences][:1] == ["CMV-FIFO-EXPIRED"]


def test_a_handle_of_a_message_at_its_max_receive_count_is_a_situation():
    # Received maxReceiveCount times, the message is still in its queue until a receive moves it: a queue that moves
    # it when it reaches the count, or at its deadline, answers a handle otherwise, so that is a situation of its own
    # for every rule a change or delete rests on there. One received fewer times is not in it.
    def change_after(receives: int):
        q = Scenario.with_dead_letter_queue("sqs-fifo", max_receive_count=2)
        q.send()
        handle = None
        for at in range(receives):
            handle = q.receive_one(at=at * 40.0, visibility_timeout=30).receipt_handle
        return q.model.expect(ChangeMessageVisibility("q", handle, 0), receives * 40.0)

    at_limit = change_after(2).outcomes
    assert at_limit and all(o.situation_of(rule) == "at its maxReceiveCount" for o in at_limit for rule in o.rules)
    assert all(o.situation_of(rule) != "at its maxReceiveCount" for o in change_after(1).outcomes for rule in o.rules)


def test_the_rules_a_receive_decides_come_in_the_order_of_its_answer():
    """Not in an order of the ids' hashes, which Python draws afresh in each process: the same seed must give the
    same trace line by line. One message comes back after a change (VIS-NOT-STICKY), the other on its first
    receive."""
    orders = []
    for reverse in (False, True):
        q = Scenario()
        changed = q.send("a")
        q.change(q.receive_one(0).receipt_handle, 0, 1)  # visible again
        fresh = q.send("b", 1)
        answer = [ReceivedMessage(changed, "a", None, 2, 0), ReceivedMessage(fresh, "b", None, 1, 2000)]
        verdict = receive(q, 2, ReceiveOk(tuple(answer[::-1] if reverse else answer)))
        assert verdict.ok, verdict.divergences
        orders.append([r for r in verdict.outcome.rules if r in ("VIS-NOT-STICKY", "RCV-HIDE")])
    assert orders == [["VIS-NOT-STICKY", "RCV-HIDE"], ["RCV-HIDE", "VIS-NOT-STICKY"]]


def test_purges_on_a_real_clock_are_60_s_apart_at_some_instants_their_windows_allow_or_at_none():
    """Each purge took effect somewhere in [sent, answered]: a second one refused or accepted as some instants of the
    two windows allow, decided only where the windows allow one answer."""
    from sqs_conformance.model.values import PurgeQueue

    in_progress = Error("PurgeQueueInProgress", "")

    def second(sent: float, answered: float, observed):
        model = Model("sqs-standard", Timing(windowed=True))
        model.observe(CreateQueue("q", {}), 0, Ok(), completed_at=0.1)
        model.observe(PurgeQueue("q"), 100, Ok(), completed_at=103)
        return model.observe(PurgeQueue("q"), sent, observed, completed_at=answered)

    for observed in (Ok(), in_progress):  # 60 s apart if the first took effect late or the second early: either
        straddling = second(160, 163, observed)
        assert straddling.ok and "PURGE-IN-PROGRESS" not in straddling.decisive
    refused = second(150, 159, in_progress)  # within 60 s whatever the instants
    assert refused.ok and "PURGE-IN-PROGRESS" in refused.decisive
    assert second(150, 159, Ok()).divergences[0].rule == "PURGE-IN-PROGRESS"
    assert "PURGE-IN-PROGRESS" in second(164, 165, in_progress).divergences[0].rules  # past 60 s at any instants


def test_repeated_batch_ids_on_entries_that_differ_otherwise_are_a_situation_of_their_own():
    """A queue that refuses a repeated entry (id and handle alike) passes every batch repeating one whole: the
    witnesses must also try ids repeated on entries with different handles."""
    from sqs_conformance.model.values import DeleteEntry, DeleteMessageBatch

    q = Scenario()
    q.send("a"), q.send("b")
    first, second = (m.receipt_handle for m in q.receive(at=0, max_messages=2))
    not_distinct = Error("BatchEntryIdsNotDistinct", "Id entries are not distinct.")

    def refused(*entries):
        verdict = q.check(DeleteMessageBatch("q", entries), 1, not_distinct)
        assert verdict.ok and "BATCH-IDS-DISTINCT" in verdict.decisive
        return verdict.outcome.situation_of("BATCH-IDS-DISTINCT")

    assert refused(DeleteEntry("e", first), DeleteEntry("e", second)) == "entries that differ but for their ids"
    assert refused(DeleteEntry("e", first), DeleteEntry("e", first)) == ""


def test_counts_read_after_a_timeout_or_a_delay_ran_out_with_no_receive_since_are_situations_of_their_own():
    """A queue that releases a message only when a receive comes (or another operation touches the queue) still
    counts it as hidden after its deadline: it passes every count read before one runs out, so the witnesses must
    read one after. A timeout of 0 is not one: a queue may release at once what it is given no time to hold."""
    from sqs_conformance.model.values import AttributesOk, GetQueueAttributes

    def counts_at(at: float, received_again: bool = False, timeout: int = 5, delay: int = 0) -> str:
        q = Scenario(VisibilityTimeout=timeout)
        if delay:
            q.send(delay_seconds=delay)
        else:
            q.send()
            q.receive_one(at=0)
        if received_again:
            q.receive_one(at=6)
        shown = q.model.step(GetQueueAttributes("q"), at)[0]
        assert isinstance(shown, AttributesOk)
        verdict = q.check(GetQueueAttributes("q"), at, shown)
        assert verdict.ok and "ATTR-COUNTS" in verdict.decisive
        return verdict.outcome.situation_of("ATTR-COUNTS")

    assert counts_at(7) == "a receipt's timeout ran out, no receive since"
    assert counts_at(3) == ""  # still in flight
    assert counts_at(7, received_again=True) == ""  # in flight again under the new receipt
    assert counts_at(7, timeout=0) == ""  # released at once, never held
    assert counts_at(7, delay=5) == "a delay ran out, no receive since"
    assert counts_at(3, delay=5) == ""  # still delayed


def test_a_message_visible_at_once_on_a_queue_with_a_delay_is_a_situation_of_its_own():
    """Made visible by a change to 0, or sent with its own DelaySeconds 0, on a queue whose DelaySeconds is 5: a
    queue that applies its delay again (or instead) passes every such step on a queue without a delay. A long poll
    that comes back empty diverges under the rule; the receive that returns the message names the situation."""
    poll = ReceiveMessage("q", max_messages=10, wait_time_seconds=1)

    def terminated(observe_empty: bool):
        q = Scenario(DelaySeconds=5)
        mid = q.send(at=0)
        handle = q.receive_one(at=6).receipt_handle
        q.change(handle, 0, at=7)
        observed = ReceiveOk(()) if observe_empty else ReceiveOk((ReceivedMessage(mid, "body", None, 2, 6000),))
        return q.check(poll, 8, observed)

    def undelayed(observe_empty: bool):
        q = Scenario(DelaySeconds=5)
        mid = q.check(SendMessage("q", "body", delay_seconds=0), 0, SendOk("t-1")).outcome.response.message_id
        observed = ReceiveOk(()) if observe_empty else ReceiveOk((ReceivedMessage(mid, "body", None, 1, 1000),))
        return q.check(poll, 1, observed)

    for judged, rule_id, label in ((terminated, "VIS-TERMINATE", "on a queue with a delay"),
                                   (undelayed, "DELAY-HIDES", "its own DelaySeconds 0 on a queue with a delay")):
        returned = judged(observe_empty=False)
        assert returned.ok and returned.outcome.situation_of(rule_id) == label, rule_id
        assert rule_id in judged(observe_empty=True).divergences[0].rules, rule_id


def test_a_send_past_its_ids_window_exercises_the_window_counted_from_the_first_send():
    """FIFO: a deduplication id's 5 minutes count from its first send. A send after they ended is enqueued afresh
    (a queue still deduplicating it diverges on FIFO-DEDUP); where a deduplicated retry came within the last 5
    minutes, a queue that restarts the window at each retry diverges only there: a situation of its own."""
    from sqs_conformance.model.values import SendMessage, SendOk

    def send_at(at: float, retry_at: float | None = None, observed_first: bool = False):
        q = Scenario(profile="sqs-fifo")
        first = q.send(at=0, dedup_id="u1")
        if retry_at is not None:
            q.send(at=retry_at, dedup_id="u1")
        op = SendMessage("q", "body", group_id="g", dedup_id="u1")
        return q.check(op, at, SendOk(first if observed_first else None))  # None: a fresh id, as translated

    past = send_at(310, retry_at=200)
    assert past.ok and "FIFO-DEDUP" in past.decisive
    assert past.outcome.situation_of("FIFO-DEDUP") == \
        "its first send's window ended, a deduplicated retry within the last one"
    assert send_at(310).outcome.situation_of("FIFO-DEDUP") == "its first send's window ended"
    assert send_at(520, retry_at=200).outcome.situation_of("FIFO-DEDUP") == "its first send's window ended"
    assert send_at(200).outcome.situation_of("FIFO-DEDUP") == ""  # deduplicated: the plain case
    slid = send_at(310, retry_at=200, observed_first=True)  # the first message again: the window restarted
    assert [d.rule for d in slid.divergences] == ["FIFO-DEDUP"]


def test_a_retry_after_its_first_message_is_gone_is_a_situation_of_its_own():
    """FIFO: the id holds for 5 minutes whatever became of the message it was first sent as; a queue that keeps
    deduplication with its messages forgets it once the message is deleted, and passes every retry sent before."""
    from sqs_conformance.model.values import SendMessage, SendOk

    from sqs_conformance.model.values import PurgeQueue

    def retry(gone_by: str | None, observed_new: bool = False):
        q = Scenario(profile="sqs-fifo")
        first = q.send(at=0, dedup_id="u1")
        if gone_by == "delete":
            q.delete(q.receive_one(at=1).receipt_handle, at=2)
        elif gone_by == "purge":
            q.do(PurgeQueue("q"), 2)
        op = SendMessage("q", "body", group_id="g", dedup_id="u1")
        return q.check(op, 10, SendOk(None if observed_new else first))

    assert retry("delete").outcome.situation_of("FIFO-DEDUP") == "the message it was first sent as was deleted"
    assert retry("purge").outcome.situation_of("FIFO-DEDUP") == "the message it was first sent as was purged"
    assert retry(None).outcome.situation_of("FIFO-DEDUP") == ""
    forgot = retry("delete", observed_new=True)  # enqueued afresh: deduplication forgotten with the message
    assert [d.rule for d in forgot.divergences] == ["FIFO-DEDUP"]
