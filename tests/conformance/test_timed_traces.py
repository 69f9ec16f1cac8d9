"""Hand-made real-clock traces: what `check` MUST flag and what it must NOT (windows, tolerance, unknowns)."""

import json

import pytest

from conformance.check import check_traces
from conformance.trace import encode
from model.values import (
    ChangeMessageVisibility, CreateQueue, DeleteMessage, ReceivedMessage, ReceiveMessage, ReceiveOk, SendMessage,
    ChangeOk, Ok, SendOk, Unknown,
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
