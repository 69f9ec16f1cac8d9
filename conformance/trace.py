"""Traces: one JSON object per line, one line per step. The schema is documented in the README.

Operations and responses are stored as the target saw them (its ids and handles), so that `check` can replay a
trace through a fresh model exactly as the run did, with any later model.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import IO, Any, Iterator

from model import values

SCHEMA_VERSION = 2  # 2 added `views`, `returned` and `reappeared`
_TYPES = {name: getattr(values, name) for name in (
    "CreateQueue", "SetQueueAttributes", "GetQueueAttributes", "SendMessage", "ReceiveMessage",
    "ChangeMessageVisibility", "ChangeEntry", "ChangeMessageVisibilityBatch", "DeleteMessage", "DeleteEntry",
    "DeleteMessageBatch", "PurgeQueue", "PeekMessage", "Error", "Ok", "SendOk", "ReceivedMessage", "ReceiveOk",
    "PeekOk", "ChangeOk", "EntryFailure", "BatchOk", "AttributesOk", "Unknown",
)}


class TraceError(ValueError):
    """A trace line that cannot be read; the message names the file and line."""


def encode(value: Any) -> Any:
    """An operation or response as plain JSON data, tagged with its type."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def decode(data: Any) -> Any:
    if isinstance(data, dict) and "type" in data and data["type"] in _TYPES:
        cls = _TYPES[data["type"]]
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                raw = decode(data[f.name])
                kwargs[f.name] = tuple(raw) if isinstance(raw, list) else raw
        return cls(**kwargs)
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, dict):
        return {k: decode(v) for k, v in data.items()}
    return data


class TraceWriter:
    """Appends step lines to a file, flushed line by line so an interrupted run loses nothing written. Jobs
    running in threads share one writer: a lock keeps each line whole."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":"), default=str) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_trace(path: Path) -> Iterator[dict[str, Any]]:
    """Step records of a trace file, each with its operation and response decoded."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                record["operation"] = decode(record["operation"])
                record["response"] = decode(record["response"])
                for key in ("run_id", "case", "step", "profile", "target"):
                    record[key]  # noqa: B018 - presence check
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise TraceError(f"{path}:{number}: not a trace step ({type(error).__name__}: {error})") from None
            yield record
