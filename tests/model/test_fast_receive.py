"""The fast path (model/fast_receive.py) changes what a receive costs, never what the model decides.

A model judging in full (`Model(fast=False)`, every receive through model/receive.py) is the reference; a model with
the fast path, with the settled index or without, is given the same operations and answers
(tests/model/differential.py). Every verdict must be the same, rule order and all where the two look at the
messages alike; then the cases the fast path takes and the ones it must leave to the full judgement.
"""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings, strategies as st

from sqs_conformance.model import Model
from sqs_conformance.model.profiles import Profile, get_profile
from sqs_conformance.model.state import EXACT, Timing
from sqs_conformance.model.values import (
    ChangeMessageVisibility, CreateQueue, ReceiveMessage, ReceivedMessage, ReceiveOk, SendMessage, Unknown,
)
from tests.model.differential import ANSWERS, KINDS, Pair, drive, rules_as_sets, steps_of

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUOTAS = st.sampled_from([None, 3])
PROFILES = st.sampled_from(["sqs-standard", "sqs-2008", "smq"])
# Polls of one queue, changes, and time brought to just before an edge: where the fast path judges, and where it
# must hand over (a message that may be due, a change whose answer was lost, the quota, a long poll on an exact clock).
STEPS = steps_of(KINDS + ["plain_receive"] * 8 + ["change"] * 2 + ["approach"] * 2 + ["send"] * 2 + ["set_wait"],
                 ANSWERS)


def _full_and_fast(timing: Timing, indexed: bool):
    def models(profile: Profile) -> tuple[Model, Model]:
        return Model(profile, timing, indexed=False, fast=False), Model(profile, timing, indexed=indexed, index_from=0)
    return models


def _same(verdict):
    return verdict


@SETTINGS
@given(STEPS, QUOTAS, PROFILES)
def test_the_fast_path_decides_as_the_full_judgement_on_an_exact_clock(steps, quota, profile):
    drive(_full_and_fast(Timing(), indexed=False), steps, quota, profile_name=profile, comparable=_same)


@SETTINGS
@given(STEPS, QUOTAS, st.sampled_from([0.0, 0.5]), st.sampled_from([0.02, 0.3]))
def test_the_fast_path_decides_as_the_full_judgement_on_a_real_clock(steps, quota, tolerance, latency):
    drive(_full_and_fast(Timing(windowed=True, tolerance=tolerance), indexed=False), steps, quota, latency,
          comparable=_same)


@SETTINGS
@given(STEPS, QUOTAS)
def test_the_fast_path_and_the_index_together_decide_as_the_full_judgement(steps, quota):
    """As a large queue's model is: indexed (here from its first message), fast. The index visits messages in another
    order (rules as sets)."""
    drive(_full_and_fast(Timing(), indexed=True), steps, quota, comparable=rules_as_sets)


def test_the_comparison_takes_the_fast_path_on_most_receives():
    """The differential tests above mean something only where the fast path judges: on a mix of the steps they draw
    (the model's answers, samples, another order, a change to 0), it takes most of the receives."""
    steps = [(("send", None, "a"), "as is"), (("receive", "q", 10, None, 0, None), "as is"),
             (("advance", 31), "as is"), (("receive", "q", 10, 5, 0, None), "some"),
             (("change", 0, 0), "as is"), (("receive", "q", 10, None, 0, None), "reversed"),
             (("send", None, "b"), "as is"), (("receive", "q", 1, None, 0, None), "as is")] * 5
    reference, other = _full_and_fast(Timing(), indexed=False)(get_profile("sqs-standard"))
    pair = Pair(reference, other, 0.0, _same)
    for step, answer in steps:
        pair.answer = answer
        pair.apply(step)
    receives = sum(1 for (kind, *_), _ in steps if kind == "receive")
    assert other.answers_judged_at_once >= receives * 3 // 4
    assert reference.answers_judged_at_once == 0


