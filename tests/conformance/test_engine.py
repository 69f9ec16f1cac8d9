"""The engine: the model as a target conforms; planted bugs are found, shrunk, and all reported."""

import sys
from types import SimpleNamespace

import pytest

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance import runner
from sqs_conformance.conformance.runner import RunOptions, run
from tests.conformance.planted import TwoBugs, WrongMalformedHandleCode


@pytest.mark.parametrize("profile, examples", [("sqs-standard", 200), ("sqs-fifo", 400)])
def test_the_model_conforms_to_itself_and_every_reachable_rule_is_exercised(profile, examples):
    result = run(ModelTarget(profile), profile, RunOptions(examples=examples, seed=3, steps_per_case=40))
    assert result.conforms, {r: f.divergence for r, f in result.findings.items()}
    assert result.gaps() == []


@pytest.mark.parametrize("profile", ["sqs-2008", "smq"])
def test_older_profiles_conform_to_themselves(profile):
    result = run(ModelTarget(profile), profile, RunOptions(examples=60, seed=3))
    assert result.conforms, {r: f.divergence for r, f in result.findings.items()}


def test_a_planted_bug_is_found_with_a_short_minimal_case():
    result = run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", RunOptions(examples=50, seed=5, max_rounds=1,
                                                                                      coverage_rounds=0))
    assert "HANDLE-MALFORMED" in result.findings
    finding = result.findings["HANDLE-MALFORMED"]
    assert len(finding.steps) <= 3  # create the queue, send the garbage handle
    assert finding.steps[-1].verdict.divergences  # the case ends where it diverges


def test_every_distinct_divergence_is_reported_not_just_the_first():
    result = run(TwoBugs("sqs-standard"), "sqs-standard", RunOptions(examples=50, seed=5, max_rounds=3,
                                                                     coverage_rounds=0))
    assert set(result.findings) == {"BATCH-EMPTY", "HANDLE-MALFORMED"}
    assert not result.conforms


class TracedRequests(TwoBugs):
    """Counts the requests made while a tracer other than the test's own was set."""

    def __init__(self, profile: str) -> None:
        super().__init__(profile)
        self.tracer = sys.gettrace()  # None, unless the tests run under coverage or a debugger
        self.requests = self.traced = 0

    def execute(self, op):
        self.requests += 1
        self.traced += sys.gettrace() is not self.tracer
        return super().execute(op)


def test_no_request_of_a_search_runs_traced_once_a_round_has_failed():
    # Hypothesis' explain phase would trace every case after the first failure, its shrinking included.
    target = TracedRequests("sqs-standard")
    result = run(target, "sqs-standard", RunOptions(examples=50, seed=5, max_rounds=1, coverage_rounds=0,
                                                    witnesses=False))
    assert {"BATCH-EMPTY", "HANDLE-MALFORMED"} <= set(result.findings)  # it failed, then shrank its failures
    assert target.requests and target.traced == 0


def test_the_same_seed_gives_the_same_run():
    first = run(TwoBugs("sqs-standard"), "sqs-standard", RunOptions(examples=30, seed=11, max_rounds=2,
                                                                    coverage_rounds=0))
    second = run(TwoBugs("sqs-standard"), "sqs-standard", RunOptions(examples=30, seed=11, max_rounds=2,
                                                                     coverage_rounds=0))
    assert first.steps == second.steps and set(first.findings) == set(second.findings)
    for rule_id in first.findings:
        assert [s.op for s in first.findings[rule_id].steps] == [s.op for s in second.findings[rule_id].steps]


