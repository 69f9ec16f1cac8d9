"""Invariants of the model over generated operation sequences, in every profile.

One model acts as the queue (its canonical outcomes) and a second one checks it through the id translator, as
the engine will check any target: the model must never diverge from itself.
"""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings, strategies as st

from sqs_conformance.conformance.translate import IdMap
from sqs_conformance.model import PROFILES, Model
from sqs_conformance.model.attributes import COUNTS
from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage,
    GetQueueAttributes, Ok, PeekMessage, PurgeQueue, ReceiveMessage, ReceiveOk, SendMessage, SetQueueAttributes,
)

TIMEOUTS = st.sampled_from([0, 1, 5, 30, 60, 3600, 43199, 43200, 43201, -1])
ADVANCES = st.sampled_from([0, 0.001, 0.999, 1, 5, 29.999, 30, 60, 3600, 43200])

SEND = st.tuples(st.just("send"), st.sampled_from([None, 0, 5]), st.sampled_from(["g1", "g2"]))
RECEIVE = st.tuples(st.just("receive"), st.integers(1, 10), st.one_of(st.none(), TIMEOUTS), st.sampled_from([0, 0, 3]))
HANDLE = st.integers(0, 19)  # an index into the recent handles; 18 and 19 pick handles no receive issued
CHANGE = st.tuples(st.just("change"), HANDLE, TIMEOUTS)
steps = st.lists(st.one_of(
    SEND, SEND, RECEIVE, RECEIVE, CHANGE, CHANGE,
    st.tuples(st.just("change_batch"), HANDLE, TIMEOUTS),
    st.tuples(st.just("delete"), HANDLE),
    st.tuples(st.just("advance"), ADVANCES), st.tuples(st.just("advance"), ADVANCES),
    st.tuples(st.just("set_visibility"), TIMEOUTS),
    st.tuples(st.sampled_from(["purge", "peek", "attributes", "attributes"])),
), max_size=40)


class Twin:
    """The model as a target, checked by another model."""

    def __init__(self, profile_name: str) -> None:
        self.profile = PROFILES[profile_name]
        self.target = Model(self.profile)
        self.checker = Model(self.profile)
        self.ids = IdMap()
        self.now = 0.0
        self.handles: list[str] = []  # model-space handles issued so far, and a few the model never issued
        self.deleted: set[str] = set()
        attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if self.profile.fifo else {}
        self.run(CreateQueue("q", attributes))

    def run(self, op):
        response, outcome = self.target.step(self.ids.op_for_target(op), self.now)
        observed = self.ids.response_for_model(response)
        answered_at = outcome.at if outcome.at is not None else self.now  # later than now for a long poll
        in_flight_before = self.surely_in_flight(answered_at)
        verdict = self.checker.observe(op, self.now, observed, completed_at=answered_at)
        assert verdict.ok, (op, response, verdict.divergences)
        assert not verdict.outcome.notes  # the model never redelivers early itself
        self.ids.bind_fresh(verdict.outcome, response)
        if isinstance(verdict.outcome.response, ReceiveOk):
            returned = {m.message_id for m in verdict.outcome.response.messages}
            assert not returned & in_flight_before, "a message was in flight and receivable at once"
            assert not returned & self.deleted, "a deleted message came back"
            self.handles += [m.receipt_handle for m in verdict.outcome.response.messages]
            self.now = max(self.now, verdict.outcome.at or self.now)
        return response, verdict

    def surely_in_flight(self, at: float) -> set[str]:
        if "q" not in self.checker.queues:
            return set()
        return {m.id for m in self.checker.messages_in("q") if all(s.in_flight(at) for s in m.states)}

    def handle(self, index: int) -> str:
        if index >= 18 or not self.handles:
            return ["garbage", "AQEB-not-a-handle"][index % 2]
        recent = self.handles[::-1][:4]
        return recent[index % len(recent)]

    def apply(self, step) -> None:
        kind, *args = step
        p = self.profile
        if kind == "send":
            delay, group = args
            fifo = p.fifo
            self.run(SendMessage("q", f"body-{len(self.target.messages)}",
                                 delay_seconds=None if fifo or not p.has_delay else delay,
                                 group_id=group if fifo else None))
        elif kind == "receive":
            max_messages, timeout, wait = args
            kw = {}
            if p.validates_receive_params:
                kw["max_messages"] = max_messages
            if timeout is not None and "RCV-OVERRIDE" in p.rule_ids:
                kw["visibility_timeout"] = timeout
            if p.has_long_poll:
                kw["wait_time_seconds"] = wait
            self.run(ReceiveMessage("q", **kw))
        elif kind == "change":
            index, timeout = args
            self.run(ChangeMessageVisibility("q", self.handle(index), timeout))
        elif kind == "change_batch" and p.has_batches:
            index, timeout = args
            entries = (ChangeEntry("a", self.handle(index), timeout), ChangeEntry("b", self.handle(index + 1), 5))
            self.run(ChangeMessageVisibilityBatch("q", entries))
        elif kind == "delete":
            handle = self.handle(args[0])
            info = self.checker.handles.get(handle)
            response, verdict = self.run(DeleteMessage("q", handle))
            if info is not None and response == Ok():
                states = self.checker.messages[info.message_id].states
                if all(s.gone.value != "no" for s in states):
                    self.deleted.add(info.message_id)
        elif kind == "advance":
            self.now += args[0]
        elif kind == "set_visibility":
            self.run(SetQueueAttributes("q", {"VisibilityTimeout": args[0]}))
        elif kind == "purge" and p.has_purge:
            response, _ = self.run(PurgeQueue("q"))
            if response == Ok():
                self.deleted |= {m.id for m in self.checker.messages_in("q")}
        elif kind == "peek" and p.has_peek:
            self.run(PeekMessage("q", 10))
        elif kind == "attributes":
            response, _ = self.run(GetQueueAttributes("q"))
            live = sum(1 for _ in self.target.messages_in("q"))
            assert sum(int(response.attributes[name]) for name in COUNTS) == live, "attribute counts add up"

    def check_invariants(self) -> None:
        for receipt in self.checker.receipts("q", self.now):
            if receipt.ceiling is not None:
                assert receipt.deadline <= receipt.ceiling, "a deadline beyond its receive + 43200"
        for message in self.checker.messages.values():
            assert 1 <= len(message.states) <= 8, "state sets stay small"


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(profile_name: str, sequence) -> None:
    twin = Twin(profile_name)
    for step in sequence:
        twin.apply(step)
        twin.check_invariants()


@FAST
@given(steps)
def test_standard_model_conforms_to_itself(sequence):
    _run("sqs-standard", sequence)


@FAST
@given(steps)
def test_fifo_model_conforms_to_itself(sequence):
    _run("sqs-fifo", sequence)


@FAST
@given(steps)
def test_2008_model_conforms_to_itself(sequence):
    _run("sqs-2008", sequence)


@FAST
@given(steps)
def test_smq_model_conforms_to_itself(sequence):
    _run("smq", sequence)


@FAST
@given(steps, st.integers(1, 3))
def test_quota_never_breaks_the_invariants(sequence, quota):
    PROFILES_BACKUP = dict(PROFILES)
    try:
        PROFILES["sqs-standard"] = dataclasses.replace(PROFILES_BACKUP["sqs-standard"], inflight_quota=quota)
        _run("sqs-standard", sequence)
    finally:
        PROFILES.clear()
        PROFILES.update(PROFILES_BACKUP)
