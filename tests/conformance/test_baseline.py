"""Known divergences in a baseline: a CI job fails on a new divergence, not on the ones it already knows."""

import json
from types import SimpleNamespace

import pytest

from sqs_conformance.conformance.baseline import Baseline, BaselineError, compare, shape_of_finding
from sqs_conformance.conformance.cases import encode_steps
from sqs_conformance.model.values import (
    ChangeMessageVisibility, CreateQueue, DeleteMessage, DeleteMessageBatch, PurgeQueue, ReceiveMessage,
)
from tests.conformance.test_cli import cli

PLANTED = "python:tests.conformance.planted:TwoBugs"  # BATCH-EMPTY and HANDLE-MALFORMED


def finding(operation, expected, observed):
    """A finding as compare() reads it: its divergence and the operation of its last step."""
    return SimpleNamespace(divergence=SimpleNamespace(expected=expected, observed=observed),
                           steps=[SimpleNamespace(op=operation)])


VIS_RANGE = finding(ReceiveMessage("q", visibility_timeout=-1), "error InvalidParameterValue", "ReceiveOk")
MALFORMED = finding(DeleteMessage("q", "garbage"), 'error ReceiptHandleIsInvalid /The input receipt handle ".*"/',
                    "error ReceiptHandleIsInvalid 'The input receipt handle is invalid.'")


def result(findings, decided=()):
    """What compare() reads of a run: its findings, and which rules it decided without a divergence."""
    return SimpleNamespace(findings=findings, verdict=lambda r: "conforms" if r in decided else "x")


def known(**findings):
    return Baseline("sqs-standard", "emu", {rule.replace("_", "-"): [{"shape": shape_of_finding(f)}]
                                            for rule, f in findings.items()})


def test_a_new_divergence_fails_and_a_known_one_does_not():
    baseline = known(VIS_RANGE=VIS_RANGE, BATCH_EMPTY=finding(DeleteMessageBatch("q", ()), "error EmptyBatchRequest",
                                                              "BatchOk"),
                     PURGE_ALL=finding(PurgeQueue("q"), "Ok", "error PurgeQueueInProgress 'x'"))
    comparison = compare(baseline, result({"VIS-RANGE": VIS_RANGE, "HANDLE-MALFORMED": MALFORMED},
                                          decided={"BATCH-EMPTY"}))
    assert comparison.new == ["HANDLE-MALFORMED"] and not comparison.passes
    assert comparison.known == ["VIS-RANGE"]
    assert comparison.fixed == ["BATCH-EMPTY"]  # decided, and it no longer diverges
    assert comparison.unchecked == ["PURGE-ALL"]  # never decided: nothing said of it
    assert compare(baseline, result({"VIS-RANGE": VIS_RANGE})).passes


def test_a_known_rule_in_a_new_shape_fails_and_the_same_shape_with_other_values_does_not():
    baseline = known(HANDLE_MALFORMED=MALFORMED)
    other_code = finding(DeleteMessage("q", "x"), MALFORMED.divergence.expected, "error InvalidParameterValue 'x'")
    other_operation = finding(ChangeMessageVisibility("q", "garbage", 5), MALFORMED.divergence.expected,
                              MALFORMED.divergence.observed)
    for new_shape in (other_code, other_operation):
        comparison = compare(baseline, result({"HANDLE-MALFORMED": new_shape}))
        assert not comparison.passes and list(comparison.new_shapes) == ["HANDLE-MALFORMED"]
    # Another handle in the text, another number in the expectation: the same shape
    again = finding(DeleteMessage("q", "other"), MALFORMED.divergence.expected,
                    "error ReceiptHandleIsInvalid 'The input receipt handle \"abc\" is invalid.'")
    assert compare(baseline, result({"HANDLE-MALFORMED": again})).passes
    ranged = known(RCV_MAX_MESSAGES=finding(ReceiveMessage("q", 0), "error InvalidParameterValue /Value 0 for/",
                                            "error InvalidParameterValue 'v'"))
    eleven = finding(ReceiveMessage("q", 11), "error InvalidParameterValue /Value 11 for/",
                     "error InvalidParameterValue 'w'")
    assert compare(ranged, result({"RCV-MAX-MESSAGES": eleven})).passes


