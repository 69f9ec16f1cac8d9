"""Trace lines for tests, filled from the one definition of the format (model/trace_format.py): a field added
there appears in every test line, and a test naming a field that is not there fails."""

from typing import Any

from sqs_conformance.model.trace_format import FIELDS, NAMES, SCHEMA_VERSION

_BY_KIND: dict[str, Any] = {
    "int": 0, "long": 0, "double": 0.0, "bool": False, "string": "", "strings": [], "divergences": [], "json": {},
    "reappeared": [], "operation": {"type": "GetQueueAttributes", "queue": "q"}, "response": {"type": "Ok"},
}
_NEUTRAL: dict[str, Any] = {"counted": True, "verdict": "ok"}


def trace_line(schema: int = SCHEMA_VERSION, **values: Any) -> dict[str, Any]:
    """A line of that schema version: the fields it had, each as given or at a neutral value."""
    unknown = set(values) - set(NAMES)
    if unknown:
        raise KeyError(f"not fields of a trace line: {sorted(unknown)}")
    record = {f.name: values.get(f.name, _NEUTRAL.get(f.name, _BY_KIND[f.kind])) for f in FIELDS
              if f.since <= schema}
    record["schema"] = schema
    return record
