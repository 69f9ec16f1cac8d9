"""Every worked example in the seed documents, as the model computes it."""

import dataclasses

import pytest

from sqs_conformance.model import PROFILES
from sqs_conformance.model.values import ReceiveMessage, ReceiveOk
from tests.model.scenario import Scenario, error_code


def test_seed000_extension_is_not_additive():
    """30 s queue; at 20 s extend by 60: 60 s from the call (deadline 80), not 10 + 60 = 70 left (deadline 90)."""
    q = Scenario()
    mid = q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.change(handle, 60, at=20)
    assert q.receivable(79.999) == []
    assert q.receivable(80) == [mid]


def test_seed000_extension_is_not_remembered_at_the_next_receive():
    q = Scenario()
    q.send()
    q.change(q.receive_one(at=0).receipt_handle, 60, at=20)
    q.receive_one(at=80)
    assert q.receivable(109.999) == []
    assert q.receivable(110) != []  # the queue's 30 s, not the 60 s of the extension


def test_seed000_terminate_makes_the_message_visible_at_once():
    q = Scenario()
    mid = q.send()
    handle = q.receive_one(at=0).receipt_handle
    assert q.receivable(5) == []
    q.change(handle, 0, at=5)
    assert q.receivable(5) == [mid]


def test_seed000_change_before_receive_locks_for_the_requested_time_then_queue_default():
    """2008 API: ChangeMessageVisibility(3600) on a message never received hides it for one hour; once the lock
    expires the next receive uses the queue's 30 s, not 3600 s."""
    q = Scenario("sqs-2008")
    mid = q.send()
    q.change(mid, 3600, at=0)
    assert q.receivable(3599.999) == []
    assert q.receive(at=3600)[0].message_id == mid
    assert q.receivable(3629.999) == []
    assert q.receivable(3630) == [mid]


def test_seed000_peek_does_not_affect_visibility():
    q = Scenario("sqs-2008")
    mid = q.send()
    q.receive_one(at=0)
    assert [m.message_id for m in q.peek(at=10)] == [mid]  # regardless of its visibility
    assert q.receivable(29.999) == []
    assert q.receivable(30) == [mid]
    assert q.peek(at=30)[0].receive_count == 1  # peeking counts no receive


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo", "sqs-2008"])
def test_seed001_receive_override_applies_to_returned_messages_only(profile):
    q = Scenario(profile)
    mid = q.send()
    q.receive_one(at=0, visibility_timeout=5)
    assert q.receivable(4.999) == []
    assert q.receivable(5) == [mid]
    if profile != "sqs-2008":
        assert q.attributes(at=5)["VisibilityTimeout"] == "30"
    q.receive_one(at=5)
    assert q.receivable(34.999) == []  # the queue's own 30 s again


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo", "sqs-2008", "smq"])
def test_seed002_shortening_counts_from_the_call(profile):
    """60 s queue; 15 s after the receive change to 10 s: visible at 25 s."""
    q = Scenario(profile, VisibilityTimeout=60)
    mid = q.send()
    handle = q.receive_one(at=0).receipt_handle
    q.change(handle, 10, at=15)
    assert q.receivable(24.999) == []
    assert q.receivable(25) == [mid]


def test_seed002_defaults_and_limits():
    q = Scenario()
    assert q.attributes(at=0)["VisibilityTimeout"] == "30"
    assert error_code(q.set_attributes(0, VisibilityTimeout=43201)) == "InvalidAttributeValue"
    assert error_code(q.set_attributes(0, VisibilityTimeout=-1)) == "InvalidAttributeValue"
    assert error_code(q.set_attributes(0, VisibilityTimeout=43200)) is None
    assert error_code(q.set_attributes(0, VisibilityTimeout=0)) is None


def test_seed002_twelve_hours_from_the_receive_and_extending_does_not_reset_it():
    q = Scenario()
    q.send()
    handle = q.receive_one(at=100).receipt_handle
    assert error_code(q.change(handle, 20000, at=200)) is None
    # 43200 s after the receive is the limit, even though the last change was at 200 s
    assert error_code(q.change(handle, 43200 - 100, at=200)) is None
    assert error_code(q.change(handle, 43200 - 100 + 1, at=200)) == "InvalidParameterValue"


def test_seed002_heartbeat_extends_until_the_ceiling():
    """Extend by 120 s every 60 s: works while call + 120 <= receive + 43200."""
    q = Scenario()
    q.send()
    handle = q.receive_one(at=0, visibility_timeout=120).receipt_handle
    t = 60.0
    while t + 120 <= 43200:
        assert error_code(q.change(handle, 120, at=t)) is None, t
        t += 60
    assert error_code(q.change(handle, 120, at=t)) == "InvalidParameterValue"


def test_seed002_fifo_group_is_locked_until_delete_or_visible():
    q = Scenario("sqs-fifo")
    first = q.send("a")
    second = q.send("b")
    got = q.receive_one(at=0)
    assert got.message_id == first
    assert q.receivable(10) == []  # 'no more messages for the same message group ID are returned'
    q.delete(got.receipt_handle, at=10)
    assert q.receivable(10) == [second]


def test_seed002_inflight_quota_short_poll_overlimit_long_poll_empty():
    profile = dataclasses.replace(PROFILES["sqs-standard"], inflight_quota=2)
    q = Scenario(profile)
    for body in "abc":
        q.send(body)
    assert len(q.receive(at=0, max_messages=2)) == 2
    assert error_code(q.do(ReceiveMessage("q", max_messages=1), 1)) == "OverLimit"
    response = q.do(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), 1)
    assert isinstance(response, ReceiveOk) and response.messages == ()


def test_seed002_fifo_quota_gives_no_error():
    profile = dataclasses.replace(PROFILES["sqs-fifo"], inflight_quota=1)
    q = Scenario(profile)
    q.send("a", group_id="g1")
    q.send("b", group_id="g2")
    q.receive(at=0, max_messages=1)
    response = q.do(ReceiveMessage("q", max_messages=1), 1)
    assert isinstance(response, ReceiveOk) and response.messages == ()


def test_seed003_twelve_hours_count_from_the_receive_not_the_send():
    """The message waits 10,000 s in the queue; the ceiling is 43200 s after its receive, not its send."""
    q = Scenario()
    q.send(at=0)
    handle = q.receive_one(at=10_000).receipt_handle
    assert error_code(q.change(handle, 43200, at=10_000)) is None


def test_seed004_smq_range_default_and_reappearance():
    q = Scenario("smq")
    assert q.attributes(at=0)["VisibilityTimeout"] == "30"
    assert error_code(q.set_attributes(0, VisibilityTimeout=0)) == "InvalidArgument"
    assert error_code(q.set_attributes(0, VisibilityTimeout=43201)) == "InvalidArgument"
    mid = q.send()
    q.receive_one(at=0)
    assert q.receivable(29.999) == []
    assert q.receivable(30) == [mid]  # 'becomes visible again and can be received by the same or a different'
