"""Traces: every step written, `check` re-verifies them, tampered and malformed traces are caught."""

import json

import pytest

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.check import check_traces
from sqs_conformance.conformance.runner import RunOptions, run
from sqs_conformance.conformance.trace import TraceError, read_trace
from sqs_conformance.model.trace_format import NAMES
from tests.conformance.planted import WrongMalformedHandleCode

FIELDS = set(NAMES)  # the one definition of the trace line (model/trace_format.py)


@pytest.fixture(scope="module")
def conforming_trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = run(ModelTarget("sqs-standard"), "sqs-standard", RunOptions(examples=30, seed=2, out_dir=out))
    return out / "trace.jsonl", result


def test_every_step_is_one_json_line_with_the_documented_fields(conforming_trace):
    path, result = conforming_trace
    lines = path.read_text().splitlines()
    assert len(lines) == result.steps
    for line in lines[:50]:
        record = json.loads(line)
        assert set(record) == FIELDS
        assert record["complete"] >= record["invoke"] and record["complete_wall"] >= record["invoke_wall"]
        assert record["verdict"] in ("ok", "note", "divergence", "behind")


def test_a_reappearance_is_measured_from_the_deadline_the_step_before_held(conforming_trace):
    path, _ = conforming_trace
    records = [json.loads(line) for line in path.read_text().splitlines()]
    previous = {(r["run_id"], r["case"], r["step"]): r for r in records}
    measured = 0
    for record in records:
        for seen in record["reappeared"]:
            windows = previous[(record["run_id"], record["case"], record["step"] - 1)]["views"][seen["message"]]
            assert all(hidden == "receipt" for hidden, _ in windows)
            assert {at for _, at in windows} == {seen["deadline"]}  # only certain deadlines are measured
            # measured to when the receive took effect: its call, or a long poll's answer
            assert record["invoke"] - 1e-9 <= seen["deadline"] + seen["lateness"] <= record["complete"] + 1e-9
            assert seen["lateness"] >= 0  # the model never returns a message before its deadline
            assert seen["message"] in record["returned"]
            measured += 1
        if record["operation"]["type"] != "ReceiveMessage":
            assert record["reappeared"] == []
    assert measured > 10


def test_check_passes_a_conforming_trace(conforming_trace):
    path, result = conforming_trace
    cases = check_traces([path])
    assert sum(c.steps for c in cases) == result.steps
    assert not any(c.divergences for c in cases)


def test_check_flags_a_trace_with_a_divergence(tmp_path):
    result = run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", RunOptions(examples=40, seed=5,
                                                                                      out_dir=tmp_path, max_rounds=1,
                                                                                      coverage_rounds=0))
    assert "HANDLE-MALFORMED" in result.findings
    flagged = {d.rule for c in check_traces([tmp_path / "trace.jsonl"]) for _, d in c.divergences}
    assert "HANDLE-MALFORMED" in flagged


def test_check_flags_a_tampered_receive(conforming_trace, tmp_path):
    """A receive that returned nothing is edited to return a message that was surely hidden."""
    path, _ = conforming_trace
    records = [json.loads(line) for line in path.read_text().splitlines()]
    tampered = None
    for i, record in enumerate(records):
        response = record["response"]
        if record["operation"]["type"] == "ReceiveMessage" and response.get("messages"):
            later = [r for r in records[i + 1:] if r["case"] == record["case"]
                     and r["operation"]["type"] == "ReceiveMessage" and r["response"].get("messages") == []
                     and r["invoke"] == record["invoke"]]
            if later:
                later[0]["response"]["messages"] = response["messages"]
                tampered = later[0]
                break
    assert tampered is not None, "the fixture run has a receive followed by an empty one at the same time"
    edited = tmp_path / "tampered.jsonl"
    edited.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    diverging = [c for c in check_traces([edited]) if c.divergences]
    assert [c.case for c in diverging] == [tampered["case"]]


def test_a_malformed_line_is_named_with_file_and_line(conforming_trace, tmp_path):
    path, _ = conforming_trace
    broken = tmp_path / "broken.jsonl"
    lines = path.read_text().splitlines()
    broken.write_text("\n".join(lines[:3] + ["{not json"] + lines[3:]) + "\n")
    with pytest.raises(TraceError, match=r"broken\.jsonl:4:"):
        list(read_trace(broken))
