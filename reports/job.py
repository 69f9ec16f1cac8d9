"""The reports job: traces → Parquet tables → `report.html` and `junit.xml`.

`build_report` is its one entry: `sqs-conformance report TRACES… --out DIR` calls it, and so does spark-submit:
`spark-submit reports/job.py TRACES… --out DIR` (the session spark-submit made is used as it is).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sqs_conformance.model import trace_format
from sqs_conformance.reports import files, ingest, junit, local_inputs, page, tables
from sqs_conformance.reports.folders import NotWritable, writable
from sqs_conformance.reports.jvm_archive import JvmArchive
from sqs_conformance.reports.spark import ReportError, in_one_jvm, java_banner, session
from sqs_conformance.reports.warmup import warmed_up
from sqs_conformance.reports.workload import session_options

QUARANTINE_SAMPLE = 20
DERIVED = ("matrix", "divergences", "timing")
# What the derived tables were built from (the lines, the code), and the summaries the report reads beside them.
DERIVED_STAMP = "_derived.json"


@dataclass
class Summary:
    report: str
    junit: str
    files: int
    new_files: int
    steps: int
    quarantined: int
    divergences: int

    def said(self) -> list[str]:
        """The summary as `report` and spark-submit print it."""
        return [f"report: {self.report}  (JUnit: {self.junit})",
                f"{self.files} trace files ({self.new_files} new or changed), {self.steps:,} steps, "
                f"{self.divergences} distinct divergences, {self.quarantined:,} malformed lines quarantined"]


def build_report(traces: list[str], out: str, *, master: str | None = None, archive_dir: Path | None = None,
                 early=None, say: Callable[[str], None] = print) -> Summary:
    """The report of `traces` into `out`: local inputs checked before Spark starts, the session (`early`'s, if
    `run --report` started one beside the run; spark-submit's; a local one; or `master`'s cluster), the job, and
    with `archive_dir` the opt-in class archive. Whatever stops it (no trace, a folder it cannot write, no Java, a
    Spark failure, nothing but malformed lines) raises ReportError in one line."""
    nothing_to_read = local_inputs.problem(traces)
    if nothing_to_read is not None:  # said before Spark starts, and nothing is written
        if early is not None:
            early.stop()
        raise ReportError(nothing_to_read)
    try:
        archive = None
        if archive_dir is not None:
            writable(archive_dir, "--jvm-archive")
            archive = JvmArchive(archive_dir.resolve(), java_banner())
        # first: without Java, nothing is written
        spark = early.session(traces, out) if early is not None else session(
            master, archive, **session_options(traces, out))
        if "://" not in out:  # a local folder; Spark itself says what is wrong with a Hadoop path
            writable(Path(out), "--out")
        # A cluster's executors are JVMs of their own (and spark-submit's session may be on one).
        with warmed_up(spark, enabled=in_one_jvm(spark.sparkContext.master)):
            summary = build(spark, traces, out)
    except NotWritable as error:
        raise ReportError(str(error)) from None
    except (PySparkException, Py4JError) as error:  # a path Spark cannot read or write, a cluster gone, ...
        java = getattr(error, "java_exception", None)  # py4j's own message only names the call that failed
        lines = (str(java.toString()) if java is not None else str(error)).strip().splitlines()
        raise ReportError(f"Spark failed: {lines[0] if lines else type(error).__name__}") from None
    if not summary.steps:
        raise ReportError(f"no trace lines in {', '.join(traces)} ({summary.quarantined:,} malformed lines "
                          f"quarantined): is it a trace.jsonl written by `run`?")
    if archive is not None:
        archive.after_job(spark, say)
    return summary


def build(spark: SparkSession, inputs: list[str], out: str, phases: dict[str, float] | None = None) -> Summary:
    """The job. With `phases`, the seconds each phase took are added to it (benchmarks/pipeline.py prints them)."""
    timed = _Phases(phases if phases is not None else {})
    store = f"{out}/tables"
    with timed("find and read new traces into lines"):
        traces = ingest.find_traces(spark, inputs)
        fresh = ingest.ingest(spark, traces, store)
    with timed("plan the steps from the lines"):
        every_step = ingest.steps(spark, store)
    # Not cached: building the in-memory cache cost more than the Parquet reads it saves (benchmarks/pipeline.py).
    steps = every_step.select(*tables.COLUMNS)
    stamp = _stamp(spark, store)
    summaries = _kept_summaries(spark, store, stamp)
    if summaries is None:  # the lines or the code changed since the derived tables were built: build them again
        files.delete(spark, f"{store}/{DERIVED_STAMP}")
        summaries = _derive(spark, store, steps, timed)
        files.write_text(spark, f"{store}/{DERIVED_STAMP}", json.dumps({"stamp": stamp, "summaries": summaries}))
    with timed("collect the report's data"):
        data = _collect(spark, store, *summaries, every_step)
    report, xml = f"{out}/report.html", f"{out}/junit.xml"
    with timed("render report.html and junit.xml"):
        files.write_text(spark, report, page.render(data, out))
        files.write_text(spark, xml, junit.render(data.matrix, data.divergences))
    return Summary(report, xml, len(traces), len(fresh), data.steps, data.quarantined, len(data.divergences))


def _derive(spark: SparkSession, store: str, steps: DataFrame, timed: _Phases) -> tuple[list[dict], list[dict]]:
    """Write the derived tables; returns the latency and lateness summaries the report reads beside them."""
    files_by_source = ingest.files_by_source(spark, store)
    counts = tables.tallied(steps)

    def write(table: DataFrame, name: str) -> None:
        table.write.mode("overwrite").parquet(f"{store}/{name}")

    def timing() -> tuple[list[dict], list[dict]]:
        # A few rows each, read again by the report (histograms, counts) after the timing table is written from them.
        latency, lateness = (tables.latency_summary(steps, counts).cache(),
                             tables.lateness_summary(steps, counts).cache())
        try:
            write(tables.timing(latency, lateness), "timing")
            return _rows(latency), _rows(lateness)
        finally:
            latency.unpersist()
            lateness.unpersist()

    # At once, each planned in its own thread too: a job waiting on its driver (planning, which in a fresh JVM is
    # much of a small report) or on its last task leaves a core to another's tasks.
    with timed(f"tables {', '.join(DERIVED)} (at once)"), ThreadPoolExecutor(len(DERIVED)) as pool:
        matrix = pool.submit(lambda: write(tables.matrix(steps, counts), "matrix"))
        divergences = pool.submit(lambda: write(tables.divergences(steps, files_by_source, counts), "divergences"))
        summaries = pool.submit(timing)
        matrix.result()
        divergences.result()
        return summaries.result()


def _stamp(spark: SparkSession, store: str) -> str:
    """What the derived tables are built from: every trace read so far (the manifest), the code deriving them (this
    job's included) and the Spark computing them."""
    manifest = files.read_text(spark, f"{store}/{ingest.MANIFEST}") or ""
    code = b"".join(Path(path).read_bytes() for path in (tables.__file__, ingest.__file__, trace_format.__file__,
                                                          __file__))
    return hashlib.sha256(manifest.encode() + code + spark.version.encode()).hexdigest()


def _kept_summaries(spark: SparkSession, store: str, stamp: str) -> tuple[list[dict], list[dict]] | None:
    """The summaries of the derived tables, if they were built from these lines by this code and are all there."""
    text = files.read_text(spark, f"{store}/{DERIVED_STAMP}")
    try:
        kept = json.loads(text) if text is not None else None
        if kept is None or kept["stamp"] != stamp:
            return None
        latency, lateness = kept["summaries"]
    except (ValueError, KeyError, TypeError):
        return None  # damaged: built again
    if not all(files.exists(spark, f"{store}/{name}/_SUCCESS") for name in DERIVED):
        return None
    return latency, lateness


@dataclass
class _Phases:
    seconds: dict[str, float]

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


def _rows(frame: DataFrame) -> list[dict]:
    return [row.asDict(recursive=True) for row in frame.collect()]


def _collect(spark: SparkSession, store: str, latency: list[dict], lateness: list[dict], every_step: DataFrame
             ) -> page.ReportData:
    quarantine = ingest.quarantine(spark, store)
    # Small jobs, each mostly waiting on its driver: asked at once, while the minimal cases are looked up.
    with ThreadPoolExecutor(4) as pool:
        matrix = pool.submit(_rows, spark.read.parquet(f"{store}/matrix"))
        timing = pool.submit(_rows, spark.read.parquet(f"{store}/timing"))
        quarantined = pool.submit(quarantine.count)
        quarantine_sample = pool.submit(_rows, quarantine.orderBy("file").limit(QUARANTINE_SAMPLE))
        divergences = _rows(spark.read.parquet(f"{store}/divergences"))
        cases = _minimal_cases(every_step, divergences)
        return page.ReportData(
            generated=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            files=len({source for s in latency for source in s["sources"]}), steps=sum(s["steps"] for s in latency),
            runs=len({run_id for s in latency for run_id in s["run_ids"]}),
            matrix=matrix.result(), divergences=divergences, timing=timing.result(),
            lateness_bars=tables.bars(lateness, "lateness_bars"), latency_bars=tables.bars(latency, "latency_bars"),
            quarantined=quarantined.result(), quarantine_sample=quarantine_sample.result(), cases=cases)


def _minimal_cases(steps: DataFrame, divergences: list[dict]) -> dict[tuple, list[dict]]:
    """The steps of each divergence's minimal case, for its timeline (a concurrent case's: with who sent each step,
    and its wall-clock window, which orders steps its own clock saw at one time)."""
    wanted = {(d["minimal_case"]["file"], d["minimal_case"]["run_id"], d["minimal_case"]["case"]) for d in divergences}
    pointers = {(ingest.source_of(file), run_id, case): (file, run_id, case) for file, run_id, case in wanted}
    if not pointers:
        return {}
    in_partitions = ingest.literal_frame(steps.sparkSession, sorted(pointers),
                                         "source string, run_id string, case bigint")
    cases: dict[tuple, list[dict]] = {}
    for row in _rows(steps.join(F.broadcast(in_partitions), ["source", "run_id", "case"])
                     .select("source", "run_id", "case", "step", "op_type", "queue", "says", "response_type",
                             "error_code", "invoke", "complete", "invoke_wall", "complete_wall", "views", "returned",
                             "verdict", *tables.CONCURRENT)):
        cases.setdefault(pointers[row["source"], row["run_id"], row["case"]], []).append(row)
    return cases


if __name__ == "__main__":  # spark-submit reports/job.py TRACES… --out DIR
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="reports/job.py", description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--out", required=True)
    arguments = parser.parse_args()
    try:
        built = build_report(arguments.traces, arguments.out)
    except ReportError as refused:
        sys.exit(f"reports/job.py: error: {refused}")
    print("\n".join(built.said()))
