"""Trace files into the `lines` table, incrementally.

Each trace file is read once per version of it (its length and modification time) into the partition
`source=<id of the file>` of `lines`. Its columnar copy, where the run left one that covers it
(model/trace_format.py), is copied there as it is: it already holds the table's columns, and only good lines (a
writer drops the copy of a trace with a malformed record). Else its JSON lines are parsed, once: the malformed ones
(not JSON, a wrong type, a missing field, an unknown verdict) go under `quarantined=true` with what is wrong and
their text. A file that grew (traces are appended to) has its partition replaced; files already read are not
read again. The manifest is written last and names the partitions that count, so a job stopped midway reads the
same files again next time, and nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType, BooleanType, DoubleType, IntegerType, LongType, StringType, StructField, StructType,
)

from sqs_conformance.reports import files
from sqs_conformance.reports.spark import ReportError
from sqs_conformance.model.verdicts import StepVerdict
from sqs_conformance.model.trace_format import FIELDS, REQUIRED, VERDICTS, columnar_copy

TRACE_SUFFIX = ".jsonl"
CORRUPT = "_corrupt_line"
LINES = "lines"  # the table of every line read, one partition per trace file
EARLIER_LAYOUT = "steps"  # the table earlier versions kept instead, its lines already projected for the tables
COPIED = "columnar-copy.parquet"  # a columnar copy's name in its partition
MANIFEST = "_ingested.json"  # every trace file read so far, as listed when it was read (TraceFile)
LINE, LINE_KEPT = "line", 500  # a malformed line's text (or its run, case and step), as far as it is kept
CONCURRENT_WRITERS = 16  # partitions one write task keeps open before Spark falls back to sorting its rows

_DIVERGENCE = StructType([
    StructField("rules", ArrayType(StringType())),
    StructField("expected", StringType()),
    StructField("observed", StringType()),
    StructField("message_ids", ArrayType(StringType())),
])

# The Spark type of each kind of trace field (model/trace_format.py). Objects whose fields vary with their type
# are kept as the few fields the tables need; `views` is kept as its JSON text.
_SPARK_KIND = {
    "int": IntegerType(), "long": LongType(), "double": DoubleType(), "bool": BooleanType(), "string": StringType(),
    "strings": ArrayType(StringType()), "divergences": ArrayType(_DIVERGENCE), "json": StringType(),
    "reappeared": ArrayType(StructType([StructField("message", StringType()), StructField("deadline", DoubleType()),
                                        StructField("lateness", DoubleType())])),
    "operation": StructType([StructField("type", StringType()), StructField("queue", StringType())]),
    "response": StructType([StructField("type", StringType()), StructField("code", StringType())]),
}
TRACE_SCHEMA = StructType([StructField(f.name, _SPARK_KIND[f.kind]) for f in FIELDS])
# As `lines` stores them; the partition columns are read as text (a file's id can be all digits).
LINES_SCHEMA = StructType([*TRACE_SCHEMA.fields, StructField("problem", StringType()), StructField(LINE, StringType()),
                           StructField("source", StringType()), StructField("quarantined", StringType())])


@dataclass(frozen=True)
class TraceFile:
    path: str  # fully qualified (file:/…, s3a://…)
    uri: str  # the same, escaped as Spark names a row's file
    length: int
    modified: int

    @property
    def source(self) -> str:
        return source_of(self.uri)


def source_of(uri: str) -> str:
    """The id of a file's partition; `parse` computes the same in Spark from the name Spark gives the file."""
    return hashlib.sha1(uri.encode()).hexdigest()[:16]


def find_traces(spark: SparkSession, inputs: list[str]) -> list[TraceFile]:
    """Trace files named, globbed, or found under a directory (`*.jsonl`, recursively), on any file system
    Hadoop knows (local paths, hdfs://, s3a://…)."""
    found: dict[str, TraceFile] = {}
    for given in inputs:
        try:
            path, fs = files.file_system(spark, given)
            statuses = fs.globStatus(path)
        except Exception as error:  # py4j carries the Java exception; its first line says what is wrong
            raise ReportError(f"cannot read {given}: {str(error).splitlines()[0]}") from None
        if not statuses:
            raise ReportError(f"no trace files at {given}")
        for status in statuses:
            if status.isDirectory():
                listing = fs.listFiles(status.getPath(), True)
                while listing.hasNext():
                    f = listing.next()
                    if f.getPath().getName().endswith(TRACE_SUFFIX):
                        _add(found, f)
            else:
                _add(found, status)
    if not found:
        raise ReportError(f"no {TRACE_SUFFIX} trace files under {', '.join(inputs)}")
    return sorted(found.values(), key=lambda t: t.path)


