"""A report's work, told before Spark starts, so that its local driver JVM gets the compiler that suits it, and a
small report's queries run interpreted (reports/spark.py).

A local report's JVM runs the driver and every task. Most of a report of up to a few million lines is the first run
of each of its queries, and there the optimising compiler (C2) spends more CPU compiling than its code saves on two
cores; parsing hundreds of MB of JSON lines, or deriving the tables from many millions of lines, are the hot loops
it pays for. The estimate reads the local file system only, as `ingest.find_traces` and `ingest.ingest` would see
it; where it cannot tell (an input or the tables on another file system, a glob it does not read as Hadoop does),
it says so, and the JVM gets both compilers and generated code. A wrong estimate costs time, never a result: neither
the compiler nor generated code changes what a query computes (tests/reports/test_pipeline.py counts with both).
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass
from pathlib import Path

from sqs_conformance.reports.ingest import LINES, MANIFEST, TRACE_SUFFIX
from sqs_conformance.model.trace_format import columnar_copy

# A local driver JVM compiles with C1 only (-XX:TieredStopAtLevel=1) up to these. Measured with
# benchmarks/pipeline.py's corpora, cold, one report per JVM, C1 only against both compilers: JSON lines only,
# 1e4 / 1e5 / 3e5 / 1e6 lines (5 / 52 / 156 / 516 MB) 17.2 / 19.5 / 23.4 / 42.6 s against 18.9 / 23.7 / 26.4 /
# 35.4 s, even near 260 MB; columnar copies (not parsed), 1e6 / 3e6 / 1e7 lines 16.7 / 23.7 / 57.0 s against
# 21.4 / 28.2 / 43.2 s, even near 4.7 million lines. Each bound is about half the measured break-even point.
QUICK_JIT_MAX_JSON_BYTES = 128 * 2**20
QUICK_JIT_MAX_LINES = 2_000_000
# And its queries run interpreted, no code generated for them (reports/spark.py's INTERPRETED), up to this many
# lines: compiling each query's code is much of a small report, and evaluating it interpreted costs more only past
# some tens of thousands of lines. Measured cold, one report per JVM, local[2], generated / interpreted (pairs):
# 1,000 lines with copies 8.1-8.5 / 7.0-7.6 s; 20,000 lines with copies 9.3 / 8.2 and 8.7 / 8.3 s, JSON lines only
# 10.4 / 9.6 and 10.7 / 10.4 s; 100,000 lines with copies 9.1 / 9.5 and 9.4 / 10.2 s (the job, session apart).
INTERPRETED_MAX_LINES = 20_000


@dataclass(frozen=True)
class Workload:
    json_bytes: int  # JSON lines to parse: new or changed traces without a columnar copy
    lines: int  # lines the tables hold once they are read (at most: a trace read again replaces its lines)
    # Past either bound the counting stops: the answer is known, and each further file read is start-up time.


def quick_jit(work: Workload | None) -> bool:
    """Whether a local driver JVM doing `work` (None: unknown) compiles with C1 only."""
    return work is not None and work.json_bytes <= QUICK_JIT_MAX_JSON_BYTES and work.lines <= QUICK_JIT_MAX_LINES


def interpreted(work: Workload | None) -> bool:
    """Whether a local report doing `work` (None: unknown) runs its queries interpreted. Only where C1 alone is
    chosen as well: past that the lines are no longer counted."""
    return quick_jit(work) and work is not None and work.lines <= INTERPRETED_MAX_LINES


def session_options(inputs: list[str], out_dir: str) -> dict[str, bool]:
    """What `reports.spark.session` is told of a report of `inputs` into `out_dir`: its compiler, and whether its
    queries run interpreted."""
    work = workload(inputs, out_dir)
    return {"quick_jit": quick_jit(work), "interpreted": interpreted(work)}


def workload(inputs: list[str], out_dir: str) -> Workload | None:
    """What a report of `inputs` into `out_dir` will do: the JSON lines it will parse (local trace files with no
    columnar copy at their length that its tables have not read at that length and time already), and the lines
    its tables will hold. None where that cannot be told from the local file system."""
    import pyarrow

    try:
        return _local_workload(inputs, Path(out_dir) / "tables") if not _elsewhere(out_dir) else None
    except (OSError, ValueError, pyarrow.ArrowException):  # a file gone or damaged meanwhile: the job will say
        return None


def _local_workload(inputs: list[str], tables: Path) -> Workload | None:
    read = _already_read(tables / MANIFEST)
    if read is None:
        return None
    json_bytes, lines = 0, _rows(tables.glob(f"{LINES}/*/*/*.parquet"))
    for given in inputs:
        traces = _local_traces(given)
        if traces is None:
            return None
        for trace in traces:
            if not quick_jit(Workload(json_bytes, lines)):
                return Workload(json_bytes, lines)
            status = trace.stat()
            if read.get(os.path.realpath(trace)) == (status.st_size, status.st_mtime_ns // 1_000_000):
                continue
            copy = Path(columnar_copy(str(trace), status.st_size))
            if copy.exists():
                lines += _rows([copy])
                continue
            json_bytes += status.st_size
            if json_bytes <= QUICK_JIT_MAX_JSON_BYTES:
                lines += _line_count(trace)
    return Workload(json_bytes, lines)


def _elsewhere(path: str) -> bool:
    """On a file system other than the local one, or named in a way Hadoop reads otherwise than Python's glob (a
    scheme, `{a,b}`, `[^a]`, an escape)."""
    return "://" in path or path.startswith("file:") or any(only_hadoop in path for only_hadoop in ("{", "[^", "\\"))


def _local_traces(given: str) -> list[Path] | None:
    """The trace files `find_traces` would find for one input: the file, the `*.jsonl` under a folder, or what a
    glob matches."""
    if _elsewhere(given):
        return None
    found: list[Path] = []
    for match in sorted(glob.glob(given)) if glob.has_magic(given) else [given]:
        path = Path(match)
        if path.is_dir():
            found += [p for p in path.rglob(f"*{TRACE_SUFFIX}") if p.is_file()]
        elif path.is_file():
            found.append(path)
    return found


def _already_read(manifest: Path) -> dict[str, tuple[int, int]] | None:
    """Each local trace the tables have read, by its path: its length and modification time (ms) then. None for a
    manifest that cannot be read (the job will say so)."""
    if not manifest.exists():
        return {}
    try:
        entries = json.loads(manifest.read_text())
        return {os.path.realpath(_local_path(e["path"])): (e["length"], e["modified"]) for e in entries
                if e["path"].startswith("file:")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _local_path(uri: str) -> str:
    """`file:/x` or `file:///x` as a path (Hadoop writes both)."""
    return "/" + uri.removeprefix("file:").lstrip("/")


def _rows(parquet_files) -> int:
    """Rows in these Parquet files, from their footers; no more footers are read once past the lines' bound."""
    import pyarrow.parquet as pq

    rows = 0
    for path in parquet_files:
        rows += pq.ParquetFile(path).metadata.num_rows
        if rows > QUICK_JIT_MAX_LINES:
            break
    return rows


def _line_count(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: lines.read(1 << 20), b""))
