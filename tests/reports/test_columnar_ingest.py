"""The reports job reads a trace's columnar copy where it covers the trace, and its JSON lines otherwise: either
way the steps table holds the same rows."""

import json

import pytest

from conformance.trace import TraceWriter
from reports import ingest, job
from tests.reports.conftest import step
from tests.reports.test_pipeline import first_run, rows

pytestmark = pytest.mark.xdist_group("spark")


def records() -> list[dict]:
    """The pipeline tests' run, and a step with every kind of field filled: an operation and an error with more
    fields than the tables keep, notes, a reappearance and several views."""
    rich = json.loads(step("r1", 4, 0, op="ChangeMessageVisibility", response="Error", verdict="divergence",
                           divergences=[["VIS-TERMINATE"]], reappeared=[0.25], returned=["m1"]))
    rich["operation"].update(receipt_handle="h1", visibility_timeout=0)
    rich["response"].update(code="InvalidParameterValue", message="Value 0 … is invalid")
    rich["notes"] = [{"rules": ["RCV-AT-LEAST-ONCE"], "expected": "hidden", "observed": "returned",
                      "message_ids": ["m1"]}]
    rich["views"] = {"m1": [["receipt", 30.5], ["none", 0.0]], "m2": []}
    return [json.loads(line) for line in first_run()] + [rich]


def write(path, columnar):
    writer = TraceWriter(path, columnar=columnar)
    for record in records():
        writer.write(record)
    writer.close()
    assert (path.parent / f"{path.name}.columns").exists() == columnar


def steps_of(spark, out):
    good = ingest.steps(spark, f"{out}/tables").collect()
    return sorted((r.asDict(recursive=True) for r in good), key=lambda r: (r["run_id"], r["case"], r["step"]))


def test_the_copy_and_the_json_lines_give_the_same_steps_and_tables(spark, tmp_path):
    write(tmp_path / "copied" / "trace.jsonl", columnar=True)
    write(tmp_path / "lines" / "trace.jsonl", columnar=False)
    for folder in ("copied", "lines"):
        job.build(spark, [str(tmp_path / folder)], str(tmp_path / f"out-{folder}"))
    copied, parsed = steps_of(spark, tmp_path / "out-copied"), steps_of(spark, tmp_path / "out-lines")
    assert len(copied) == len(records())
    for a, b in zip(copied, parsed, strict=True):
        assert a["file"].endswith("/copied/trace.jsonl") and b["file"].endswith("/lines/trace.jsonl")
        assert {k: v for k, v in a.items() if k not in ("file", "source")} == \
            {k: v for k, v in b.items() if k not in ("file", "source")}
    for table in ("matrix", "timing"):
        assert sorted(map(str, rows(spark, tmp_path / "out-copied", table))) == \
            sorted(map(str, rows(spark, tmp_path / "out-lines", table)))


def test_the_copy_is_what_is_read_while_it_covers_the_trace(spark, tmp_path):
    trace = tmp_path / "traces" / "trace.jsonl"
    write(trace, columnar=True)
    text = trace.read_text()
    trace.write_text(text.replace('"verdict":"ok"', '"verdict":"??"', 1))  # the same length: the copy still covers
    summary = job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    assert (summary.steps, summary.quarantined) == (len(records()), 0)


def test_a_trace_appended_to_since_its_copy_is_read_from_its_lines(spark, tmp_path):
    trace = tmp_path / "traces" / "trace.jsonl"
    write(trace, columnar=True)
    with trace.open("a") as more:
        more.write(step("r2", 1, 0, op="CreateQueue", response="Ok", rules=["VIS-DEFAULT"]) + "\n")
    summary = job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    assert summary.steps == len(records()) + 1
    assert {r["run_id"] for r in steps_of(spark, tmp_path / "out")} == {"r1", "r2"}
