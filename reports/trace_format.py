"""The trace line: the one definition of its fields. The engine's writer is checked against it, the report job's
Spark schema is built from it, the test fixtures fill their lines from it, and a test holds the README's table to
it. Each field has a kind (how it is read), the schema version that added it, and whether a line without it is
malformed."""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 5  # 2 added `views`, `returned` and `reappeared`; 3 `decisive`; 4 `counted`; 5 the
# verdict `behind`

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
    TraceField("views", "json", since=2),
    TraceField("returned", "strings", since=2),
    TraceField("reappeared", "reappeared", since=2),
)
NAMES = tuple(f.name for f in FIELDS)
REQUIRED = tuple(f.name for f in FIELDS if f.required)
VERDICTS = ("ok", "note", "unknown", "divergence", "behind")
