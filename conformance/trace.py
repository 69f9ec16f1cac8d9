"""Traces: one JSON object per line, one line per step. The schema is documented in docs/trace-format.md.

Operations and responses are stored as the target saw them (its ids and handles), so that `check` can replay a
trace through a fresh model exactly as the run did, with any later model.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any
from collections.abc import Callable, Iterator

from sqs_conformance.model.codec import decode, encode  # noqa: F401 (traces are read and written with them)
from sqs_conformance.conformance.columnar import ColumnarCopy
from sqs_conformance.model.trace_format import SCHEMA_VERSION, dumps  # noqa: F401 (the writer's; the format is defined there)


class TraceError(ValueError):
    """A trace line that cannot be read; the message names the file and line."""


class TraceWriter:
    """Appends step lines to a file, flushed line by line so an interrupted run loses nothing written, and keeps
    its columnar copy (conformance/columnar.py) as it goes. Jobs running in threads share one writer: a lock keeps
    each line whole."""

    def __init__(self, path: Path, columnar: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        # What the trace should measure, from one look at it: the copy starts from the lines of that length, and
        # a trace that ends longer than they and this writer's lines had another writer too.
        self._length = path.stat().st_size
        self._copy = ColumnarCopy.start(path, self._length) if columnar else None

    def write(self, record: dict[str, Any]) -> None:
        line = dumps(record) + "\n"
        with self._lock:
            if self._file.closed:  # a thread of a stopped run, left behind by it, answered late: not its step
                return
            self._file.write(line)
            self._file.flush()
            self._length += len(line.encode())
            if self._copy is not None:
                self._keep_copy(self._copy.add, record)

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._file.closed:
            return
        self._file.close()
        if self._copy is not None and self.path.stat().st_size != self._length:
            self._copy.abandon()  # lines of another process are in the trace too: a copy would leave them out
        elif self._copy is not None:
            self._keep_copy(self._copy.finish, self._length)

    def _keep_copy(self, action: Callable[[Any], None], argument: Any) -> None:
        """The columnar copy is a convenience: should writing it fail, it is dropped, never the run."""
        try:
            action(argument)
        except Exception:  # noqa: BLE001 - pyarrow raises its own kinds and OSError alike
            copy, self._copy = self._copy, None
            if copy is not None:
                copy.abandon()


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