def test_concurrent_jobs_share_findings_and_keep_their_cases_apart(tmp_path):
    import json

    result = run([TwoBugs("sqs-standard") for _ in range(3)], "sqs-standard", RunOptions(examples=30, seed=5,
                                                                                         max_rounds=3,
                                                                                         coverage_rounds=0,
                                                                                         out_dir=tmp_path))
    assert set(result.findings) == {"BATCH-EMPTY", "HANDLE-MALFORMED"}
    records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert len(records) == result.steps
    steps_of_case: dict[int, list[int]] = {}
    for r in records:
        steps_of_case.setdefault(r["case"], []).append(r["step"])
    # one case number per case across the jobs (a case rejected before its first step leaves no line)
    assert len(steps_of_case) <= result.cases
    assert all(steps == list(range(len(steps))) for steps in steps_of_case.values())
    assert result.errors == []  # no job's replay was disturbed by another's findings



def test_shrinking_is_capped_for_the_clock_and_restored_after():
    from hypothesis.internal.conjecture import engine

    from sqs_conformance.adapters.base import VirtualClock
    from sqs_conformance.adapters.model_target import ModelTarget
    from sqs_conformance.conformance.runner import REAL_CLOCK_SHRINK_SECONDS, VIRTUAL_CLOCK_SHRINK_SECONDS, run

    class ShiftedModel(ModelTarget):
        """The model, its clock labelled as a moved one, noting the shrinking cap in force at each step."""

        seen: set = set()

        def reset(self):
            super().reset()
            self.clock = type("Shifted", (VirtualClock,), {"kind": "shifted"})()

        def execute(self, op):
            self.seen.add(engine.MAX_SHRINKING_SECONDS)
            return super().execute(op)

    before = engine.MAX_SHRINKING_SECONDS
    target = ShiftedModel("sqs-standard")
    target.reset()
    run(target, "sqs-standard", RunOptions(examples=2, seed=1, steps_per_case=5, coverage_rounds=0))
    assert target.seen == {REAL_CLOCK_SHRINK_SECONDS}
    assert engine.MAX_SHRINKING_SECONDS == before

    class VirtualModel(ModelTarget):
        seen: set = set()

        def execute(self, op):
            self.seen.add(engine.MAX_SHRINKING_SECONDS)
            return super().execute(op)

    virtual = VirtualModel("sqs-standard")
    run(virtual, "sqs-standard", RunOptions(examples=2, seed=1, steps_per_case=5, coverage_rounds=0))
    assert virtual.seen == {VIRTUAL_CLOCK_SHRINK_SECONDS} and VIRTUAL_CLOCK_SHRINK_SECONDS < before
    assert engine.MAX_SHRINKING_SECONDS == before


def test_a_run_collects_cycles_less_often_and_leaves_the_collector_as_it_found_it():
    import gc

    from sqs_conformance.conformance.collector import COLLECTION_THRESHOLD, fewer_collections

    class NotingModel(ModelTarget):
        """The model, noting the collector's thresholds in force at each step; it fails if asked to."""

        seen: set = set()
        fail = False

        def execute(self, op):
            self.seen.add(gc.get_threshold())
            if self.fail:
                raise RuntimeError("the target broke")
            return super().execute(op)

    before = gc.get_threshold()
    gc.set_threshold(900, 11, 12)  # not the default: every generation's value must come back
    try:
        target = NotingModel("sqs-standard")
        run(target, "sqs-standard", RunOptions(examples=2, seed=1, steps_per_case=5, coverage_rounds=0))
        assert target.seen == {(COLLECTION_THRESHOLD, 11, 12)}
        assert gc.get_threshold() == (900, 11, 12)

        target.fail = True
        with pytest.raises(RuntimeError):
            run(target, "sqs-standard", RunOptions(examples=2, seed=1, steps_per_case=5, coverage_rounds=0))
        assert gc.get_threshold() == (900, 11, 12)

        # Runs overlapping in threads: the first to end leaves it raised for the other, the last sets it back.
        first, second = fewer_collections(), fewer_collections()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        assert gc.get_threshold()[0] == COLLECTION_THRESHOLD
        second.__exit__(None, None, None)
        assert gc.get_threshold() == (900, 11, 12)

        # A history's check alone: no automatic collection through it; inside a run, the run's threshold holds
        with fewer_collections(none=True):
            assert gc.get_threshold() == (0, 11, 12)
            made = [[] for _ in range(100)]  # what a check keeps
        assert gc.get_threshold() == (900, 11, 12)
        # ... and is left where no young collection walks it: the oldest generation
        assert not any(o is made for o in gc.get_objects(generation=0))
        assert any(o is made for o in gc.get_objects(generation=2))
        with fewer_collections(), fewer_collections(none=True):
            assert gc.get_threshold() == (COLLECTION_THRESHOLD, 11, 12)
        assert gc.get_threshold() == (900, 11, 12)

        gc.set_threshold(0, 11, 12)  # automatic collection off: a run does not turn it on
        target.fail = False
        target.seen = set()
        run(target, "sqs-standard", RunOptions(examples=2, seed=1, steps_per_case=5, coverage_rounds=0))
        assert target.seen == {(0, 11, 12)}
    finally:
        gc.set_threshold(*before)


