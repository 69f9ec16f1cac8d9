"""Two models given the same operations and answers must decide alike: the model's own answers, and answers a queue
could give wrongly or rightly (a sample of the messages, another order, a wrong count or body, a message still in
flight or held back behind its FIFO group, no answer at all, a message past where a FIFO group's walk reaches), on
exact and windowed clocks, with redrive policies, queue delays and waits set and changed, an in-flight quota a few
receives reach, time stepping to just before a deadline and going back now and then; on a standard queue and on a
FIFO queue (a few groups, a queue delay, retried attempt ids); an operation or parameter the profile lacks is
refused by both. Every verdict, every attribute read's bounds, every outcome, every message's states and every
handle must be the same. What is compared: the index against a full look (test_settled_index.py), the fast path
against the full judgement (test_fast_receive.py).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

import pytest
from hypothesis import strategies as st

from sqs_conformance.model import Model
from sqs_conformance.model.attributes import COUNTS
from sqs_conformance.model.outcomes import Verdict
from sqs_conformance.model.profiles import Profile, get_profile
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.values import (
    AttributesOk, ChangeMessageVisibility, CreateQueue, DeleteMessage, GetQueueAttributes, PurgeQueue, ReceiveMessage,
    ReceivedMessage, ReceiveOk, Response, SendMessage, SendOk, SetQueueAttributes, Unknown,
)

QUEUES = st.sampled_from(["q", "q", "q", "dlq"])
TIMEOUTS = st.sampled_from([0, 1, 5, 30, 60, 43200, 43201])
ANSWERS = ["as is"] * 6 + ["untimed", "some", "reversed", "miscounted", "none", "late", "unknown", "in flight too",
                          "held back too", "altered"]
OPERATIONS = {
    # A delay (standard queues) and a group (FIFO queues).
    "send": st.tuples(st.just("send"), st.sampled_from([None, 0, 3]), st.sampled_from(["a", "a", "b", "c"])),
    # And an attempt id (FIFO queues).
    # Its wait: none (the queue's), none at all, or a long poll's.
    "receive": st.tuples(st.just("receive"), QUEUES, st.integers(1, 10), st.sampled_from([None, 0, 2, 30]),
                         st.sampled_from([None, 0, 2]), st.sampled_from([None, None, "try-1"])),
    # A poll of "q" with no attempt id (what the fast path judges).
    "plain_receive": st.tuples(st.just("receive"), st.just("q"), st.integers(1, 10), st.sampled_from([None, 0, 2, 30]),
                               st.sampled_from([None, 0, 0, 2]), st.just(None)),
    "change": st.tuples(st.just("change"), st.integers(0, 5), TIMEOUTS),
    "delete": st.tuples(st.just("delete"), st.integers(0, 5)),
    "advance": st.tuples(st.just("advance"), st.sampled_from([0.001, 0.5, 1, 2, 29.999, 30, 31, 3600])),
    "rewind": st.tuples(st.just("rewind"), st.sampled_from([0.5, 5])),
    # To just before the next deadline or release, where it may already be due (within the tolerance, or within
    # the operation's window) or not yet: where the index must hand a hidden message back to be looked at.
    "approach": st.tuples(st.just("approach"), st.sampled_from([0.0, 0.001, 0.5, 1.0])),
    "redrive": st.tuples(st.just("redrive"), st.integers(1, 3)),
    "set_visibility": st.tuples(st.just("set_visibility"), TIMEOUTS),
    "set_delay": st.tuples(st.just("set_delay"), st.sampled_from([0, 3])),
    "set_wait": st.tuples(st.just("set_wait"), st.sampled_from([0, 2])),
    "attributes": st.tuples(st.just("attributes"), QUEUES),
    "purge": st.tuples(st.just("purge")),
}
# Receives are what the index serves: a third of the steps.
KINDS = ["receive"] * 5 + ["send"] * 3 + ["advance"] * 2 + ["change", "delete", "rewind", "redrive", "set_visibility",
                                                             "set_delay", "set_wait", "attributes", "purge",
                                                             "approach"]


def steps_of(kinds: list[str], answers: list[str]):
    operation = st.sampled_from(kinds).flatmap(OPERATIONS.__getitem__)
    return st.lists(st.tuples(operation, st.sampled_from(answers)), min_size=15, max_size=60)


STEPS = steps_of(KINDS, ANSWERS)
# A FIFO group holds messages behind the first one hidden (where the walk stops) once sends follow receives: more of
# them, and more answers with a message held back.
FIFO_STEPS = steps_of(KINDS + ["send"] * 4, ANSWERS + ["held back too"] * 4 + ["out of reach too"] * 2)


class Pair:
    """Two models judging the same answers: `reference`, the way of deciding held as right, and `other`; each
    verdict is compared as `comparable` makes it."""

    def __init__(self, reference: Model, other: Model, latency: float,
                 comparable: Callable[[Verdict], object]) -> None:
        profile, timing = reference.profile, reference.timing
        self.timing = timing
        self.reference, self.other, self.comparable = reference, other, comparable
        self.latency = latency if timing.windowed else 0.0
        self.now = 0.0
        self.answer = "as is"
        self.handles: list[str] = []
        self.fifo = profile.fifo
        for name in ("dlq", "q"):
            self.run(CreateQueue(name, {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if self.fifo else {}))

    def run(self, op) -> None:
        try:
            observed, answered_at = self._answer_to(op)
        except ModelUsageError:  # the profile has no such operation or parameter: both must say so
            for model in (self.reference, self.other):
                with pytest.raises(ModelUsageError):
                    model.observe(op, self.now, Unknown("not sent"))
            return
        completed_at = self.now + self.latency if self.latency else answered_at
        if isinstance(op, GetQueueAttributes):  # the bounds themselves, not only whether an answer falls in them
            bounds = [model.expect(op, self.now, completed_at).bounds() for model in (self.reference, self.other)]
            assert bounds[0] == bounds[1], op
        verdicts = [model.observe(op, self.now, observed, completed_at) for model in (self.reference, self.other)]
        assert self.comparable(verdicts[0]) == self.comparable(verdicts[1]), op
        assert _states(self.reference) == _states(self.other), op
        assert self.reference.handles == self.other.handles, op
        for model in (self.reference, self.other):  # what a walk of a queue with no index reads (Model.in_motion)
            assert _members(model) == _live_members(model), op
            assert _said_in_send_order(model) <= _in_send_order(model), op  # the walk skips sorting those
        response = verdicts[0].outcome.response
        if isinstance(response, ReceiveOk):
            self.handles += [m.receipt_handle for m in response.messages if m.receipt_handle]

    def _answer_to(self, op) -> tuple[Response, float | None]:
        """What a queue answers, and when: the model's own answer (from a copy), or one changed as `self.answer`
        says ("late": at the end of a long poll's wait; "untimed": when is not told)."""
        scout = copy.deepcopy(self.reference)
        expectation = scout.expect(op, self.now)
        outcome = expectation.canonical()
        answered_at = None if self.answer == "untimed" else outcome.at
        if self.answer == "late" and isinstance(op, ReceiveMessage) and op.wait_time_seconds:
            answered_at = self.now + op.wait_time_seconds
        return self._changed(outcome.response, op, expectation), answered_at

    def _changed(self, own, op, expectation):
        if self.answer == "unknown":
            return Unknown("dropped")
        if isinstance(own, SendOk):
            return SendOk(None)  # an id the checker has not seen
        if isinstance(own, ReceiveOk):
            fresh = [dataclasses.replace(m, receipt_handle=None) for m in own.messages]
            if self.answer == "some":
                fresh = fresh[1::2]
            elif self.answer == "reversed":
                fresh.reverse()
            elif self.answer == "miscounted":
                fresh = [dataclasses.replace(m, receive_count=(m.receive_count or 0) + 1) for m in fresh]
            elif self.answer == "none":
                fresh = []
            elif self.answer == "in flight too":  # and a message still in flight, wrongly
                flying = [r.message_id for r in self.reference.receipts(op.queue, self.now)]
                message = self.reference.messages[flying[0]] if flying else None
                fresh += [ReceivedMessage(message.id, message.body, None)] if message else []
            elif self.answer == "held back too":  # and the last message a FIFO group holds back, wrongly
                held = [c.message for c in expectation.candidates.values() if c.blocked and not c.receivable][-1:]
                fresh += [ReceivedMessage(m.id, m.body, None) for m in held]
            elif self.answer == "out of reach too":  # and the last message past a FIFO group's reach, wrongly
                beyond = [c.message for c in expectation.candidates.values() if c.beyond and not c.receivable][-1:]
                fresh += [ReceivedMessage(m.id, m.body, None) for m in beyond]
            elif self.answer == "altered":  # a body not the one sent
                fresh = [dataclasses.replace(m, body=m.body + "!") for m in fresh[:1]] + fresh[1:]
            elif self.answer == "late":  # and without the first receive's time, which would differ
                fresh = [dataclasses.replace(m, first_receive_ms=None) for m in fresh]
            return ReceiveOk(tuple(fresh))
        if isinstance(own, AttributesOk) and self.answer in ("miscounted", "none"):
            shown = dict(own.attributes)
            shown[COUNTS[0]] = str(int(shown[COUNTS[0]]) + (1 if self.answer == "miscounted" else -1))
            return AttributesOk(shown)
        return own

    def handle(self, index: int) -> str:
        return self.handles[-1 - index % len(self.handles)] if self.handles else "garbage"

    def apply(self, step) -> None:
        kind, *args = step
        if kind == "send":
            delay, group = args
            body = f"body-{len(self.reference.messages)}"
            self.run(SendMessage("q", body, group_id=group) if self.fifo else SendMessage("q", body, delay))
        elif kind == "receive":
            queue, max_messages, timeout, wait, attempt = args
            self.run(ReceiveMessage(queue, max_messages=max_messages, visibility_timeout=timeout,
                                    wait_time_seconds=wait, attempt_id=attempt if self.fifo else None))
        elif kind == "change":
            self.run(ChangeMessageVisibility("q", self.handle(args[0]), args[1]))
        elif kind == "delete":
            self.run(DeleteMessage("q", self.handle(args[0])))
        elif kind == "advance":
            self.now += args[0]
        elif kind == "approach":  # a fraction of the window (and the tolerance) before the next edge
            edges = self.reference.edges("q", self.now)
            if edges:
                self.now = max(self.now, edges[0] - args[0] * (self.latency + self.timing.tolerance) - 1e-6)
        elif kind == "rewind":
            self.now = max(0.0, self.now - args[0])
        elif kind == "redrive":
            self.run(SetQueueAttributes("q", {"RedrivePolicy": {"deadLetterTargetQueue": "dlq",
                                                                 "maxReceiveCount": args[0]}}))
        elif kind == "set_visibility":
            self.run(SetQueueAttributes("q", {"VisibilityTimeout": args[0]}))
        elif kind == "set_delay":
            self.run(SetQueueAttributes("q", {"DelaySeconds": args[0]}))
        elif kind == "set_wait":
            self.run(SetQueueAttributes("q", {"ReceiveMessageWaitTimeSeconds": args[0]}))
        elif kind == "attributes":
            self.run(GetQueueAttributes(args[0]))
        elif kind == "purge":
            self.run(PurgeQueue("q"))


def rules_as_sets(verdict: Verdict) -> object:
    """A verdict with its exercised rules as a set: their order follows how the messages were visited."""
    outcome = verdict.outcome
    return dataclasses.replace(verdict, outcome=dataclasses.replace(
        outcome, rules=tuple(sorted(outcome.rules)), undecided=tuple(sorted(outcome.undecided))))


def _states(model: Model) -> dict:
    return {message_id: message.states for message_id, message in model.messages.items()}


def _members(model: Model) -> dict[str, set[str]]:
    """Each queue's messages as it keeps them."""
    return {name: set(queue.message_ids) for name, queue in model.queues.items()}


def _said_in_send_order(model: Model) -> set[str]:
    return {name for name, queue in model.queues.items() if queue.joined_in_send_order}


def _in_send_order(model: Model) -> set[str]:
    """The queues whose messages are kept in send order."""
    return {name for name, queue in model.queues.items()
            if [model.messages[i].seq for i in queue.message_ids] == sorted(model.messages[i].seq
                                                                            for i in queue.message_ids)}


def _live_members(model: Model) -> dict[str, set[str]]:
    """Each queue's messages that may be live there, from their states."""
    return {name: {message_id for message_id, message in model.messages.items()
                   if any(s.live_in(name) for s in message.states)} for name in model.queues}


def drive(models: Callable[[Profile], tuple[Model, Model]], steps, quota: int | None, latency: float = 0.0,
          profile_name: str = "sqs-standard", comparable: Callable[[Verdict], object] = rules_as_sets) -> None:
    """Both `models` (made for the profile, with its in-flight quota or one a handful of receives reach) given
    `steps`."""
    profile = get_profile(profile_name)
    reference, other = models(profile if quota is None else dataclasses.replace(profile, inflight_quota=quota))
    pair = Pair(reference, other, latency, comparable)
    for step, answer in steps:
        pair.answer = answer
        pair.apply(step)