def _add(found: dict[str, TraceFile], status) -> None:
    path = status.getPath()
    found[path.toString()] = TraceFile(path.toString(), _same_file_uri(path.toUri().toString()), status.getLen(),
                                       status.getModificationTime())


def _same_file_uri(uri: Any) -> Any:
    """Hadoop writes a local file's URI `file:///x` or `file:/x` depending on how it was named; Spark names a
    row's file the second way. Works on a string or a column, so both sides match."""
    if isinstance(uri, str):
        return re.sub("^file:///", "file:/", uri)
    return F.regexp_replace(uri, "^file:///", "file:/")


def read_manifest(spark: SparkSession, tables: str) -> dict[str, TraceFile]:
    text = files.read_text(spark, f"{tables}/{MANIFEST}")
    if text is None:
        return {}
    try:
        return {d["path"]: TraceFile(**d) for d in json.loads(text)}
    except (ValueError, KeyError, TypeError):
        raise ReportError(f"{tables}/{MANIFEST} is damaged: remove {tables} to rebuild the tables") from None


def ingest(spark: SparkSession, traces: list[TraceFile], tables: str) -> list[TraceFile]:
    """Read the traces that are new or changed since the last run into `lines` (malformed lines into its
    `quarantined=true` partitions); returns them. Traces read before and unchanged are left as they are."""
    if files.exists(spark, f"{tables}/{EARLIER_LAYOUT}"):
        raise ReportError(f"{tables} was written by an earlier version of the reports job (a `{EARLIER_LAYOUT}`"
                          f" table): remove {tables} to rebuild it from the traces")
    manifest = read_manifest(spark, tables)
    fresh = [t for t in traces if manifest.get(t.path) != t]
    if not fresh:
        return []
    for trace in fresh:  # a file that grew is read again whole
        files.delete(spark, f"{tables}/{LINES}/source={trace.source}")
    before = set(_partitions(spark, f"{tables}/{LINES}"))
    unparsed = []
    for trace in fresh:
        copy = columnar_copy(trace.path, trace.length)
        if files.exists(spark, copy):  # already the columns of `lines`: kept as they are, not decoded
            files.copy(spark, copy, f"{tables}/{LINES}/source={trace.source}/quarantined=false/{COPIED}")
        else:
            unparsed.append(trace.path)
    if unparsed:
        # One writer open per partition a task meets (a file's good and malformed lines) instead of sorting every
        # row by its partition first, which cost a third of the parse.
        spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", str(CONCURRENT_WRITERS))
        (parse(spark, unparsed).write.mode("append").partitionBy("source", "quarantined")
         .parquet(f"{tables}/{LINES}"))
    unexpected = set(_partitions(spark, f"{tables}/{LINES}")) - before - {t.source for t in fresh}
    if unexpected:  # a partition no re-read of its file could replace: stop before the manifest counts it
        raise ReportError(f"Spark named a trace file otherwise than its listing (partitions {sorted(unexpected)}):"
                          f" a bug of the reports job")
    manifest.update({t.path: t for t in fresh})
    files.write_text(spark, f"{tables}/{MANIFEST}",
                     json.dumps([asdict(t) for t in manifest.values()], indent=1))
    return fresh


def _partitions(spark: SparkSession, where: str) -> list[str]:
    if not files.exists(spark, where):
        return []
    path, fs = files.file_system(spark, where)
    return [s.getPath().getName().removeprefix("source=") for s in fs.listStatus(path) if s.isDirectory()]


