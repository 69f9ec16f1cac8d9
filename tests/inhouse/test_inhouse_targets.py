"""In-house queues: a Python adapter loaded by name, and a Node program behind the JSON-lines protocol."""

import json
import shutil
import subprocess
import sys

import pytest

from sqs_conformance.adapters.base import Target, TargetError, VirtualClock
from sqs_conformance.adapters.inhouse import Guarded, ProcessTarget, python_target
from sqs_conformance.model.values import CreateQueue, ReceiveMessage, ReceiveOk, SendMessage, SendOk
from tests.cli import SQS_CONFORMANCE

NODE_QUEUE = "node examples/inhouse_queue.mjs"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="the example queue runs on Node.js")


def sqs_conformance(*args):
    return subprocess.run([*SQS_CONFORMANCE, *args], capture_output=True, text=True,
                          timeout=600)


def run_summary(target, out, *options, exit_code):
    """`sqs-conformance run` on `target`, expected to exit with `exit_code`; the one summary it wrote."""
    result = sqs_conformance("run", "--target", target, "--budget", "0", *options, "--out", str(out))
    assert result.returncode == exit_code, result.stdout[-3000:] + result.stderr
    (summary,) = [json.loads(p.read_text()) for p in out.glob("summary-*.json")]
    return summary


@needs_node
def test_the_node_queue_speaks_the_protocol_on_the_suites_clock():
    target = ProcessTarget(NODE_QUEUE, "sqs-standard")
    try:
        assert (target.name, target.version(), target.profiles) == ("inhouse-node", "1.0",
                                                                     frozenset({"sqs-standard"}))
        target.execute(CreateQueue("q", {"VisibilityTimeout": 30}))
        assert isinstance(target.execute(SendMessage("q", "hello")), SendOk)
        assert target.execute(ReceiveMessage("q", visibility_timeout=5)).messages[0].body == "hello"
        # A long poll answers when the message's deadline comes, 5 s in, and the suite's clock follows.
        (again,) = target.execute(ReceiveMessage("q", wait_time_seconds=20)).messages
        assert again.receive_count == 2 and target.clock.now() == 5.0
        # Hidden again until 35 s (the queue's 30 s): a 20 s poll answers empty at the end of its wait.
        assert target.execute(ReceiveMessage("q", wait_time_seconds=20)) == ReceiveOk(())
        assert target.clock.now() == 25.0
    finally:
        target.close()
    assert target.process.poll() is not None


@needs_node
def test_the_suite_checks_the_node_queue_and_finds_its_design_choices(tmp_path):
    summary = run_summary(f"process:{NODE_QUEUE}", tmp_path, "--examples", "30", "--seed", "1", "--no-shrink",
                          exit_code=1)
    assert summary["target"] == "inhouse-node"
    # It rejects a change through a handle of an earlier receive; SQS accepts it (EVIDENCE: VAL).
    assert "CMV-STALE" in summary["findings"]
    for core in ("RCV-HIDE", "RCV-REAPPEAR", "VIS-EXTEND-NONADDITIVE", "VIS-TERMINATE", "DEL-REMOVES"):
        assert summary["rules"][core]["exercised"] > 0 and core not in summary["findings"], core
    # What it does not implement is skipped, never judged.
    assert "REDRIVE-DLQ" in summary["never_decisive"] and "BATCH-PARTIAL" in summary["never_decisive"]


def test_a_python_adapter_is_loaded_by_module_and_class(tmp_path):
    summary = run_summary("python:sqs_conformance.adapters.model_target:ModelTarget", tmp_path, "--examples", "5",
                          "--steps", "8", "--seed", "2", exit_code=0)
    assert summary["target"] == "model:sqs-standard" and summary["steps"] > 20


@pytest.mark.parametrize("spec, message", [
    ("python:nowhere", "expected python:package.module:Class"),
    ("python:no_such_module_here:Queue", "cannot import no_such_module_here"),
    ("python:sqs_conformance.adapters.model_target:Missing", "adapters.model_target has no Missing"),
    ("python:sqs_conformance.adapters.base:VirtualClock", "VirtualClock is not a subclass of adapters.base.Target"),
])
def test_a_wrong_python_adapter_is_one_line(spec, message):
    with pytest.raises(TargetError, match=message):
        python_target(spec, "sqs-standard")
    result = sqs_conformance("run", "--target", spec, "--examples", "1")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and message in result.stderr


