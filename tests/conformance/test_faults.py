"""Soundness under faults between the suite and its target: an answer lost, refused, late or throttled never
becomes a divergence, and no queue is left behind."""

from __future__ import annotations

import pytest

from sqs_conformance.conformance.session import Session, play
from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage, GetQueueAttributes, ReceiveMessage,
    SendMessage, SetQueueAttributes, Unknown,
)
from tests.conformance.planted import DelayOutOfRangeAccepted, LostReceiveAnswer, NegativeTimeoutAccepted


def test_a_receipt_only_a_lost_answer_issued_is_never_sent():
    """The receive took effect, but its answer never came: the model knows the receipt it may have issued, the
    suite never saw it. A case that goes on through that receipt stops there, judged up to the lost answer."""
    target = LostReceiveAnswer("sqs-standard")
    session = Session(target, "sqs-standard", run_id="t", case=1, trace=None)
    case = [(0.0, CreateQueue("q", {})), (0.0, SendMessage("q", "m1")), (0.0, ReceiveMessage("q")),
            (0.0, DeleteMessage("q", "rh-1"))]
    steps = list(play(session, case))
    assert isinstance(steps[-1].response, Unknown) and "rh-1" in session.model.handles
    assert [type(s.op).__name__ for s in steps] == ["CreateQueue", "SendMessage", "ReceiveMessage"]
    assert not any(isinstance(op, DeleteMessage) for op in target.sent)
    assert not any(s.divergences for s in steps)


LOST_REFUSALS = {
    # An attribute value the model refuses, accepted: the next read shows it.
    "a change": (DelayOutOfRangeAccepted, [(0.0, CreateQueue("q", {})),
                                           (0.0, SetQueueAttributes("q", {"DelaySeconds": 901})),
                                           (0.0, GetQueueAttributes("q"))], "DELAY-HIDES"),
    # One entry of a batch the model refuses (a negative timeout), applied as 0: the next read shows the message.
    "a batch entry": (NegativeTimeoutAccepted, [
        (0.0, CreateQueue("q", {})), (0.0, SendMessage("q", "m1")), (0.0, ReceiveMessage("q")),
        (1.0, ChangeMessageVisibilityBatch("q", (ChangeEntry("e0", "rh-1", -1),))), (0.0, GetQueueAttributes("q"))],
        "VIS-RANGE"),
}


@pytest.mark.parametrize("refused", LOST_REFUSALS)
def test_what_follows_a_lost_answer_the_model_must_refuse_reports_nothing_and_decides_nothing(refused):
    """A target that accepts what the model refuses (the operation, or one entry of a batch), where that answer is
    lost: the next attribute read shows it, a consequence nobody saw happen. Nothing after the unknown step is
    reported or decided; the same read after a refusal that did come back is judged as ever."""
    from sqs_conformance.conformance.witnesses.replay import Replayed, replay_case

    planted, case, rule = LOST_REFUSALS[refused]
    lost_step = len(case) - 2
    lost = planted("sqs-standard", lose_answers_to=type(case[lost_step][1]))
    shown, steps = replay_case(lost, "sqs-standard", case, Replayed(), "t", None, 1, frozenset())
    assert isinstance(steps[lost_step].response, Unknown) and steps[-1].behind and shown == []
    assert steps[-1].verdict.divergences  # the read does diverge: it is only not reported
    shown, _ = replay_case(planted("sqs-standard"), "sqs-standard", case, Replayed(), "t", None, 1, frozenset())
    assert [d.rule for d, _ in shown] == [rule]


# --- a conforming queue behind a simulated network that loses answers -------------------------------------------

from sqs_conformance.conformance.witnesses.catalogue import load as load_witnesses, profiles_and_paces  # noqa: E402
from tests.simulated_network import LOSSES, SimulatedNetwork  # noqa: E402


def _loss_schedules(steps: int) -> list[dict[int, str]]:
    """Every way to lose one answer of a case of `steps` requests, or two, each before or after the queue acted."""
    kinds = ("drop-before", "drop-after")
    singles = [{i: kind} for i in range(steps) for kind in kinds]
    pairs = [{i: first, j: second} for i in range(steps) for j in range(i + 1, steps)
             for first in kinds for second in kinds]
    return singles + pairs


