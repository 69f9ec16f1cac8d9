"""Trace files into the `steps` table, incrementally.

Each trace file is read once per version of it (its length and modification time), in one pass, from its
columnar copy where the run left one that covers it (reports/trace_format.py), else from its JSON lines: its lines go
to the partition `source=<id of the file>` of `steps`, the malformed ones under `quarantined=true` with what is
wrong with them. A file that grew (traces are appended to) has its partition replaced; files already read are
not parsed again. The manifest is written last, so a job stopped midway reads the same files again next time,
and nothing is lost.
"""

from __future__ import annotations

import functools
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

from reports import files
from reports.spark import ReportError
from reports.trace_format import COLUMNS_FOLDER, FIELDS, REQUIRED, VERDICTS, columnar_copy

TRACE_SUFFIX = ".jsonl"
CORRUPT = "_corrupt_line"
_COPY_NAME = re.escape(COLUMNS_FOLDER) + r"/[0-9]+\.parquet$"  # what columnar_copy adds to a trace's name
CONCURRENT_WRITERS = 16  # partitions one write task keeps open before Spark falls back to sorting its rows

_DIVERGENCE = StructType([
    StructField("rules", ArrayType(StringType())),
    StructField("expected", StringType()),
    StructField("observed", StringType()),
    StructField("message_ids", ArrayType(StringType())),
])

# The Spark type of each kind of trace field (reports/trace_format.py). Objects whose fields vary with their type
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


@dataclass(frozen=True)
class TraceFile:
    path: str  # fully qualified (file:/…, s3a://…)
    uri: str  # the same, escaped as Spark names a row's file
    length: int
    modified: int

    @property
    def source(self) -> str:
        """The id of its partition; `parse` computes the same in Spark from the name Spark gives the file."""
        return hashlib.sha1(self.uri.encode()).hexdigest()[:16]


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
    text = files.read_text(spark, f"{tables}/_ingested.json")
    if text is None:
        return {}
    try:
        return {d["path"]: TraceFile(**d) for d in json.loads(text)}
    except (ValueError, KeyError, TypeError):
        raise ReportError(f"{tables}/_ingested.json is damaged: remove {tables} to rebuild the tables") from None


def ingest(spark: SparkSession, traces: list[TraceFile], tables: str) -> list[TraceFile]:
    """Parse the traces that are new or changed since the last run into `steps` (malformed lines into its
    `quarantined=true` partitions); returns them. Traces read before and unchanged are left as they are."""
    manifest = read_manifest(spark, tables)
    fresh = [t for t in traces if manifest.get(t.path) != t]
    if not fresh:
        return []
    for trace in fresh:  # a file that grew is read again whole
        files.delete(spark, f"{tables}/steps/source={trace.source}")
    before = set(_partitions(spark, f"{tables}/steps"))
    # One writer open per partition a task meets (a file's good and quarantined lines) instead of sorting every
    # row by its partition first, which cost a third of the parse.
    spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", str(CONCURRENT_WRITERS))
    copies = {t.path: copy for t in fresh if files.exists(spark, copy := columnar_copy(t.path, t.length))}
    lines = [parse(spark, [t.path for t in fresh if t.path not in copies])] if len(copies) < len(fresh) else []
    if copies:
        lines.append(parse_columnar(spark, list(copies.values())))
    (rows_of(functools.reduce(DataFrame.unionByName, lines)).write.mode("append")
     .partitionBy("source", "quarantined").parquet(f"{tables}/steps"))
    unexpected = set(_partitions(spark, f"{tables}/steps")) - before - {t.source for t in fresh}
    if unexpected:  # a partition no re-read of its file could replace: stop before the manifest counts it
        raise ReportError(f"Spark named a trace file otherwise than its listing (partitions {sorted(unexpected)}):"
                          f" a bug of the reports job")
    manifest.update({t.path: t for t in fresh})
    files.write_text(spark, f"{tables}/_ingested.json",
                     json.dumps([asdict(t) for t in manifest.values()], indent=1))
    return fresh


def _partitions(spark: SparkSession, where: str) -> list[str]:
    if not files.exists(spark, where):
        return []
    path, fs = files.file_system(spark, where)
    return [s.getPath().getName().removeprefix("source=") for s in fs.listStatus(path) if s.isDirectory()]