def _queue_with_one_message(profile: str = "sqs-standard", timing: Timing = EXACT) -> tuple[Model, str]:
    model = Model(profile, timing)
    fifo = model.profile.fifo
    model.step(CreateQueue("q", {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if fifo else {}), 0.0)
    sent, _ = model.step(SendMessage("q", "hello", group_id="g" if fifo else None), 0.0)
    return model, sent.message_id


def test_a_short_poll_answered_rightly_is_judged_at_once():
    model, message_id = _queue_with_one_message()
    verdict = model.observe(ReceiveMessage("q"), 1.0, ReceiveOk((ReceivedMessage(message_id, "hello", None, 1),)))
    assert verdict.ok and model.answers_judged_at_once == 1
    assert model.messages[message_id].states[0].visible_at == 31.0


def test_a_long_poll_on_a_real_clock_is_judged_at_once():
    """Its window, not the moment it answers, decides it there: an answer with the message, and an empty one on a
    queue with nothing that could come."""
    model, message_id = _queue_with_one_message(timing=Timing(windowed=True, tolerance=0.5))
    got = ReceivedMessage(message_id, "hello", None, 1)
    assert model.observe(ReceiveMessage("q", wait_time_seconds=5), 1.0, ReceiveOk((got,)), completed_at=1.1).ok
    assert model.observe(ReceiveMessage("q", wait_time_seconds=5), 2.0, ReceiveOk(()), completed_at=7.0).ok
    assert model.answers_judged_at_once == 2


def test_a_message_in_two_states_is_judged_at_once_in_each():
    """A change to 0 whose answer was lost leaves the message hidden still (until 31 s) or visible again: a short
    poll that returns it took it in the state it was visible in."""
    model, message_id = _queue_with_one_message()
    got = ReceivedMessage(message_id, "hello", None, 1)
    handle = model.observe(ReceiveMessage("q"), 1.0, ReceiveOk((got,))).outcome.response.messages[0].receipt_handle
    model.observe(ChangeMessageVisibility("q", handle, 0), 2.0, Unknown("lost"))
    assert len(model.messages[message_id].states) == 2
    again = model.observe(ReceiveMessage("q"), 3.0, ReceiveOk((dataclasses.replace(got, receive_count=2),)))
    assert again.ok and model.answers_judged_at_once == 2
    assert [s.visible_at for s in model.messages[message_id].states] == [33.0]


def test_what_the_fast_path_leaves_to_the_full_judgement():
    """A divergence to name, a long poll on an exact clock, a FIFO queue: judged in full."""
    model, message_id = _queue_with_one_message()
    got = ReceivedMessage(message_id, "hello", None, 1)
    wrong = model.observe(ReceiveMessage("q"), 1.0, ReceiveOk((dataclasses.replace(got, receive_count=2),)))
    assert [d.rule for d in wrong.divergences] == ["RCV-COUNT"]
    assert model.answers_judged_at_once == 0

    model, message_id = _queue_with_one_message()
    model.observe(ReceiveMessage("q", wait_time_seconds=5), 1.0, ReceiveOk((got,)))
    assert model.answers_judged_at_once == 0

    model, message_id = _queue_with_one_message("sqs-fifo")
    model.observe(ReceiveMessage("q"), 1.0, ReceiveOk((ReceivedMessage(message_id, "hello", None, 1),)))
    assert model.answers_judged_at_once == 0


def test_a_receive_past_the_in_flight_quota_is_judged_in_full():
    """Messages surely in flight, read together by the index, count towards the quota as those looked at do: a
    message returned once the quota is reached is INFLIGHT-QUOTA's, with the fast path as without it."""
    verdicts = []
    for fast in (True, False):
        model = Model(dataclasses.replace(get_profile("sqs-standard"), inflight_quota=2), fast=fast)
        model.step(CreateQueue("q", {}), 0.0)
        for body in ("a", "b", "c"):
            model.step(SendMessage("q", body), 0.0)
        model.step(ReceiveMessage("q", max_messages=2), 1.0)  # a and b in flight for 30 s
        last = next(m for m in model.messages.values() if m.body == "c")
        verdicts.append(model.observe(ReceiveMessage("q"), 2.0, ReceiveOk((ReceivedMessage(last.id, "c", None, 1),))))
    assert verdicts[0] == verdicts[1]
    assert [d.rule for d in verdicts[0].divergences] == ["INFLIGHT-QUOTA"]