@pytest.mark.parametrize("command, message", [
    ("no-such-program-anywhere", "cannot start no-such-program-anywhere"),
    (f"{sys.executable} -c 'import sys; sys.exit(\"no queue today\")'", "exited: no queue today"),
    (f"{sys.executable} -c 'print(\"hello there\")'", "not the protocol"),
    (f"{sys.executable} -c 'print(\"{{\\\"name\\\": \\\"q\\\", \\\"profiles\\\": [\\\"kafka\\\"]}}\")'",
     "names no profile the suite knows"),
])
def test_a_program_that_does_not_speak_the_protocol_is_one_line(command, message):
    with pytest.raises(TargetError, match=message):
        ProcessTarget(command, "sqs-standard")


def test_the_python_example_conforms_on_everything_it_implements(tmp_path):
    summary = run_summary("python:examples.inhouse_queue:InHouseQueue", tmp_path, "--examples", "30",
                          "--seed", "1", "--no-shrink", exit_code=0)
    assert summary["target"] == "inhouse-python" and not summary["findings"]
    # Exactly what it lacks (batches, attributes, purge, redrive) goes unexercised; everything else is checked.
    assert set(summary["never_decisive"]) == {
        "QATTR-LATER-RECEIVES", "BATCH-MAX-ENTRIES", "BATCH-EMPTY", "BATCH-ENTRY-ID", "BATCH-IDS-DISTINCT",
        "BATCH-PARTIAL", "REDRIVE-DLQ", "REDRIVE-KEEPS-COUNT", "PURGE-ALL", "PURGE-IN-PROGRESS", "ATTR-COUNTS"}


def test_an_additive_extend_in_the_python_example_is_caught_and_shrunk():
    from benchmarks.reference_designs.example_mutants import AdditiveExtend
    from sqs_conformance.conformance.runner import RunOptions, run

    result = run(AdditiveExtend("sqs-standard"), "sqs-standard", RunOptions(examples=30, seed=1))
    assert "VIS-EXTEND-NONADDITIVE" in result.findings
    # 5 steps today (its witness, as a person would write it); issue 6 aims at 6 at most.
    assert len(result.findings["VIS-EXTEND-NONADDITIVE"].steps) <= 6


@pytest.mark.parametrize("mutant, rule", [
    ("ReceiveCountNotIncremented", "RCV-COUNT"),
    ("TimeoutRangeOffByOne", "VIS-RANGE"),
    ("FirstReceiveForgotten", "RCV-FIRST-TIMESTAMP"),
    ("DelayIgnored", "DELAY-HIDES"),
])
def test_mutants_of_the_example_are_killed_by_the_rule_they_break(mutant, rule):
    from benchmarks.reference_designs import example_mutants as mutants
    from sqs_conformance.conformance.runner import RunOptions, run

    result = run(getattr(mutants, mutant)("sqs-standard"), "sqs-standard",
                 RunOptions(examples=30, seed=1, shrink=False))
    assert rule in result.findings, sorted(result.findings)


def test_a_program_that_logs_much_on_stderr_is_not_stalled_and_its_last_words_are_kept(tmp_path):
    """200 kB of stderr would fill a pipe nobody reads; the answer must still come, and an exit be explained."""
    script = tmp_path / "chatty.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    sys.stderr.write('log line ' * 20000 + '\\n'); sys.stderr.flush()\n"
        "    request = json.loads(line)\n"
        "    if 'hello' in request:\n"
        "        print(json.dumps({'name': 'chatty', 'profiles': ['sqs-standard']}), flush=True)\n"
        "    else:\n"
        "        sys.exit('giving up on ' + request['operation']['type'])\n")
    target = ProcessTarget(f"{sys.executable} {script}", "sqs-standard")
    assert target.name == "chatty"
    with pytest.raises(TargetError, match="chatty exited: giving up on CreateQueue"):
        target.execute(CreateQueue("q", {}))
    target.close()


class Exploding(Target):
    name = "exploding"
    profiles = frozenset({"sqs-standard"})

    def __init__(self) -> None:
        self.clock = VirtualClock()

    def execute(self, op):
        raise KeyError("queue 'q'")


def test_an_exception_of_a_python_target_stops_the_run_with_one_line():
    with pytest.raises(TargetError) as stopped:
        Guarded(Exploding()).execute(CreateQueue("q", {}))
    message = str(stopped.value)
    assert message.startswith("exploding raised KeyError on CreateQueue: \"queue 'q'\" (")
    assert "test_inhouse_targets.py:" in message and "\n" not in message