@pytest.mark.parametrize(("profile", "pace"), profiles_and_paces())
def test_no_witness_is_flagged_on_a_conforming_queue_whatever_one_or_two_answers_are_lost(profile, pace):
    """Every witness, with every single and every pair of its answers lost: the queue is the model itself behind
    a network that takes time both ways, judged as a real clock is (windows, tolerance). Whatever is lost, nothing
    may be reported: what a lost answer leaves open (a message received or not, moved to the dead-letter queue or
    not, a retry repeated or not, a first receive at any instant of its window) must stay permitted."""
    from sqs_conformance.conformance.witnesses.replay import Replayed, replay_case

    flagged = []
    for number, witness in enumerate(load_witnesses(profile, pace).witnesses):
        for schedule in _loss_schedules(len(witness.steps)):
            network = SimulatedNetwork(profile, schedule=schedule, seed=number)
            shown, _ = replay_case(network, profile, witness.steps, Replayed(), "t", None, 1, frozenset())
            flagged += [(witness.aim.rule, schedule, divergence.rule) for divergence, _ in shown]
    assert not flagged, flagged[:5]


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo", "smq", "sqs-2008"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_conforming_queue_behind_a_lossy_network_is_never_flagged(profile, seed):
    """The search (and the witnesses, where the profile has real-clock ones) through four connections that each
    take time both ways and lose 15% of answers: its sequences reach what the witnesses do not (attempt-id
    retries, locks by message id, several messages in play). Any rule reported is a false alarm."""
    from sqs_conformance.conformance.runner import RunOptions, run

    targets = [SimulatedNetwork(profile, LOSSES, seed=seed * 100 + job) for job in range(4)]
    witnessed = (profile, "real") in profiles_and_paces()
    result = run(targets, profile, RunOptions(witnesses=witnessed, search=True, examples=60, max_rounds=2,
                                              coverage_rounds=0, seed=seed))
    assert sum(t.lost for t in targets) > 50  # answers were lost, in many cases
    assert not result.findings, {rule: [(s.op, s.response) for s in f.steps] for rule, f in result.findings.items()}


# --- through a fault-injecting proxy, against moto's server ------------------------------------------------------

import boto3  # noqa: E402

from tests.fault_proxy import FAULTS, FaultProxy  # noqa: E402

FAULT_RATE = 0.05
JOBS = 8


def _witnesses_through(server, faults: tuple[str, ...], rate: float, seed: int):
    """The witnesses of sqs-standard through a proxy doing `faults`: the findings by rule, the faults done, and the
    queues of the run still on the server afterwards."""
    from sqs_conformance.adapters.endpoint import EndpointTarget
    from sqs_conformance.conformance.runner import RunOptions, run

    with FaultProxy(server.url, faults, rate=rate, seed=seed) as proxy:
        # Connections side by side, as a real-clock run makes them, so that the witnesses' waits overlap.
        targets = [EndpointTarget(endpoint_url=proxy.url, local_credentials=True) for _ in range(JOBS)]
        try:
            result = run(targets, "sqs-standard", RunOptions(witnesses=True, search=False))
        finally:
            for target in targets:
                target.close()
    client = boto3.client("sqs", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    left = [url for target in targets for url in client.list_queues(QueueNamePrefix=target.prefix).get("QueueUrls", [])]
    return result.findings, proxy.done, left


@pytest.fixture(scope="module")
def fault_free(moto_server):
    findings, _, left = _witnesses_through(moto_server, FAULTS, 0.0, 0)
    assert findings and left == []
    return set(findings)


@pytest.mark.xdist_group("faults")
@pytest.mark.parametrize("fault", FAULTS)
def test_a_run_through_faults_reports_no_rule_the_fault_free_run_does_not(moto_server, fault_free, fault):
    """Each kind of fault, on 5% of the requests: no rule is reported that the fault-free run does not report (a
    lost answer is no divergence, nor is what follows it), and every queue the run created is deleted, those
    whose CreateQueue answer was lost included. A throttled request is sent again, and a witness cut short by a
    lost answer, or left undecided by a late one, is played again, so a rule goes missing only where faults
    struck its witness every time."""
    findings, done, left = _witnesses_through(moto_server, (fault,), FAULT_RATE, seed=1)
    rules = set(findings)
    assert done[fault] > 0  # the faults did happen
    assert rules <= fault_free, f"reported only under {fault}: " + "; ".join(
        f"{rule}: {findings[rule].divergence} after {[(s.op, s.response) for s in findings[rule].steps]}"
        for rule in sorted(rules - fault_free))
    assert left == []
    assert len(fault_free - rules) <= (0 if fault in ("throttle", "slow") else 1), \
        f"lost under {fault}: {sorted(fault_free - rules)}"
