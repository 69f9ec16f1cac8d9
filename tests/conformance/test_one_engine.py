"""run, check, confirm and the witnesses reach the same verdict on the same steps: one `Session` plays every case,
and its early-return policy is decided before the trace line is written."""

import json

from sqs_conformance.conformance import witnesses
from sqs_conformance.conformance.check import check_traces
from sqs_conformance.conformance.cases import FoundCase
from sqs_conformance.conformance.confirm import confirm
from sqs_conformance.conformance.redelivery import IN_A_RUN
from sqs_conformance.conformance.runner import RunOptions, run
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.model.values import CreateQueue, ReceiveMessage, SendMessage
from tests.conformance.planted import EarlyDeadlines, WrongMalformedHandleCode

POLL = {"max_messages": 10, "wait_time_seconds": 1}


def early_returns(count: int) -> list:
    """A message received with a 30 s timeout, then `count` polls that a queue returning it a second early answers
    with it (each one second before the deadline the previous receive set)."""
    probed = witnesses.with_probes("sqs-standard", "virtual", witnesses.Witness(
        witnesses.Aim("RCV-HIDE", "ReceiveMessage", "ReceiveOk"),
        [(0.0, CreateQueue("q", {"VisibilityTimeout": 30})), (0.0, SendMessage("q", "m1")),
         (0.0, ReceiveMessage("q", **POLL))]))
    return probed.steps[:len(probed.steps) - 2 + count]


def verdicts_written(path) -> dict:
    """Per (case, step): the rules the run's trace line says diverged there (not a step `behind` another's
    divergence, whose line lists what it showed)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {(r["case"], r["step"]): sorted(d["rules"][0] for d in r["divergences"]) for r in lines
            if r["divergences"] and r["verdict"] == "divergence"}


def verdicts_checked(path) -> dict:
    return {(c.case, step): sorted(d.rule for s, d in c.divergences if s == step)
            for c in check_traces([path]) for step, _ in c.divergences}


def play_cases(tmp_path, cases, counted=True):
    """The cases played as one run's witnesses are, traced; the divergences each showed."""
    into = witnesses.Replayed()
    trace = TraceWriter(tmp_path / "trace.jsonl")
    shown = [witnesses.replay_case(EarlyDeadlines("sqs-standard"), "sqs-standard", case, into, "run", trace,
                                   number, frozenset(), counted)[0] for number, case in enumerate(cases, 1)]
    trace.close()
    return [[(steps[-1].index, d.rule) for d, steps in found] for found in shown], tmp_path / "trace.jsonl"


def test_two_early_returns_in_one_case_are_flagged_by_the_run_and_by_check(tmp_path):
    shown, path = play_cases(tmp_path, [early_returns(2)])
    last = len(early_returns(2)) - 1
    assert shown == [[(last, "RCV-HIDE")]]
    assert verdicts_written(path) == verdicts_checked(path) == {(1, last): ["RCV-HIDE"]}
    (case,) = check_traces([path])
    assert [step for step, _ in case.notes] == [last - 1, last]  # each early return is also counted


def test_one_early_return_is_flagged_by_neither(tmp_path):
    shown, path = play_cases(tmp_path, [early_returns(1)])
    assert shown == [[]]
    assert verdicts_written(path) == verdicts_checked(path) == {}
    (case,) = check_traces([path])
    assert len(case.notes) == 1 and not case.divergences


def test_early_returns_across_a_runs_cases_are_counted_by_check_as_by_the_run(tmp_path):
    """One early return in each of several cases of a run is not rare: the case that shows it so diverges, in the
    run and in check; cases not counted (Hypothesis' replays of a failure) add nothing, in either."""
    cases = [early_returns(1)] * IN_A_RUN
    shown, path = play_cases(tmp_path / "counted", cases)
    last = len(early_returns(1)) - 1
    assert shown == [[]] * (IN_A_RUN - 1) + [[(last, "RCV-HIDE")]]
    assert verdicts_written(path) == verdicts_checked(path) == {(IN_A_RUN, last): ["RCV-HIDE"]}

    shown, path = play_cases(tmp_path / "replays", cases, counted=False)
    assert shown == [[]] * IN_A_RUN
    assert verdicts_written(path) == verdicts_checked(path) == {}


def test_check_reaches_the_verdict_the_run_wrote_on_every_step(tmp_path):
    """A whole run (witnesses, search, Hypothesis' shrinking replays) against queues with bugs: `check` of its
    trace diverges on exactly the steps, and under exactly the rules, its trace lines say the run did."""
    for target, rule_id in ((EarlyDeadlines("sqs-standard"), "RCV-HIDE"),  # early returns, many of them replays
                            (WrongMalformedHandleCode("sqs-standard"), "HANDLE-MALFORMED")):
        out = tmp_path / rule_id
        result = run(target, "sqs-standard", RunOptions(examples=20, seed=4, out_dir=out, max_rounds=1,
                                                        coverage_rounds=0))
        assert rule_id in result.findings
        written = verdicts_written(out / "trace.jsonl")
        assert any(rule_id in rules for rules in written.values())
        assert written == verdicts_checked(out / "trace.jsonl")


