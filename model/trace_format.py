"""The trace line: the one definition of its fields. The engine's writer is checked against it, the report job's
Spark schema is built from it, the test fixtures fill their lines from it, and a test holds docs/trace-format.md's table
to it. Each field has a kind (how it is read), the schema version that added it, and whether a line without it is
malformed."""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqs_conformance.model.verdicts import StepVerdict

SCHEMA_VERSION = 7  # 2 added `views`, `returned` and `reappeared`; 3 `decisive`; 4 `counted`; 5 the
# verdict `behind`; 6 `says` and `exact_timing_only`; 7 `client` and `round` (concurrent cases), the verdict
# `unordered`

# The run id of a concurrent finding's history (<out>/concurrent/<RULE>/history.jsonl): a copy of steps its run's
# own trace already holds, read by a report for its minimal case and never counted again in its tallies.
FINDING_RUN_ID = "finding"

KINDS = ("int", "long", "double", "bool", "string", "strings", "divergences", "json", "reappeared", "operation",
         "response")


@dataclass(frozen=True)
class TraceField:
    name: str
    kind: str  # one of KINDS
    since: int = 1  # the schema version that added it
    required: bool = False  # a line without it is quarantined by the report job


FIELDS: tuple[TraceField, ...] = (
    TraceField("schema", "int"),
    TraceField("run_id", "string", required=True),
    TraceField("target", "string", required=True),
    TraceField("target_version", "string"),
    TraceField("profile", "string", required=True),
    TraceField("clock", "string"),
    TraceField("tolerance", "double"),
    TraceField("case", "long", required=True),
    TraceField("step", "long", required=True),
    TraceField("final", "bool"),
    TraceField("counted", "bool", since=4),
    TraceField("operation", "operation", required=True),
    TraceField("says", "string", since=6),
    TraceField("response", "response", required=True),
    TraceField("invoke", "double", required=True),
    TraceField("complete", "double", required=True),
    TraceField("invoke_wall", "double"),
    TraceField("complete_wall", "double"),
    TraceField("verdict", "string", required=True),
    TraceField("rules", "strings"),
    TraceField("decisive", "strings", since=3),
    TraceField("divergences", "divergences"),
    TraceField("notes", "divergences"),
    TraceField("exact_timing_only", "bool", since=6),
    TraceField("views", "json", since=2),
    TraceField("returned", "strings", since=2),
    TraceField("reappeared", "reappeared", since=2),
    # A concurrent case's (`run --clients N`): the client that sent the step, and the workload's round; a step's
    # number is then its place in the history by when it was sent. Null on a single client's line.
    TraceField("client", "int", since=7),
    TraceField("round", "int", since=7),
)
NAMES = tuple(f.name for f in FIELDS)
REQUIRED = tuple(f.name for f in FIELDS if f.required)
VERDICTS = tuple(v.value for v in StepVerdict)
# A rule's minimal case, wherever one is picked (the run's findings, the report's divergences): among the steps that
# reported its divergence (not `behind` another's), the least of these fields, in this order: one a real clock's
# timing would still show before one only exact (virtual) time shows, as `confirm` and RULE.py replay on a real
# clock; then the fewest steps up to it; then the least time in the case before it (its waits, on a virtual clock
# nothing else); then the first seen.
MINIMAL_CASE_ORDER = ("exact_timing_only", "step", "invoke", "invoke_wall")

# --- the columnar copy ------------------------------------------------------------------------------------------
# A run also writes its trace as Parquet (conformance/trace.py), which the reports job reads instead of parsing the
# JSON lines (reports/ingest.py). The copy is named after the trace's length in bytes when it was finished: it is
# used only while the trace still has that length, so a trace appended to since (or a copy left half-written)
# is parsed from its JSON lines, which stay the interchange format.
COLUMNS_FOLDER = ".columns"  # trace.jsonl → trace.jsonl.columns/<length>.parquet


def columnar_copy(trace: str, length: int) -> str:
    return f"{trace}{COLUMNS_FOLDER}/{length}.parquet"


def dumps(value: object) -> str:
    """JSON as a trace line writes it: its `json` fields read back as this same text from either form."""
    return json.dumps(value, separators=(",", ":"), default=str)


def arrow_schema():
    """The columnar copy's schema: the same fields and types as the reports job's Spark schema of a line."""
    import pyarrow as pa

    divergence = pa.struct([("rules", pa.list_(pa.string())), ("expected", pa.string()),
                            ("observed", pa.string()), ("message_ids", pa.list_(pa.string()))])
    kinds = {
        "int": pa.int32(), "long": pa.int64(), "double": pa.float64(), "bool": pa.bool_(), "string": pa.string(),
        "strings": pa.list_(pa.string()), "divergences": pa.list_(divergence), "json": pa.string(),
        "reappeared": pa.list_(pa.struct([("message", pa.string()), ("deadline", pa.float64()),
                                          ("lateness", pa.float64())])),
        "operation": pa.struct([("type", pa.string()), ("queue", pa.string())]),
        "response": pa.struct([("type", pa.string()), ("code", pa.string())]),
    }
    return pa.schema([pa.field(f.name, kinds[f.kind]) for f in FIELDS])


def columnar_row(record: dict) -> dict:
    """A trace record as its columnar copy holds it: what the reports job keeps of each field, no more (an
    operation's and a response's other fields, and objects' unknown keys, are left to the JSON line). A record the
    reports job would quarantine raises ValueError: a copy holds good lines only, as the job copies it unjudged."""
    missing = [name for name in REQUIRED if record.get(name) is None]
    if missing or record["verdict"] not in VERDICTS:
        raise ValueError(f"a malformed trace record (missing {missing}, verdict {record.get('verdict')!r})")
    return {f.name: _COLUMNAR[f.kind](record[f.name]) if record.get(f.name) is not None else None for f in FIELDS}


def _keep(*keys: str):
    return lambda value: {k: value.get(k) for k in keys}


def _each(*keys: str):
    return lambda values: [{k: v.get(k) for k in keys} for v in values]


_COLUMNAR = {
    "int": int, "long": int, "double": float, "bool": bool, "string": str, "strings": list, "json": dumps,
    "divergences": _each("rules", "expected", "observed", "message_ids"),
    "reappeared": _each("message", "deadline", "lateness"),
    "operation": _keep("type", "queue"), "response": _keep("type", "code"),
}
