"""Known divergences in a baseline: a CI job fails on a new divergence, not on the ones it already knows."""

import json
from types import SimpleNamespace

import pytest

from conformance.baseline import Baseline, BaselineError, compare
from tests.conformance.test_cli import cli

PLANTED = "python:tests.conformance.planted:TwoBugs"  # BATCH-EMPTY and HANDLE-MALFORMED


def result(findings, decided=()):
    """What compare() reads of a run: its findings, and which rules it decided without a divergence."""
    return SimpleNamespace(findings=dict.fromkeys(findings), verdict=lambda r: "conforms" if r in decided else "x")


def test_a_new_divergence_fails_and_a_known_one_does_not():
    known = Baseline("sqs-standard", "emu", {"VIS-RANGE": {}, "BATCH-EMPTY": {}, "PURGE-ALL": {}})
    comparison = compare(known, result({"VIS-RANGE", "HANDLE-MALFORMED"}, decided={"BATCH-EMPTY"}))
    assert comparison.new == ["HANDLE-MALFORMED"] and not comparison.passes
    assert comparison.known == ["VIS-RANGE"]
    assert comparison.fixed == ["BATCH-EMPTY"]  # decided, and it no longer diverges
    assert comparison.unchecked == ["PURGE-ALL"]  # never decided: nothing said of it
    assert compare(known, result({"VIS-RANGE"})).passes


def test_a_run_writes_its_baseline_and_passes_against_it_but_not_against_a_shorter_one(tmp_path):
    known = tmp_path / "known.json"
    first = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "a"),
                "--write-baseline", str(known))
    assert first.returncode == 1, first.stdout + first.stderr
    data = json.loads(known.read_text())
    assert set(data["known"]) == {"BATCH-EMPTY", "HANDLE-MALFORMED"} and data["profile"] == "sqs-standard"
    assert all(entry["steps"] and entry["observed"] for entry in data["known"].values())  # with its minimal case

    again = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "b"), "--baseline", str(known))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no divergence beyond the 2 known" in again.stdout.strip().splitlines()[-1]

    del data["known"]["HANDLE-MALFORMED"]
    known.write_text(json.dumps(data))
    new = cli("run", "--target", PLANTED, "--witnesses-only", "--out", str(tmp_path / "c"), "--baseline", str(known))
    assert new.returncode == 1
    assert "new divergences, not in" in new.stdout and "HANDLE-MALFORMED" in new.stdout.strip().splitlines()[-1]


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

    from conformance.cli import run

    workflow = (pathlib.Path(__file__).parents[2] / "examples" / "github-actions.yml").read_text()
    command = workflow[workflow.index("sqs-conformance run"):].split("\n      - ")[0]
    used = set(re.findall(r"(--[a-z][a-z-]+)", command))
    known = {option for parameter in run.params for option in parameter.opts}
    assert {"--witnesses-only", "--baseline", "--report"} <= used and used <= known, used - known