def parse(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Every line of `paths` as `lines` stores it: its fields (as the columnar copy holds them), the partition of
    its file, and, for a malformed line, what is wrong with it and its text (or, if it parsed, its run, case and
    step), under `quarantined=true`."""
    raw = (spark.read.schema(StructType([*TRACE_SCHEMA.fields, StructField(CORRUPT, StringType())]))
           .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
           .json(paths))
    missing = [F.when(F.col(name).isNull(), F.lit(name)) for name in REQUIRED]
    problem = (F.when(F.col(CORRUPT).isNotNull(), F.lit("not a JSON object of the trace schema"))
               .when(F.concat_ws(", ", *missing) != "", F.concat(F.lit("missing "), F.concat_ws(", ", *missing)))
               .when(~F.col("verdict").isin(*VERDICTS), F.concat(F.lit("unknown verdict "), F.col("verdict"))))
    named = F.coalesce(F.col(CORRUPT), F.to_json(F.struct("run_id", "case", "step")))
    return (raw.withColumn("problem", problem)
            .select(*TRACE_SCHEMA.names, "problem",
                    F.when(F.col("problem").isNotNull(), F.substring(named, 1, LINE_KEPT)).alias(LINE),
                    F.substring(F.sha1(_same_file_uri(F.col("_metadata.file_path"))), 1, 16).alias("source"),
                    F.when(F.col("problem").isNotNull(), "true").otherwise("false").alias("quarantined")))


def files_by_source(spark: SparkSession, tables: str) -> DataFrame:
    """The file of each partition the manifest counts (`source`, `file`)."""
    return literal_frame(spark, [(t.source, t.uri) for t in read_manifest(spark, tables).values()],
                         "source string, file string")


def literal_frame(spark: SparkSession, rows: list[tuple], schema: str) -> DataFrame:
    """A small frame held in its plan as one literal (`schema` as "name type, …"): one made from Python rows would
    start Python workers in every job that reads it, and one of a literal a value would cost a call to the JVM a
    value (126 rows of three: 0.6 s against 0.02 s, warm)."""
    names = [column.split()[0] for column in schema.split(",")]
    kind = "array<struct<" + ",".join(":".join(column.split()) for column in schema.split(",")) + ">>"
    text = json.dumps([dict(zip(names, row, strict=True)) for row in rows])
    return spark.range(1).select(F.inline(F.from_json(F.lit(text), kind)))


def _lines(spark: SparkSession, tables: str, quarantined: bool) -> DataFrame:
    """The good or the malformed lines of the partitions the manifest counts: one a stopped job left behind is
    read again, and replaced, next time. A partition filter, so it costs no job."""
    sources = [t.source for t in read_manifest(spark, tables).values()]
    return (spark.read.schema(LINES_SCHEMA).parquet(f"{tables}/{LINES}")
            .where(F.col("source").isin(*sources) & (F.col("quarantined") == str(quarantined).lower())))


def steps(spark: SparkSession, tables: str) -> DataFrame:
    """The good steps of every trace read so far, as the tables read them: each named by its partition (`source`;
    `files_by_source` names its file). Fields a line's schema version lacks read as their default (a trace older
    than schema 3 records no decisive step: none count; one older than schema 7 has no concurrent case, so its
    `client` and `round` read as null, as a single client's line writes them)."""
    return _lines(spark, tables, quarantined=False).select(
        "source", "run_id", "target", F.coalesce("target_version", F.lit("")).alias("target_version"),
        "profile", F.coalesce("clock", F.lit("virtual")).alias("clock"),
        F.coalesce("tolerance", F.lit(0.0)).alias("tolerance"), "case", "step",
        F.coalesce("final", F.lit(False)).alias("final"),
        F.col("operation.type").alias("op_type"), F.col("operation.queue").alias("queue"), "says",
        F.col("response.type").alias("response_type"),
        F.col("response.code").alias("error_code"), "invoke", "complete",
        (F.col("complete") - F.col("invoke")).alias("latency"), "invoke_wall", "complete_wall", "verdict",
        F.coalesce("rules", F.array().cast("array<string>")).alias("rules"),
        F.coalesce("decisive", F.array().cast("array<string>")).alias("decisive"),
        # A step behind another's divergence shows its consequences: they are no divergence of their own.
        F.when(F.col("verdict") == StepVerdict.BEHIND.value, F.array().cast(ArrayType(_DIVERGENCE)))
        .otherwise(F.coalesce("divergences", F.array().cast(ArrayType(_DIVERGENCE)))).alias("divergences"),
        F.coalesce("exact_timing_only", F.lit(False)).alias("exact_timing_only"),
        "views", F.coalesce("returned", F.array().cast("array<string>")).alias("returned"), "reappeared",
        "client", "round")


def quarantine(spark: SparkSession, tables: str) -> DataFrame:
    """The malformed lines of every trace read so far: their file, what is wrong, their text."""
    return (_lines(spark, tables, quarantined=True).join(F.broadcast(files_by_source(spark, tables)), "source")
            .select("file", "problem", LINE))


