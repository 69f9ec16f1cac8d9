"""What can be told of a report's local inputs before Spark starts (half a minute on a busy machine): a path that
names nothing, or files none of which holds a trace line. Inputs on another file system (s3a://, hdfs://…) are
left to Spark, which reads them."""

from __future__ import annotations

import glob
import json
from pathlib import Path

from sqs_conformance.reports.ingest import TRACE_SUFFIX
from sqs_conformance.model.trace_format import REQUIRED


def problem(inputs: list[str]) -> str | None:
    """One line saying why a report of the local `inputs` would have nothing to read, or None."""
    local = [given for given in inputs if "://" not in given]
    files: list[Path] = []
    for given in local:
        matched = [Path(p) for p in glob.glob(given)] or ([Path(given)] if Path(given).exists() else [])
        if not matched:
            return f"no trace files at {given}"
        for path in matched:
            files += sorted(path.rglob(f"*{TRACE_SUFFIX}")) if path.is_dir() else [path]
    if len(local) < len(inputs):
        return None
    if not files:
        return f"no {TRACE_SUFFIX} trace files under {', '.join(inputs)}"
    if not any(_starts_with_a_trace_line(f) for f in files):
        return (f"no trace lines in {', '.join(inputs)}: is it a trace.jsonl written by `run`? "
                f"(no file's first line has the fields {', '.join(REQUIRED[:4])}…)")
    return None


def _starts_with_a_trace_line(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as lines:
            first = next((line for line in lines if line.strip()), "")
        record = json.loads(first)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(record, dict) and all(name in record for name in REQUIRED)

