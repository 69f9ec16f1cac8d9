"""The columnar copy a trace writer keeps beside its JSON lines (conformance/columnar.py): it holds every line
of the trace, follows a trace appended to by a later run, and never costs the run its trace."""

import json
import shutil

import pyarrow.parquet as pq

from sqs_conformance.conformance import columnar
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.model.trace_format import columnar_copy
from tests.trace_lines import trace_line


def lines(run: str, count: int) -> list[dict]:
    return [trace_line(run_id=run, target="t", profile="sqs-standard", case=1, step=i) for i in range(count)]


def write(path, records, columnar_copy=True):
    writer = TraceWriter(path, columnar=columnar_copy)
    for record in records:
        writer.write(record)
    writer.close()


def copy_of(path):
    return columnar_copy(str(path), path.stat().st_size)


def test_the_copy_holds_every_line_and_is_named_after_the_traces_length(tmp_path):
    trace = tmp_path / "trace.jsonl"
    write(trace, lines("r1", 25_000))  # more than one row group
    table = pq.read_table(copy_of(trace))
    assert table.num_rows == 25_000 == len(trace.read_text().splitlines())
    assert table.column("step").to_pylist() == list(range(25_000))


def test_a_later_run_into_the_same_trace_extends_its_copy(tmp_path):
    trace = tmp_path / "trace.jsonl"
    write(trace, lines("r1", 3))
    write(trace, lines("r2", 2))
    folder = (tmp_path / "trace.jsonl.columns")
    assert [p.name for p in folder.iterdir()] == [f"{trace.stat().st_size}.parquet"]
    assert pq.read_table(copy_of(trace)).column("run_id").to_pylist() == ["r1"] * 3 + ["r2"] * 2


def test_lines_no_copy_covers_leave_the_trace_without_one(tmp_path):
    trace = tmp_path / "trace.jsonl"
    write(trace, lines("r1", 3), columnar_copy=False)
    write(trace, lines("r2", 2))  # a copy of r2 alone would hide r1 from the reports
    assert not (tmp_path / "trace.jsonl.columns").exists()
    assert len(trace.read_text().splitlines()) == 5


def test_a_failing_copy_is_dropped_and_the_trace_kept(tmp_path, monkeypatch):
    trace = tmp_path / "trace.jsonl"
    writer = TraceWriter(trace)
    writer.write(lines("r1", 1)[0])

    def broken(record):
        raise OSError("disk full")

    monkeypatch.setattr(columnar, "columnar_row", broken)
    writer.write(lines("r1", 2)[1])
    writer.close()
    assert not list((tmp_path / "trace.jsonl.columns").iterdir())
    assert [json.loads(line)["step"] for line in trace.read_text().splitlines()] == [0, 1]


def test_two_writers_appending_at_once_leave_no_copy(tmp_path):
    trace = tmp_path / "trace.jsonl"
    first, second = TraceWriter(trace), TraceWriter(trace)  # two runs into one folder at the same time
    for one, other in zip(lines("r1", 3), lines("r2", 3), strict=True):
        first.write(one)
        second.write(other)
    first.close()
    second.close()
    assert not list((tmp_path / "trace.jsonl.columns").iterdir())  # each copy would miss the other's lines


def test_a_copy_that_cannot_be_finished_does_not_fail_the_run(tmp_path):
    trace = tmp_path / "trace.jsonl"
    writer = TraceWriter(trace)
    writer.write(lines("r1", 1)[0])
    shutil.rmtree(tmp_path / "trace.jsonl.columns")  # e.g. a cleanup removing the folder while the run goes on
    writer.close()
    assert len(trace.read_text().splitlines()) == 1 and not (tmp_path / "trace.jsonl.columns").exists()


def test_a_trace_with_a_record_the_reports_job_would_quarantine_keeps_no_copy(tmp_path):
    """The reports job copies a copy into its tables unjudged: it may hold good lines only."""
    for name, broken in (("verdict", {"verdict": "maybe"}), ("missing", {"profile": None})):
        trace = tmp_path / f"{name}.jsonl"
        records = lines("r1", 3)
        records[1] = {**records[1], **broken}
        write(trace, records)
        assert not list((tmp_path / f"{name}.jsonl.columns").iterdir())
        assert len(trace.read_text().splitlines()) == 3
    write(tmp_path / "good.jsonl", lines("r1", 3))
    assert pq.read_table(copy_of(tmp_path / "good.jsonl")).num_rows == 3
