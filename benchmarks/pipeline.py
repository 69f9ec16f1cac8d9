"""The reports job on synthetic trace corpora, against DuckDB on the same input in the same session.

For each corpus size, once for traces as `run` writes them (JSON lines and their columnar copy) and once for JSON
lines only (traces written elsewhere, or appended to since their copy), it prints:
- end to end: `sqs-conformance report CORPUS --out DIR` as a user runs it, JVM start included; the same with
  `--jvm-archive` (its class archive built once before, by a first report on a small corpus); then the same
  command again, when the tables already hold the corpus (what a CI job refreshing the report pays);
- steady state: the same job in an already started and warmed SparkSession (JSON parsing, the tables, the
  report), events/s, and the time of each of its phases; then the same job once more on the same input into a
  new folder (everything read and built again), when the JVM has compiled the code that size of input runs hot
  (the warm-up job is too small for that);
- the DuckDB baseline: the same input (the lines read with an explicit schema, or the copies) into Parquet steps
  and the matrix table;
- steady ratio = Spark events/s ÷ DuckDB events/s, for both Spark jobs;
- a rerun with nothing new (the tables are kept: only the derived tables and the report are rebuilt).

    pip install -e '.[bench]'
    python benchmarks/pipeline.py [--events 100000 1000000] [--files 8] [--master local[2]]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.trace import TraceWriter  # noqa: E402
from model.rules import rules_for  # noqa: E402
from reports.trace_format import COLUMNS_FOLDER  # noqa: E402

TARGETS = [("moto", "5.2.1", "virtual"), ("localstack", "4.13.1", "shifted"), ("aws", "", "real")]
OPERATIONS = ["SendMessage", "ReceiveMessage", "ChangeMessageVisibility", "DeleteMessage", "CreateQueue"]


def corpus(folder: Path, events: int, files: int, seed: int = 1, columnar: bool = True) -> None:
    """`events` trace lines of the engine's schema, spread over `files` runs: about 2% divergences and one
    reappearance in ten receives, with the rule ids of the catalogue. Written by the run's own trace writer, with
    its columnar copy (as `run` leaves them) or without (traces from elsewhere: JSON lines only)."""
    rng = random.Random(seed)
    rules = [r.id for r in rules_for("sqs-standard")]
    folder.mkdir(parents=True)
    per_file = events // files
    for f in range(files):
        target, version, clock = TARGETS[f % len(TARGETS)]
        run_id = f"run{f:04d}"
        out = TraceWriter(folder / f"{run_id}.jsonl", columnar=columnar)
        try:
            for i in range(per_file):
                case, index = divmod(i, 20)
                op = rng.choice(OPERATIONS)
                diverges = rng.random() < 0.02
                rule = rng.choice(rules)
                invoke = index * 1.5
                record = {
                    "schema": 2, "run_id": run_id, "target": target, "target_version": version,
                    "profile": "sqs-standard", "clock": clock, "tolerance": 0.5, "case": case, "step": index,
                    "final": diverges and rng.random() < 0.3, "operation": {"type": op, "queue": "q"},
                    "response": {"type": "Error" if diverges else "Ok"}, "invoke": invoke,
                    "complete": invoke + rng.expovariate(200), "invoke_wall": 1.8e9 + i, "complete_wall": 1.8e9 + i,
                    "verdict": "divergence" if diverges else "ok", "rules": [rule, rng.choice(rules)],
                    "divergences": [{"rules": [rule], "expected": "ChangeOk", "observed": "error X",
                                     "message_ids": ["m1"]}] if diverges else [],
                    "notes": [], "views": {"m1": [["receipt", invoke + 30]], "m2": [["none", 0.0]]},
                    "returned": ["m1"] if op == "ReceiveMessage" else [],
                    "reappeared": [{"message": "m1", "deadline": invoke - 0.3, "lateness": rng.expovariate(4)}]
                    if op == "ReceiveMessage" and rng.random() < 0.1 else [],
                }
                out.write(record)
        finally:
            out.close()


def end_to_end(folder: Path, out: Path, master: str | None, archive: Path | None = None) -> float:
    command = [sys.executable, "-m", "conformance", "report", str(folder), "--out", str(out)]
    if master:
        command += ["--master", master]
    if archive:
        command += ["--jvm-archive", str(archive)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"the report job failed: {done.stderr.strip().splitlines()[-1]}")
    return time.perf_counter() - start


def steady(spark, folder: Path, out: Path, phases: dict[str, float] | None = None) -> float:
    from reports.job import build

    start = time.perf_counter()
    build(spark, [str(folder)], str(out), phases)
    return time.perf_counter() - start


def duckdb_baseline(folder: Path, out: Path, columnar: bool) -> float:
    """What the job's first stage and its matrix do, in DuckDB: read the same input as the job (the JSON lines
    with an explicit schema, or the columnar copies), keep Parquet, count rule × target."""
    import duckdb

    out.mkdir(parents=True)
    columns = {"run_id": "VARCHAR", "target": "VARCHAR", "target_version": "VARCHAR", "profile": "VARCHAR",
               "clock": "VARCHAR", "case": "BIGINT", "step": "BIGINT", "final": "BOOLEAN",
               "operation": "STRUCT(type VARCHAR)", "response": "STRUCT(type VARCHAR)", "invoke": "DOUBLE",
               "complete": "DOUBLE", "invoke_wall": "DOUBLE", "verdict": "VARCHAR", "rules": "VARCHAR[]",
               "divergences": "STRUCT(rules VARCHAR[], expected VARCHAR, observed VARCHAR)[]",
               "views": "JSON", "returned": "VARCHAR[]",
               "reappeared": "STRUCT(message VARCHAR, deadline DOUBLE, lateness DOUBLE)[]"}
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    start = time.perf_counter()
    con = duckdb.connect()
    source = (f"read_parquet('{folder}/*{COLUMNS_FOLDER}/*.parquet')" if columnar else
              f"read_json('{folder}/*.jsonl', format='newline_delimited', columns={spec}, ignore_errors=true)")
    con.execute(f"CREATE TABLE steps AS SELECT * FROM {source}")
    con.execute(f"COPY steps TO '{out}/steps.parquet' (FORMAT parquet)")
    con.execute(f"""COPY (
        SELECT target, target_version, profile, rule, count(*) AS exercised,
               sum(CASE WHEN list_contains(diverged, rule) THEN 1 ELSE 0 END) AS diverging
        FROM (SELECT target, target_version, profile, unnest(list_distinct(list_concat(rules, diverged))) AS rule,
                     diverged
              FROM (SELECT *, list_transform(divergences, lambda d: d.rules[1]) AS diverged FROM steps))
        GROUP BY ALL) TO '{out}/matrix.parquet' (FORMAT parquet)""")
    con.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--master", default=None, help="e.g. local[2] (default: local[*])")
    args = parser.parse_args()
    try:
        import duckdb  # noqa: F401
    except ImportError:
        sys.exit("the baseline needs DuckDB: pip install -e '.[bench]'")
    from reports.spark import session

    spark = session(args.master)
    work = Path(tempfile.mkdtemp(prefix="pipeline-bench-"))
    try:
        # Steady state means a warm JVM: one small job first, so that class loading and JIT are not timed.
        corpus(work / "warm-up", 1000, 2)
        steady(spark, work / "warm-up", work / "warm-up-out")
        archive = work / "jvm-archive"  # built once here, as a user's first `report --jvm-archive` builds it
        end_to_end(work / "warm-up", work / "warm-up-archive", args.master, archive)
        for events in args.events:
            folder, lines_only = work / f"corpus-{events}", work / f"corpus-{events}-json"
            corpus(folder, events, args.files)
            corpus(lines_only, events, args.files, columnar=False)
            size = sum(f.stat().st_size for f in folder.glob("*.jsonl")) / 1e6
            print(f"{events:>9,} events ({size:,.0f} MB of JSON lines in {args.files} files)", flush=True)
            for name, source, columnar in (("as `run` writes them (JSON lines and columnar copy)", folder, True),
                                           ("JSON lines only (traces from elsewhere)", lines_only, False)):
                print(f"  {name}:")
                e2e = end_to_end(source, work / f"e2e-{events}-{columnar}", args.master)
                print(f"    end to end (JVM start included): {e2e:6.1f} s", flush=True)
                shared = end_to_end(source, work / f"e2e-{events}-{columnar}-archive", args.master, archive)
                print(f"    the same with --jvm-archive:     {shared:6.1f} s  (its archive built before)", flush=True)
                again = end_to_end(source, work / f"e2e-{events}-{columnar}", args.master)
                print(f"    the same again, tables kept:     {again:6.1f} s  (nothing new to parse)", flush=True)
                phases: dict[str, float] = {}
                warm = steady(spark, source, work / f"steady-{events}-{columnar}", phases)
                print(f"    steady state, Spark:              {warm:6.1f} s  {events / warm:>10,.0f} events/s",
                      flush=True)
                for phase, seconds in phases.items():
                    print(f"      {phase + ':':34s}{seconds:6.1f} s  ({seconds / warm:4.0%})")
                again = steady(spark, source, work / f"steady-{events}-{columnar}-again")
                print(f"    the same job again (JIT-warm):    {again:6.1f} s  {events / again:>10,.0f} events/s")
                rerun = steady(spark, source, work / f"steady-{events}-{columnar}")
                baseline = duckdb_baseline(source, work / f"duckdb-{events}-{columnar}", columnar)
                print(f"    baseline, DuckDB, same input:     {baseline:6.1f} s  {events / baseline:>10,.0f} events/s")
                print(f"    steady ratio Spark / DuckDB:      {baseline / warm:6.2f}  (again: {baseline / again:.2f})")
                print(f"    rerun with nothing new:           {rerun:6.1f} s", flush=True)
            shutil.rmtree(folder)
            shutil.rmtree(lines_only)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