def test_confirm_judges_a_found_case_knowing_what_its_run_knew(tmp_path):
    """A case whose one early return diverged because its run had shown them not rare reproduces where the case
    file says so; the same steps alone, one rare early return, do not."""
    alone, known = tmp_path / "alone.json", tmp_path / "known.json"
    alone.write_text(FoundCase("RCV-HIDE", "sqs-standard", "planted", early_returns(1)).to_json())
    known.write_text(FoundCase("RCV-HIDE", "sqs-standard", "planted", early_returns(1), ["RCV-HIDE"]).to_json())
    assert confirm(EarlyDeadlines("sqs-standard"), FoundCase.load(alone), max_waiting=60).reproduced is False
    assert confirm(EarlyDeadlines("sqs-standard"), FoundCase.load(known), max_waiting=60).reproduced is True


def test_what_follows_a_divergence_that_led_the_model_astray_reports_nothing_and_decides_nothing(tmp_path):
    """Once the model has followed a target's answer into a state no conforming queue reaches (here a FIFO message
    returned a second early, so received twice), a later divergence may be its consequence (moto's FIFO ordering
    bug later showed as a message 'missing' under another rule): the run and the witnesses do not report it, no
    later step counts as deciding a rule, and confirm says the case went another way. A divergence that can change
    no state (a wrong attribute value) leaves later steps judged as ever."""
    from sqs_conformance.conformance.witnesses import Replayed, replay_case
    from sqs_conformance.model.values import AttributesOk, DeleteMessage, DeleteMessageBatch, GetQueueAttributes
    from tests.conformance.planted import EmptyBatchAccepted, TwoBugs

    class EarlyAndAcceptsEmptyBatches(EarlyDeadlines, EmptyBatchAccepted):
        pass

    fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true", "VisibilityTimeout": 30}
    astray = [(0.0, CreateQueue("q", fifo)), (0.0, SendMessage("q", "m1", group_id="g")),
              (0.0, ReceiveMessage("q", **POLL)), (29.5, ReceiveMessage("q", max_messages=10)),
              (0.0, DeleteMessageBatch("q", ()))]
    into = Replayed()
    trace_path = tmp_path / "astray.jsonl"
    trace = TraceWriter(trace_path)
    shown, steps = replay_case(EarlyAndAcceptsEmptyBatches("sqs-fifo"), "sqs-fifo", astray, into, "t", trace, 1,
                               frozenset())
    trace.close()
    assert [d.rule for d, _ in shown] == ["RCV-HIDE"] and steps[3].leads_astray
    assert steps[4].behind and [d.rule for d in steps[4].divergences] == ["BATCH-EMPTY"]  # judged, not reported
    tally = into.tallies.rules["BATCH-EMPTY"]
    assert (tally.exercised, tally.decisive, tally.diverging, tally.conforming) == (1, 0, 0, 0)
    # The trace says so, and `check` reaches the run's verdict on every step: the early return, not the batch.
    lines = [json.loads(line) for line in trace_path.read_text().splitlines()]
    assert [r["verdict"] for r in lines][3:] == ["divergence", "behind"]
    (checked,) = check_traces([trace_path])
    assert [(index, d.rule) for index, d in checked.divergences] == [(3, "RCV-HIDE")]

    behind = tmp_path / "behind.json"
    behind.write_text(FoundCase("BATCH-EMPTY", "sqs-fifo", "planted", astray).to_json())
    confirmation = confirm(EarlyAndAcceptsEmptyBatches("sqs-fifo"), FoundCase.load(behind), max_waiting=60)
    assert confirmation.reproduced is False and "went another way at step 4" in confirmation.detail

    # A refusal with the wrong code may hide a change made anyway (moto applies a batch's first entries, then
    # refuses it): it taints what follows too. A wrong attribute value changes nothing: it does not.
    wrong_code = [(0.0, CreateQueue("q", {})), (0.0, DeleteMessage("q", "not-a-receipt-handle")),
                  (0.0, DeleteMessageBatch("q", ()))]
    shown, steps = replay_case(TwoBugs("sqs-standard"), "sqs-standard", wrong_code, Replayed(), "t", None, 2,
                               frozenset())
    assert [d.rule for d, _ in shown] == ["HANDLE-MALFORMED"] and steps[2].behind

    class WrongDefaultAndAcceptsEmptyBatches(EmptyBatchAccepted):
        def execute(self, op):
            response = super().execute(op)
            if isinstance(op, GetQueueAttributes):
                return AttributesOk({**response.attributes, "VisibilityTimeout": "31"})
            return response

    wrong_value = [(0.0, CreateQueue("q", {})), (0.0, GetQueueAttributes("q")), (0.0, DeleteMessageBatch("q", ()))]
    shown, steps = replay_case(WrongDefaultAndAcceptsEmptyBatches("sqs-standard"), "sqs-standard", wrong_value,
                               Replayed(), "t", None, 3, frozenset())
    assert [d.rule for d, _ in shown] == ["VIS-DEFAULT", "BATCH-EMPTY"] and not steps[2].behind