def parse(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Every line of `paths` with the schema, its file, its source (the id of its file) and why it is malformed
    (null when it is not)."""
    return _judged(spark.read.schema(StructType([*TRACE_SCHEMA.fields, StructField(CORRUPT, StringType())]))
                   .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
                   .json(paths)
                   .withColumn("file", _same_file_uri(F.col("_metadata.file_path"))))


def parse_columnar(spark: SparkSession, copies: list[str]) -> DataFrame:
    """As `parse`, from the columnar copies of trace files: each row named after the trace file it copies."""
    trace = F.regexp_replace(F.col("_metadata.file_path"), _COPY_NAME, "")
    return _judged(spark.read.schema(TRACE_SCHEMA).parquet(*copies)
                   .withColumn(CORRUPT, F.lit(None).cast(StringType()))
                   .withColumn("file", _same_file_uri(trace)))


def _judged(raw: DataFrame) -> DataFrame:
    missing = [F.when(F.col(name).isNull(), F.lit(name)) for name in REQUIRED]
    reason = (F.when(F.col(CORRUPT).isNotNull(), F.lit("not a JSON object of the trace schema"))
              .when(F.concat_ws(", ", *missing) != "", F.concat(F.lit("missing "), F.concat_ws(", ", *missing)))
              .when(~F.col("verdict").isin(*VERDICTS), F.concat(F.lit("unknown verdict "), F.col("verdict"))))
    return (raw.withColumn("problem", reason)
            .withColumn("source", F.substring(F.sha1(F.col("file")), 1, 16)))


def rows_of(lines: DataFrame) -> DataFrame:
    """The rows of `steps`: every line, a malformed one marked `quarantined` with its problem and text."""
    bad = F.col("problem").isNotNull()
    return lines.select(
        "source", "file", "run_id", "target", F.coalesce("target_version", F.lit("")).alias("target_version"),
        "profile", F.coalesce("clock", F.lit("virtual")).alias("clock"),
        F.coalesce("tolerance", F.lit(0.0)).alias("tolerance"), "case", "step",
        F.coalesce("final", F.lit(False)).alias("final"),
        F.col("operation.type").alias("op_type"), F.col("operation.queue").alias("queue"),
        F.col("response.type").alias("response_type"),
        F.col("response.code").alias("error_code"), "invoke", "complete",
        (F.col("complete") - F.col("invoke")).alias("latency"), "invoke_wall", "verdict",
        F.coalesce("rules", F.array().cast("array<string>")).alias("rules"),
        # Schema 3 records which rules a step could have caught broken; older traces did not, so none count.
        F.coalesce("decisive", F.array().cast("array<string>")).alias("decisive"),
        # A step behind another's divergence shows its consequences: they are no divergence of their own.
        F.when(F.col("verdict") == "behind", F.array().cast(ArrayType(_DIVERGENCE)))
        .otherwise(F.coalesce("divergences", F.array().cast(ArrayType(_DIVERGENCE)))).alias("divergences"),
        "views", F.coalesce("returned", F.array().cast("array<string>")).alias("returned"), "reappeared",
        bad.alias("quarantined"), "problem",
        F.when(bad, F.substring(F.coalesce(F.col(CORRUPT), F.to_json(F.struct("run_id", "case", "step"))), 1,
                                500)).alias("line"))


def steps(spark: SparkSession, tables: str) -> DataFrame:
    """The good steps of every trace read so far. Partitions written before `decisive` existed read as deciding
    nothing (the schemas are merged, so old and new partitions can sit side by side)."""
    read = spark.read.option("mergeSchema", "true").parquet(f"{tables}/steps")
    if "decisive" not in read.columns:
        read = read.withColumn("decisive", F.array().cast("array<string>"))
    read = read.withColumn("decisive", F.coalesce("decisive", F.array().cast("array<string>")))
    if "queue" not in read.columns:  # partitions written before the queue was kept
        read = read.withColumn("queue", F.lit(None).cast("string"))
    return read.where(~_quarantined()).drop("quarantined", "problem", "line")


def quarantine(spark: SparkSession, tables: str) -> DataFrame:
    """The malformed lines of every trace read so far: their file, what is wrong, their text."""
    return spark.read.parquet(f"{tables}/steps").where(_quarantined()).select("file", "problem", "line")


def _quarantined():
    return F.col("quarantined").cast("boolean")  # a partition column: read back as text
