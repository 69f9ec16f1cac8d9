"""`confirm`: minimal cases found on one target, replayed on another."""

import subprocess

import pytest

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.cases import CaseError, FoundCase
from sqs_conformance.conformance.confirm import confirm
from sqs_conformance.conformance.report import case_json
from sqs_conformance.conformance.runner import RunOptions, run
from tests.conformance.planted import TwoBugs, WrongMalformedHandleCode
from tests.cli import SQS_CONFORMANCE


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """The two minimal cases of a target with two bugs, written as `run` writes them."""
    folder = tmp_path_factory.mktemp("findings")
    result = run(TwoBugs("sqs-standard"), "sqs-standard", RunOptions(examples=50, seed=5, max_rounds=3,
                                                                     coverage_rounds=0))
    assert set(result.findings) == {"BATCH-EMPTY", "HANDLE-MALFORMED"}
    for rule_id, finding in result.findings.items():
        (folder / f"{rule_id}.json").write_text(case_json(finding, "sqs-standard", "planted"))
    return folder


def test_a_case_reproduces_on_a_target_with_the_same_bug_and_not_on_one_without(cases):
    malformed = FoundCase.load(cases / "HANDLE-MALFORMED.json")
    assert confirm(WrongMalformedHandleCode("sqs-standard"), malformed, 120).reproduced is True
    assert confirm(ModelTarget("sqs-standard"), malformed, 120).reproduced is False
    empty = FoundCase.load(cases / "BATCH-EMPTY.json")
    assert confirm(WrongMalformedHandleCode("sqs-standard"), empty, 120).reproduced is False


def test_a_malformed_case_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "RULE.json"
    bad.write_text("{not json")
    with pytest.raises(CaseError, match="not a minimal case file"):
        FoundCase.load(bad)


def test_the_command_replays_a_findings_directory(cases):
    done = subprocess.run([*SQS_CONFORMANCE, "confirm", "--target", "model", str(cases)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr  # the model reproduces neither
    assert "BATCH-EMPTY" in done.stdout and "HANDLE-MALFORMED" in done.stdout
    missing = subprocess.run([*SQS_CONFORMANCE, "confirm", "--target", "model", "/nonexistent"],
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr
