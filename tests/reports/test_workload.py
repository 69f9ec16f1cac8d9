"""A report's work told from the local file system before Spark starts (reports/workload.py), the driver JVM's
compiler it chooses, and whether the queries run interpreted. The estimate is only ever a speed choice, so where it
cannot tell it must say so rather than guess small."""

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from sqs_conformance.reports.ingest import MANIFEST, TraceFile
from sqs_conformance.reports.spark import INTERPRETED, _driver_java_options, session_config
from sqs_conformance.reports.workload import (
    INTERPRETED_MAX_LINES, QUICK_JIT_MAX_JSON_BYTES, QUICK_JIT_MAX_LINES, Workload, interpreted, quick_jit,
    session_options, workload,
)
from tests.reports.test_columnar_ingest import records, write

QUICK = "-XX:TieredStopAtLevel=1"
LINES = len(records())  # in each trace `write` writes


def size(path: Path) -> int:
    return path.stat().st_size


def test_a_run_with_its_columnar_copies_has_nothing_to_parse(tmp_path):
    write(tmp_path / "traces" / "a.jsonl", columnar=True)
    write(tmp_path / "traces" / "deeper" / "b.jsonl", columnar=True)
    assert workload([str(tmp_path / "traces")], str(tmp_path / "out")) == Workload(0, 2 * LINES)


def test_traces_without_a_copy_are_parsed_whole(tmp_path):
    plain, copied = tmp_path / "traces" / "plain.jsonl", tmp_path / "traces" / "copied.jsonl"
    write(plain, columnar=False)
    write(copied, columnar=True)
    (tmp_path / "traces" / "notes.txt").write_text("not a trace")
    out = str(tmp_path / "out")
    assert workload([str(tmp_path / "traces")], out) == Workload(size(plain), 2 * LINES)
    assert workload([str(plain)], out) == Workload(size(plain), LINES)  # a file named as it is
    assert workload([str(tmp_path / "traces" / "p*.jsonl")], out) == Workload(size(plain), LINES)  # a glob


def test_a_trace_appended_to_since_its_copy_is_parsed(tmp_path):
    trace = tmp_path / "traces" / "trace.jsonl"
    write(trace, columnar=True)
    with trace.open("a") as more:
        more.write("{}\n")
    assert workload([str(tmp_path / "traces")], str(tmp_path / "out")) == Workload(size(trace), LINES + 1)