def test_a_search_budget_keeps_searching_past_coverage_and_then_stops(monkeypatch):
    """Without a budget the search stops once a round finds nothing new and every rule is decided; with one it goes
    on with fresh rounds until the budget is spent (a round under way is finished). The run's clock is the test's,
    on which each round lasts a second: the verdict does not hang on how busy the machine is."""
    settled = run(ModelTarget("sqs-standard"), "sqs-standard", RunOptions(examples=5, seed=3, witnesses=True,
                                                                          coverage_rounds=0))
    assert settled.rounds == 1

    now = [0.0]
    one_round = runner._one_round

    def a_second_long(*args, **kwargs):
        now[0] += 1.0
        return one_round(*args, **kwargs)

    monkeypatch.setattr(runner, "_one_round", a_second_long)
    monkeypatch.setattr(runner, "time", SimpleNamespace(monotonic=lambda: now[0]))
    budgeted = run(ModelTarget("sqs-standard"), "sqs-standard", RunOptions(examples=5, seed=3, witnesses=True,
                                                                           coverage_rounds=0, budget=3.0))
    # A quarter of the budget is left to trimming the findings: rounds start at 0, 1 and 2 s, before 2.25 s.
    assert budgeted.rounds == 3 and budgeted.conforms


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
def test_the_model_judged_as_a_real_target_conforms_to_itself(profile):
    """Each request a 20 ms window and the checker's 0.5 s tolerance, as real targets are judged: the model taking
    effect inside its windows must never be flagged (a false alarm of the real-clock judgement otherwise)."""
    from sqs_conformance.conformance.witnesses import JudgedModel

    result = run(JudgedModel(profile), profile, RunOptions(examples=150, seed=11, witnesses=False, coverage_rounds=0,
                                                           max_rounds=2))
    assert result.conforms, {r: f.divergence for r, f in result.findings.items()}


def test_the_one_private_hypothesis_hook_caps_shrinking_and_restores_it():
    """Hypothesis has no setting for how long it shrinks; the runner sets its engine's constant for a run, in one
    place, and puts it back. Should a release drop the constant, the cap is skipped rather than crashing."""
    from hypothesis.internal.conjecture import engine

    from sqs_conformance.conformance.hypothesis_hooks import is_final_replay, shrinking_at_most

    before = engine.MAX_SHRINKING_SECONDS
    with shrinking_at_most(7.5):
        assert engine.MAX_SHRINKING_SECONDS == 7.5
    assert engine.MAX_SHRINKING_SECONDS == before
    with shrinking_at_most(None):
        assert engine.MAX_SHRINKING_SECONDS == before
    assert is_final_replay() is False  # outside Hypothesis



