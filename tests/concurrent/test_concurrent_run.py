"""`run --clients N` end to end on the model and on a target with a fault among consumers: the verdict, the
finding's shortest history, its timeline, its replay, and `check` on the trace reaching the same verdict."""

import json
from pathlib import Path

import pytest

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.check import check_traces
from sqs_conformance.conformance.concurrent.command import run_clients
from sqs_conformance.conformance.concurrent.finding import timeline
from sqs_conformance.conformance.concurrent.replay import NOT_REPRODUCED, REPRODUCED, confirm, load
from sqs_conformance.conformance.concurrent.run import ConcurrentOptions, run_concurrent
from tests.cli import SQS_CONFORMANCE
from tests.concurrent.targets import ForgetfulConsumers

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
@pytest.mark.parametrize("mode", ["threads", "drawn"])
def test_the_model_as_a_queue_conforms_under_eight_clients(profile, mode):
    result = run_concurrent(ModelTarget(profile), profile, ConcurrentOptions(clients=8, cases=6, seed=3, mode=mode))
    assert result.conforms, {r: f.divergence for r, f in result.findings.items()}
    verdicts = result.verdicts()
    assert verdicts["RCV-EXCLUSIVE"].value == "conforms"  # decided: some receive could have returned a held message
    assert result.unordered == 0


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
def test_a_drawn_interleaving_finds_a_fault_among_consumers_and_shrinks_it(profile, tmp_path):
    target = ForgetfulConsumers(profile)
    result = run_clients(target, profile, ConcurrentOptions(clients=4, cases=8, seed=1, mode="drawn"), tmp_path)
    assert "RCV-EXCLUSIVE" in result.findings
    finding = result.findings["RCV-EXCLUSIVE"]
    # a case of some 60 operations shown in a handful: a replay keeps each retry's first try, each handle's receive
    assert finding.size <= 8 and len({o.client for o in finding.history.ops}) >= 2
    text = timeline(finding)
    assert "client" in text and "✗" in text or "(counted)" in text
    folder = tmp_path / "concurrent" / "RCV-EXCLUSIVE"
    assert {p.name for p in folder.iterdir()} == {"history.jsonl", "TIMELINE.txt", "RULE.py", "finding.json"}
    # the same history replayed: the faulty target again, the model as a queue never
    history = load(folder / "history.jsonl")
    assert confirm(history, "RCV-EXCLUSIVE", ForgetfulConsumers(profile), tries=2, say=lambda _: None) == REPRODUCED, \
        (folder / "TIMELINE.txt").read_text()
    assert confirm(history, "RCV-EXCLUSIVE", ModelTarget(profile), tries=2, say=lambda _: None) == NOT_REPRODUCED
    # ... and so does `confirm` on the command line
    import subprocess

    for spec, code in (("python:tests.concurrent.targets:ForgetfulConsumers", 1), ("model", 0)):
        done = subprocess.run([*SQS_CONFORMANCE, "confirm", "--target", spec, str(folder / "history.jsonl")],
                              capture_output=True, text=True, cwd=REPOSITORY)
        assert done.returncode == code, done.stdout + done.stderr
    # check reaches the run's verdict on every case of the trace, step by step
    checked = check_traces([tmp_path / "trace.jsonl"])
    assert len(checked) == result.cases
    assert any(d.rule == "RCV-EXCLUSIVE" for c in checked for _, d in c.divergences)
    ran: dict[int, set] = {}
    for line in (tmp_path / "trace.jsonl").read_text().splitlines():
        record = json.loads(line)
        ran.setdefault(record["case"], set()).update((record["step"], d["rules"][0]) for d in record["divergences"])
    assert {c.case: {(step, d.rule) for step, d in c.divergences} for c in checked} == ran


def test_a_stopped_run_keeps_its_trace_and_the_findings_made_before_the_stop(tmp_path):
    """Ctrl-C (SIGTERM arrives as the same KeyboardInterrupt) after a case that found a fault: the finding is
    written, as the trace is, before the stop goes on."""
    stopped_after: list[int] = []

    def stop_once_something_was_found(result):
        if result.findings:
            stopped_after.append(result.cases)
            raise KeyboardInterrupt

    profile = "sqs-standard"
    with pytest.raises(KeyboardInterrupt):
        run_clients(ForgetfulConsumers(profile), profile, ConcurrentOptions(clients=4, cases=30, seed=1,
                                                                            mode="threads"),
                    tmp_path, on_case=stop_once_something_was_found)
    assert stopped_after and stopped_after[0] < 30
    folder = tmp_path / "concurrent" / "RCV-EXCLUSIVE"
    assert {p.name for p in folder.iterdir()} == {"history.jsonl", "TIMELINE.txt", "RULE.py", "finding.json"}
    cases = {json.loads(line)["case"] for line in (tmp_path / "trace.jsonl").read_text().splitlines()}
    assert len(cases) == stopped_after[0]


def test_run_clients_on_the_command_line_and_check_of_its_trace(tmp_path):
    import subprocess

    run = subprocess.run([*SQS_CONFORMANCE, "run", "--target", "model", "--clients", "4", "--examples", "4",
                          "--seed", "2", "--out", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "conforms to sqs-standard with 4 clients" in run.stdout
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert {line["client"] for line in lines} == {0, 1, 2, 3}
    check = subprocess.run([*SQS_CONFORMANCE, "check", str(tmp_path / "trace.jsonl")], capture_output=True, text=True)
    assert check.returncode == 0 and "no divergence" in check.stdout


@pytest.mark.parametrize("arguments, says", [
    (["--clients", "9"], "--clients"),
    (["--clients", "4", "--interleaving", "sometimes"], "--interleaving"),
])
def test_bad_concurrent_arguments_get_one_line(arguments, says, tmp_path):
    import subprocess

    run = subprocess.run([*SQS_CONFORMANCE, "run", "--target", "model", *arguments, "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and says in run.stderr and "Traceback" not in run.stderr


def test_a_target_that_cannot_share_its_queues_is_refused_in_one_line(tmp_path):
    import subprocess

    run = subprocess.run([*SQS_CONFORMANCE, "run", "--target", "process:node examples/inhouse_queue.mjs",
                          "--clients", "2", "--out", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode != 0 and "cannot give several clients the same queues" in run.stderr
    assert "Traceback" not in run.stderr
