"""The columnar copy of a trace (model/trace_format.py): Parquet written beside the JSON lines as they are
written, so that the reports job reads columns instead of parsing every line again.

The copy is a convenience, the JSON lines the record: anything that goes wrong with the copy drops it, and the
reports job then parses the lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqs_conformance.model.trace_format import arrow_schema, columnar_copy, columnar_row

ROWS_PER_GROUP = 10_000  # rows held in memory before they are written as one Parquet row group


class ColumnarCopy:
    """Rows appended as the trace's lines are; `finish` names the copy after the trace's final length."""

    def __init__(self, trace: Path) -> None:
        import pyarrow.parquet as pq

        self.trace = trace
        self.folder = Path(columnar_copy(str(trace), 0)).parent
        self.folder.mkdir(parents=True, exist_ok=True)
        self.partial = self.folder / f"partial-{os.getpid()}-{id(self)}.parquet"  # its own, should two write
        self.schema = arrow_schema()
        self.rows: list[dict[str, Any]] = []
        self.writer = pq.ParquetWriter(self.partial, self.schema)

    @classmethod
    def start(cls, trace: Path, length: int) -> ColumnarCopy | None:
        """A copy for a trace of `length` bytes about to be appended to: with the rows of the lines already there,
        which only a copy finished at that length has; without one, no copy (the lines will be parsed)."""
        earlier = Path(columnar_copy(str(trace), length))
        if length and not earlier.exists():
            return None
        copy = None
        try:
            copy = cls(trace)
            if length:
                import pyarrow.parquet as pq

                copy.writer.write_table(pq.read_table(earlier, schema=copy.schema))
        except Exception:  # noqa: BLE001 - pyarrow raises its own kinds and OSError; the lines are the record
            if copy is not None:
                copy.abandon()
            return None
        return copy

    def add(self, record: dict[str, Any]) -> None:
        self.rows.append(columnar_row(record))
        if len(self.rows) >= ROWS_PER_GROUP:
            self._flush()

    def finish(self, length: int) -> None:
        """Write what is held and the footer, then give the copy its name: the trace's length now."""
        self._flush()
        self.writer.close()
        done = Path(columnar_copy(str(self.trace), length))
        for stale in self.folder.glob("[0-9]*.parquet"):  # copies of the trace at earlier lengths
            stale.unlink(missing_ok=True)
        self.partial.rename(done)

    def abandon(self) -> None:
        """Drop the copy; never fails (what failed before is why it is dropped)."""
        try:
            self.writer.close()
        except Exception:  # noqa: BLE001, S110 - a writer that failed may fail again on closing
            pass
        self.partial.unlink(missing_ok=True)

    def _flush(self) -> None:
        if self.rows:
            import pyarrow as pa

            self.writer.write_table(pa.Table.from_pylist(self.rows, schema=self.schema))
            self.rows = []