def test_a_baseline_of_the_first_format_is_read_with_its_shapes(tmp_path):
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"profile": "sqs-standard", "target": "emu", "known": {"HANDLE-MALFORMED": {
        "expected": MALFORMED.divergence.expected, "observed": MALFORMED.divergence.observed,
        "steps": encode_steps([(0.0, CreateQueue("q", {})), (0.0, DeleteMessage("q", "garbage"))])}}}))
    loaded = Baseline.load(path)
    assert loaded.shapes("HANDLE-MALFORMED") == [shape_of_finding(MALFORMED)]
    assert compare(loaded, result({"HANDLE-MALFORMED": MALFORMED})).passes


def test_a_run_writes_its_baseline_and_passes_against_it_but_not_against_a_shorter_one(tmp_path):
    known_file = tmp_path / "known.json"
    first = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "a"),
                "--write-baseline", str(known_file))
    assert first.returncode == 0, first.stdout + first.stderr  # written: what it saw is known from now on
    data = json.loads(known_file.read_text())
    assert set(data["known"]) == {"BATCH-EMPTY", "HANDLE-MALFORMED"} and data["profile"] == "sqs-standard"
    assert all(entry["steps"] and entry["observed"] and entry["shape"]
               for entries in data["known"].values() for entry in entries)  # with its shape and minimal case

    again = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "b"),
                "--baseline", str(known_file))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no divergence beyond the 2 known" in again.stdout.strip().splitlines()[-1]

    del data["known"]["HANDLE-MALFORMED"]
    data["known"]["BATCH-EMPTY"][0]["shape"]["observed"] = "error EmptyBatchRequest"  # as if it once answered so
    known_file.write_text(json.dumps(data))
    new = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "c"),
              "--baseline", str(known_file))
    assert new.returncode == 1
    last = new.stdout.strip().splitlines()[-1]
    assert last.startswith("new divergences, not in") and "HANDLE-MALFORMED" in last
    assert "BATCH-EMPTY (a new shape)" in last and "BATCH-EMPTY diverged in a shape not in" in new.stdout


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a baseline file"),
    ('{"profile": "sqs-standard"}', "not a baseline file"),
    ('{"profile": "sqs-9", "known": {}}', "unknown profile 'sqs-9'"),
    ('{"profile": "sqs-standard", "known": {"NO-SUCH": {}}}', "no such rule NO-SUCH"),
    ('{"profile": "sqs-fifo", "known": {}}', "is for sqs-fifo, this run checks sqs-standard"),
])
def test_a_baseline_that_cannot_be_used_is_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "known.json"
    path.write_text(content)
    done = cli("run", "--target", "model", "--witnesses-only", "--out", str(tmp_path / "out"), "--baseline", str(path))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_loading_names_the_file():
    with pytest.raises(BaselineError, match="no-such-file.json"):
        Baseline.load(__import__("pathlib").Path("no-such-file.json"))


def test_the_example_workflow_uses_options_run_has():
    import pathlib
    import re

    from sqs_conformance.conformance.cli import run

    workflow = (pathlib.Path(__file__).parents[2] / "examples" / "github-actions.yml").read_text()
    command = workflow[workflow.index("sqs-conformance run"):].split("\n      - ")[0]
    used = set(re.findall(r"(--[a-z][a-z-]+)", command))
    known = {option for parameter in run.params for option in parameter.opts}
    assert {"--witnesses-only", "--baseline"} <= used and used <= known, used - known


def test_a_run_gating_on_a_baseline_while_writing_another_still_fails_on_a_new_divergence(tmp_path):
    known_file, accepted = tmp_path / "known.json", tmp_path / "accepted.json"
    known_file.write_text(json.dumps({"profile": "sqs-standard", "known": {}}))
    done = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "a"),
               "--baseline", str(known_file), "--write-baseline", str(accepted))
    assert done.returncode == 1, done.stdout + done.stderr  # the baseline that was there gates it
    assert set(json.loads(accepted.read_text())["known"]) == {"BATCH-EMPTY", "HANDLE-MALFORMED"}
    assert json.loads(known_file.read_text())["known"] == {}  # the gate's file is left as it was
