"""The reports job reads a trace's columnar copy where it covers the trace, and its JSON lines otherwise: either
way the steps table holds the same rows."""

import json
import shutil
from pathlib import Path

import pytest

from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.reports import ingest, job
from sqs_conformance.reports.spark import ReportError
from sqs_conformance.model.trace_format import columnar_copy
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
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
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


def test_the_copy_goes_into_the_tables_byte_for_byte(spark, tmp_path):
    """Not decoded and written again: what made reading a run's trace cost as much as parsing it."""
    trace = tmp_path / "traces" / "trace.jsonl"
    write(trace, columnar=True)
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    (stored,) = (tmp_path / "out" / "tables" / "lines").glob("source=*/quarantined=false/*.parquet")
    assert stored.read_bytes() == Path(columnar_copy(str(trace), trace.stat().st_size)).read_bytes()


def test_a_trace_whose_copy_was_dropped_for_a_malformed_record_has_it_quarantined(spark, tmp_path):
    trace = tmp_path / "traces" / "trace.jsonl"
    writer = TraceWriter(trace)
    for record in records():
        writer.write(record)
    writer.write({**records()[0], "verdict": "maybe"})
    writer.close()
    summary = job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    assert (summary.steps, summary.quarantined) == (len(records()), 1)
    (line,) = ingest.quarantine(spark, str(tmp_path / "out" / "tables")).collect()
    assert line.problem == "unknown verdict maybe" and line.file.endswith("/traces/trace.jsonl")


def test_a_partition_the_manifest_does_not_name_is_not_counted(spark, tmp_path):
    """What a job stopped between writing a partition and its manifest leaves: read again next time, never twice."""
    write(tmp_path / "traces" / "trace.jsonl", columnar=True)
    out = tmp_path / "out"
    job.build(spark, [str(tmp_path / "traces")], str(out))
    (partition,) = (out / "tables" / "lines").glob("source=*")
    shutil.copytree(partition, partition.with_name("source=0000000000000000"))
    assert job.build(spark, [str(tmp_path / "traces")], str(out)).steps == len(records())


def test_tables_of_an_earlier_layout_are_refused_and_left_as_they_are(spark, tmp_path):
    write(tmp_path / "traces" / "trace.jsonl", columnar=False)
    earlier = tmp_path / "out" / "tables" / "steps" / "source=1" / "quarantined=false"
    earlier.mkdir(parents=True)
    (earlier / "part-0.parquet").write_bytes(b"rows")
    with pytest.raises(ReportError, match=r"earlier version .* remove .*tables to rebuild it"):
        job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    assert (earlier / "part-0.parquet").read_bytes() == b"rows"