def test_quick_draws_make_the_choices_data_draw_makes_and_fall_back_without_the_private_attribute():
    """Another private hook: a rule's draws skip `data.draw`'s bookkeeping. The same seed must give the same
    values (the same search, the same shrinking); should a release drop the attribute, `data.draw` is used,
    labels and all."""
    from hypothesis import Phase, given, seed, settings, strategies as st

    from sqs_conformance.conformance.hypothesis_hooks import QuickDraws

    strategies = [st.integers(0, 9), st.booleans(), st.sampled_from(["a", "b", "c"]), st.floats(0, 1)]

    def drawn(draws_of) -> list:
        values = []

        @seed(7)
        @settings(max_examples=20, database=None, phases=[Phase.generate], deadline=None)
        @given(st.data())
        def record(data):
            draws = draws_of(data)
            values.append([draws.draw(s, label="x") for s in strategies])

        record()
        return values

    plain = drawn(lambda data: data)
    assert drawn(QuickDraws) == plain and len({repr(v) for v in plain}) > 1

    labels = []

    class OlderData:
        def draw(self, strategy, label=None):
            labels.append(label)
            return 3

    assert QuickDraws(OlderData()).draw(st.integers(), label="n") == 3 and labels == ["n"]


def test_a_machine_draws_quickly_but_on_the_replay_hypothesis_prints():
    """Hypothesis labels each draw of `data.draw` in the example it prints, its final replay of a failing case:
    there the rule gets `data` itself."""
    from sqs_conformance.conformance.hypothesis_hooks import QuickDraws
    from sqs_conformance.conformance.machine import drawing

    given_to_rule = []

    @drawing
    def rule_body(machine, data):
        given_to_rule.append(data)

    data = object()
    for final in (False, True):
        rule_body(SimpleNamespace(session=SimpleNamespace(final=final)), data)
    assert isinstance(given_to_rule[0], QuickDraws) and given_to_rule[0].data is data and given_to_rule[1] is data

def test_a_search_finding_keeps_no_step_and_no_wait_it_does_not_need():
    """Hypothesis shrinks on a budget, by whole machine steps: on a virtual clock each finding is then replayed
    without each step and each wait, so a malformed handle's case is a queue and the one call, with no sleep."""
    from sqs_conformance.conformance.minimal import MinimalCases
    from sqs_conformance.conformance.runner import Finding, RunResult, _trim_search_findings
    from sqs_conformance.conformance.session import Session
    from sqs_conformance.model.values import CreateQueue, DeleteMessage, SendMessage

    target = WrongMalformedHandleCode("sqs-standard")
    session = Session(target, "sqs-standard", run_id="t", case=1, trace=None)
    for wait, op in ((0.0, CreateQueue("q", {})), (3600.0, SendMessage("q", "m1")),
                     (5.0, DeleteMessage("q", "not-a-receipt-handle"))):
        session.advance(wait)
        step = session.execute(op)
    found = RunResult("t", target.name, "x", "sqs-standard")
    found.findings["HANDLE-MALFORMED"] = Finding("HANDLE-MALFORMED", step.divergences[0], session.steps, [])
    _trim_search_findings(found, target, "t", None, iter(range(2, 99)), MinimalCases())
    steps = found.findings["HANDLE-MALFORMED"].steps
    assert [(s.advanced, type(s.op).__name__) for s in steps] == [(0.0, "CreateQueue"), (0.0, "DeleteMessage")]
    assert found.findings["HANDLE-MALFORMED"].divergence.rule == "HANDLE-MALFORMED"



