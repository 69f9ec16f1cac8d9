"""The reference in-house design on Redis: it conforms on every profile, and stays in its own keys and on
loopback."""

import os

import pytest

from benchmarks.reference_designs.redisq.target import URL_VARIABLE, RedisQueueTarget
from sqs_conformance.conformance.machine import unreachable
from sqs_conformance.conformance.runner import RunOptions, run
from sqs_conformance.model.rules import rules_for
from sqs_conformance.model.values import CreateQueue, ReceiveMessage, SendMessage
from tests.loopback import LOOPBACK_V4, listening_addresses


def test_its_own_redis_listens_on_loopback_only_and_stops_with_it():
    before = os.environ.pop(URL_VARIABLE, None)
    try:
        target = RedisQueueTarget("sqs-standard")
    finally:
        if before is not None:
            os.environ[URL_VARIABLE] = before
    server = target.server
    assert listening_addresses(server.port) == {LOOPBACK_V4}
    target.close()
    assert server.process.poll() is not None and not server.scratch.exists()


def test_it_touches_only_keys_under_its_own_namespace(shared_redis):
    shared_redis.set("someone-elses-key", "keep me")
    target = RedisQueueTarget("sqs-standard")
    target.execute(CreateQueue("q", {}))
    target.execute(SendMessage("q", "hello"))
    assert [m.body for m in target.execute(ReceiveMessage("q")).messages] == ["hello"]
    mine = [k for k in shared_redis.scan_iter() if k != b"someone-elses-key"]
    assert mine and all(k.startswith(target._namespace.encode()) for k in mine)
    target.close()
    assert list(shared_redis.scan_iter()) == [b"someone-elses-key"]
    shared_redis.delete("someone-elses-key")


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo", "sqs-2008", "smq"])
def test_the_design_conforms_on_every_profile_and_every_reachable_rule_is_checked(shared_redis, profile):
    target = RedisQueueTarget(profile)
    try:
        result = run(target, profile, RunOptions(examples=60, seed=11))
    finally:
        target.close()
    assert result.conforms, {rule: f.divergence for rule, f in result.findings.items()}
    assert set(result.gaps()) == set(), result.gaps()
    assert {r.id for r in rules_for(profile)} - set(result.tallies.rules) <= set(unreachable(profile))


def test_a_fifo_long_poll_with_an_attempt_id_still_gets_the_message_that_comes_within_its_wait(shared_redis):
    # Its later tries are the same request: they must not replay its own first, empty try as a retry would.
    target = RedisQueueTarget("sqs-fifo")
    try:
        target.execute(CreateQueue("q", {"FifoQueue": "true", "ContentBasedDeduplication": "true",
                                         "DelaySeconds": 5}))
        target.execute(SendMessage("q", "m1", group_id="g1"))
        target.clock.advance_to(4.0)
        got = target.execute(ReceiveMessage("q", wait_time_seconds=5, attempt_id="a1"))
        assert [m.body for m in got.messages] == ["m1"] and target.clock.now() == 5.0
        again = target.execute(ReceiveMessage("q", wait_time_seconds=5, attempt_id="a1"))
        assert [m.receipt_handle for m in again.messages] == [got.messages[0].receipt_handle]  # a retry replays
        empty = target.execute(ReceiveMessage("q", wait_time_seconds=2, attempt_id="a2"))
        assert empty.messages == () and target.clock.now() == 7.0
        target.execute(SendMessage("q", "m2", group_id="g2", delay_seconds=0))
        # A replayed answer is the answer, even empty: the retry does not go on polling.
        assert target.execute(ReceiveMessage("q", wait_time_seconds=2, attempt_id="a2")).messages == ()
        assert target.clock.now() == 7.0
    finally:
        target.close()