def manifest(out: Path, *traces: Path, length_off: int = 0) -> None:
    entries = [TraceFile(f"file:{t.resolve()}", f"file:{t.resolve()}", size(t) + length_off,
                         t.stat().st_mtime_ns // 1_000_000) for t in traces]
    (out / "tables").mkdir(parents=True)
    (out / "tables" / MANIFEST).write_text(json.dumps([asdict(e) for e in entries]))


def test_traces_the_tables_read_already_at_that_length_are_not_parsed_again(tmp_path):
    read, new = tmp_path / "traces" / "read.jsonl", tmp_path / "traces" / "new.jsonl"
    write(read, columnar=False)
    write(new, columnar=False)
    manifest(tmp_path / "out", read)
    assert workload([str(tmp_path / "traces")], str(tmp_path / "out")).json_bytes == size(new)
    manifest(tmp_path / "grown", read, length_off=-1)  # read when it was shorter: read again whole
    assert workload([str(tmp_path / "traces")], str(tmp_path / "grown")).json_bytes == size(read) + size(new)


@pytest.mark.parametrize("inputs, out", [
    (["s3a://bucket/traces"], "out"),  # traces on another file system
    (["hdfs:///traces/*.jsonl"], "out"),
    (["traces/{a,b}.jsonl"], "out"),  # globs Hadoop reads otherwise than Python
    (["traces/[^b].jsonl"], "out"),
    (["traces"], "s3a://bucket/report"),  # tables elsewhere: what they hold already is not known here
])
def test_what_the_local_file_system_cannot_tell_is_unknown(tmp_path, monkeypatch, inputs, out):
    write(tmp_path / "traces" / "a.jsonl", columnar=True)
    monkeypatch.chdir(tmp_path)
    assert workload(inputs, out) is None
    assert not quick_jit(None)


def test_a_damaged_manifest_or_copy_is_unknown(tmp_path):
    trace = tmp_path / "traces" / "a.jsonl"
    write(trace, columnar=True)
    copy = next((tmp_path / "traces" / "a.jsonl.columns").glob("*.parquet"))
    copy.write_bytes(b"not parquet")
    assert workload([str(tmp_path / "traces")], str(tmp_path / "out")) is None
    write(tmp_path / "plain" / "b.jsonl", columnar=False)
    (tmp_path / "out" / "tables").mkdir(parents=True)
    (tmp_path / "out" / "tables" / MANIFEST).write_text("[{")
    assert workload([str(tmp_path / "plain")], str(tmp_path / "out")) is None


def test_counting_stops_past_a_bound(tmp_path, monkeypatch):
    """Once the lines are past their bound the answer is known: no further file is read (a damaged one would
    make the estimate unknown), and the JVM gets both compilers."""
    write(tmp_path / "traces" / "a.jsonl", columnar=True)
    write(tmp_path / "traces" / "b.jsonl", columnar=True)
    next((tmp_path / "traces" / "b.jsonl.columns").glob("*.parquet")).write_bytes(b"not parquet")
    monkeypatch.setattr("sqs_conformance.reports.workload.QUICK_JIT_MAX_LINES", LINES - 1)
    work = workload([str(tmp_path / "traces" / name) for name in ("a.jsonl", "b.jsonl")], str(tmp_path / "out"))
    assert work == Workload(0, LINES) and not quick_jit(work)


def test_c1_only_up_to_both_bounds_and_only_on_a_local_driver():
    assert quick_jit(Workload(0, 0)) and quick_jit(Workload(QUICK_JIT_MAX_JSON_BYTES, QUICK_JIT_MAX_LINES))
    assert not quick_jit(Workload(QUICK_JIT_MAX_JSON_BYTES + 1, 0))
    assert not quick_jit(Workload(0, QUICK_JIT_MAX_LINES + 1))
    assert QUICK in _driver_java_options(None, None, quick_jit=True)
    assert QUICK in _driver_java_options("local[2]", None, quick_jit=True)
    assert QUICK not in _driver_java_options(None, None, quick_jit=False)
    # On a cluster the driver plans and the executors parse: their JVMs are not this one.
    assert QUICK not in _driver_java_options("spark://127.0.0.1:7077", None, quick_jit=True)


def test_interpreted_up_to_its_bound_and_only_where_the_lines_were_counted():
    assert interpreted(Workload(0, 0)) and interpreted(Workload(QUICK_JIT_MAX_JSON_BYTES, INTERPRETED_MAX_LINES))
    assert not interpreted(Workload(0, INTERPRETED_MAX_LINES + 1))
    assert not interpreted(None)
    # Past the JSON bound the lines are no longer counted: a few counted lines say nothing.
    assert not interpreted(Workload(QUICK_JIT_MAX_JSON_BYTES + 1, 10))
    assert INTERPRETED.items() <= session_config("local[2]", interpreted=True).items()
    assert INTERPRETED.items() <= session_config(None, interpreted=True).items()
    assert not INTERPRETED.keys() & session_config("local[2]").keys()
    assert not INTERPRETED.keys() & session_config("spark://127.0.0.1:7077", interpreted=True).keys()


def test_the_session_is_told_what_the_estimate_says(tmp_path, monkeypatch):
    write(tmp_path / "traces" / "a.jsonl", columnar=True)
    traces, out = [str(tmp_path / "traces")], str(tmp_path / "out")
    assert session_options(traces, out) == {"quick_jit": True, "interpreted": True}
    monkeypatch.setattr("sqs_conformance.reports.workload.INTERPRETED_MAX_LINES", LINES - 1)
    assert session_options(traces, out) == {"quick_jit": True, "interpreted": False}
    assert session_options(["s3a://bucket/traces"], out) == {"quick_jit": False, "interpreted": False}


@pytest.mark.xdist_group("spark")  # the one worker whose JVM the reports tests share
def test_the_estimate_agrees_with_the_tables_the_job_writes(spark, tmp_path):
    """After a report, a report of the same traces parses nothing and its tables hold what the job counted: the
    paths, lengths and times Hadoop recorded are the ones read here, and the lines table's files are found."""
    from sqs_conformance.reports import job

    write(tmp_path / "traces" / "a.jsonl", columnar=False)
    write(tmp_path / "traces" / "sub dir" / "b.jsonl", columnar=False)
    write(tmp_path / "traces" / "c.jsonl", columnar=True)
    traces = [str(tmp_path / "traces")]
    plain = sum(size(p) for p in (tmp_path / "traces").rglob("*.jsonl") if p.name != "c.jsonl")
    assert workload(traces, str(tmp_path / "out")) == Workload(plain, 3 * LINES)
    summary = job.build(spark, traces, str(tmp_path / "out"))
    assert workload(traces, str(tmp_path / "out")) == Workload(0, summary.steps + summary.quarantined)