def test_trimming_stops_at_its_deadline_with_the_simplest_case_shown_so_far():
    """Trimming replays a case many times; past its deadline it tries nothing more and keeps what it has."""
    import time

    from sqs_conformance.conformance.session import Session
    from sqs_conformance.conformance.witnesses.replay import Replayed, replay_case
    from sqs_conformance.conformance.witnesses.trimming import fewest_steps
    from sqs_conformance.model.values import CreateQueue, DeleteMessage, SendMessage

    target = WrongMalformedHandleCode("sqs-standard")
    session = Session(target, "sqs-standard", run_id="t", case=1, trace=None)
    needed = [SendMessage("q", f"needed-{i}") for i in range(4)]  # as if the divergence needed these
    for op in [CreateQueue("q", {})] + [SendMessage("q", f"m{i}") for i in range(8)] + needed + [
            DeleteMessage("q", "not-a-receipt-handle")]:
        session.execute(op)
    replays = []

    def shows(case):
        replays.append(case)
        if not all(op in [op for _, op in case] for op in needed):
            return None
        shown, _ = replay_case(target, "sqs-standard", case, Replayed(), "t", None, len(replays) + 1, frozenset())
        return next((steps for d, steps in shown if d.rule == "HANDLE-MALFORMED"), None)

    assert fewest_steps(session.steps, shows, deadline=time.monotonic()) == session.steps
    assert replays == []  # nothing is tried once the deadline has passed
    trimmed = fewest_steps(session.steps, shows)
    assert [s.op for s in trimmed[1:-1]] == needed
    # Each kept simplification goes on from where it is: one pass over the steps, then one that keeps nothing
    # (restarting the pass after each would try the needed steps again after every step left out: 50 replays).
    assert len(replays) <= 2 * len(session.steps) + 2

def test_the_trace_marks_hypothesis_final_replay_of_a_failing_case(tmp_path):
    """The private hook that tells the final replay (the minimal case Hypothesis reports) still works: a run that
    shrinks a failure marks exactly the lines of its last replay `final`, and that replay shows the divergence."""
    import json

    run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", RunOptions(examples=30, seed=5, max_rounds=1,
                                                                             coverage_rounds=0, witnesses=False,
                                                                             out_dir=tmp_path))
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    final_cases = {r["case"] for r in lines if r["final"]}
    assert len(final_cases) == 1
    final = [r for r in lines if r["case"] in final_cases]
    assert all(r["final"] for r in final) and any(d["rules"][0] == "HANDLE-MALFORMED"
                                                  for r in final for d in r["divergences"])


def test_a_trimmed_case_sends_only_handles_an_earlier_kept_step_issued_or_plain_garbage():
    """Left without the receive that issued a handle, a case must not send the model's own name for it
    ('rh-1', 'left-out-rh-1'), which a target could never have issued: it sends a handle garbage to every queue."""
    from sqs_conformance.adapters.model_target import ModelTarget
    from sqs_conformance.conformance.translate import GARBAGE_HANDLES
    from sqs_conformance.conformance.session import Session, play
    from sqs_conformance.conformance.translate import handles_named
    from sqs_conformance.conformance.witnesses.trimming import without_step
    from sqs_conformance.model.values import (
        ChangeMessageVisibility, CreateQueue, DeleteMessage, ReceiveMessage, SendMessage,
    )

    session = Session(ModelTarget("sqs-standard"), "sqs-standard", run_id="t", case=1, trace=None)
    for op in (CreateQueue("q", {}), SendMessage("q", "m1"), SendMessage("q", "m2"), ReceiveMessage("q"),
               ReceiveMessage("q"), ChangeMessageVisibility("q", "rh-2", 60), DeleteMessage("q", "rh-1")):
        session.execute(op)
    sent_as_garbage = 0
    for index in range(1, len(session.steps)):
        replayed = Session(ModelTarget("sqs-standard"), "sqs-standard", run_id="t", case=2, trace=None)
        for step in play(replayed, without_step(session.steps, index)):
            named = handles_named(step.op)
            assert all(replayed.ids.issued(h) or h in GARBAGE_HANDLES for h in named), (index, step.op)
            sent_as_garbage += sum(h in GARBAGE_HANDLES for h in named)
    assert sent_as_garbage >= 3  # without either send or either receive, a handle it names was never issued


def test_pick_draws_what_sampled_from_draws_and_keeps_each_values_type():
    from hypothesis import given, seed, settings, strategies as st

    from sqs_conformance.conformance.machine import pick

    drawn: list[tuple] = []

    @seed(16)
    @settings(max_examples=30, database=None)
    @given(st.data())
    def both_ways(data):
        # the same choice sequence read twice: once through `pick`, once through a plain sampled_from
        ints = pick(data, [1, 2, 3], "ints")
        floats = pick(data, [1.0, 2.0, 3.0], "floats")  # equal to the ints as dict keys: must not share a strategy
        flags = pick(data, (True, False), "flags")
        assert pick(data, [[1], [1]], "lists") == [1]  # values that cannot be keys are drawn all the same
        drawn.append((ints, floats, flags))

    both_ways()
    assert {type(i) for i, _, _ in drawn} == {int}
    assert {type(f) for _, f, _ in drawn} == {float}
    assert {type(b) for _, _, b in drawn} == {bool}
    assert len({i for i, _, _ in drawn}) > 1  # it does choose

    plain: list[tuple] = []

    @seed(16)
    @settings(max_examples=30, database=None)
    @given(st.data())
    def sampled(data):
        plain.append((data.draw(st.sampled_from([1, 2, 3]), label="ints"),
                      data.draw(st.sampled_from([1.0, 2.0, 3.0]), label="floats"),
                      data.draw(st.sampled_from((True, False)), label="flags")))
        data.draw(st.sampled_from([[1], [1]]), label="lists")

    sampled()
    assert drawn == plain  # the same search: a seeded run finds what it found before


def test_a_machine_offers_only_the_rules_its_profile_can_run_and_a_left_out_rule_still_refuses():
    """Hypothesis draws every rule of a machine at each step; one its profile can never run would be drawn only to
    be refused. Each profile's machine leaves those out, and keeps every other."""
    from hypothesis.stateful import RULE_MARKER

    from sqs_conformance.conformance.machine import Run, VisibilityMachine, build_machine
    from sqs_conformance.model.profiles import PROFILES

    def rules(profile: str) -> set[str]:
        machine = build_machine(Run(ModelTarget(profile), profile, run_id="t"))
        return {r.function.__name__ for r in machine.setup_state().rules}

    everything = {r.function.__name__ for r in VisibilityMachine.setup_state().rules}
    batches, fifo_only = {"change_batch", "delete_batch"}, {"send_in_order", "retry_receive", "retry_send"}
    assert everything - rules("sqs-standard") == fifo_only | {"peek", "lock_unreceived"}
    assert everything - rules("sqs-fifo") == {"peek", "lock_unreceived"}
    assert everything - rules("sqs-2008") == batches | fifo_only | {"purge"}
    assert everything - rules("smq") == batches | fifo_only | {"purge", "receive_fewer_than_sent",
                                                                "lock_unreceived"}
    # a machine built from the class itself still refuses it: its precondition stays
    peek = getattr(VisibilityMachine.peek, RULE_MARKER)
    assert not all(test(SimpleNamespace(profile=PROFILES["sqs-standard"])) for test in peek.preconditions)
    assert all(test(SimpleNamespace(profile=PROFILES["smq"])) for test in peek.preconditions)


def test_a_finished_run_leaves_nothing_of_its_target_alive():
    """Hypothesis keeps every machine class it ran for the life of the process: a class still holding its run kept
    each run's target (moto's whole state), trace and findings, run after run."""
    import gc
    import weakref

    from sqs_conformance.conformance.witnesses.search import search

    target = TwoBugs("sqs-standard")  # diverging, so its findings and their steps are kept too
    result = run(target, "sqs-standard", RunOptions(examples=10, seed=5, max_rounds=2, coverage_rounds=0))
    assert result.findings
    gone = weakref.ref(target)
    del target, result
    gc.collect()
    assert gone() is None

    # The witness search builds its machines on runs of its own, on the model: none is kept either.
    from sqs_conformance.conformance.machine import Run

    def runs_alive() -> int:
        gc.collect()
        return sum(isinstance(o, Run) for o in gc.get_objects())

    before = runs_alive()
    assert search("sqs-standard", "HANDLE-MALFORMED", "virtual", examples=20) is not None
    assert runs_alive() == before
