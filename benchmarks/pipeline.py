"""The reports job on synthetic trace corpora, against DuckDB on the same input in the same session.

For each corpus size, once for traces as `run` writes them (JSON lines and their columnar copy) and once for JSON
lines only (traces written elsewhere, or appended to since their copy), it prints:
- end to end: `sqs-conformance report CORPUS --out DIR` as a user runs it, JVM start included; the same with
  `--jvm-archive` (its class archive built once before, by a first report on a small corpus); then the same
  command again, when the tables already hold the corpus (what a CI job refreshing the report pays);
- steady state: the same job in an already started and warmed SparkSession (JSON parsing, the tables, the
  report), events/s, and the time of each of its phases: its first run on that input; then the same job AGAIN
  more times on the same input, each into a new folder (everything read and built again), the fastest of them
  when the JVM has compiled the code that size of input runs hot (the warm-up job is too small for that);
- the DuckDB baseline: the same input (the lines read with an explicit schema, or the copies) into Parquet steps
  and a count of rule × target (issue 16's baseline); then DuckDB doing the job's whole work (the three tables as
  the job defines them, and the report's reads), checked to give the same tables as Spark's; each the faster of
  two runs;
- steady ratio = Spark events/s ÷ DuckDB events/s, for the first run and the fastest again, against each baseline;
- a rerun with nothing new (the tables are kept: only the derived tables and the report are rebuilt).

    pip install -e '.[bench]'
    python3 -m benchmarks.pipeline [--events 100000 1000000] [--files 8] [--master local[2]]
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

from sqs_conformance.conformance.trace import TraceWriter  # noqa: E402
from sqs_conformance.model.rules import rules_for  # noqa: E402
from sqs_conformance.model.trace_format import COLUMNS_FOLDER, MINIMAL_CASE_ORDER  # noqa: E402
from tests.cli import SQS_CONFORMANCE

AGAIN = 6  # runs of the job again in the warm session after its first on a corpus (the JIT takes some)
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
    command = [*SQS_CONFORMANCE, "report", str(folder), "--out", str(out)]
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
    from sqs_conformance.reports.job import build

    start = time.perf_counter()
    build(spark, [str(folder)], str(out), phases)
    return time.perf_counter() - start


def duckdb_baseline(folder: Path, out: Path, columnar: bool, whole_job: bool = False) -> float:
    """What the job's first stage and its matrix do, in DuckDB: read the same input as the job (the JSON lines
    with an explicit schema, or the columnar copies), keep Parquet, count rule × target. With `whole_job`, all the
    job does after that too (`duckdb_tables`): the three tables as the job defines them, and the report's reads."""
    import duckdb

    out.mkdir(parents=True, exist_ok=True)  # a second run writes over the first
    columns = {"run_id": "VARCHAR", "target": "VARCHAR", "target_version": "VARCHAR", "profile": "VARCHAR",
               "clock": "VARCHAR", "case": "BIGINT", "step": "BIGINT", "exact_timing_only": "BOOLEAN",
               "operation": "STRUCT(type VARCHAR, queue VARCHAR)", "response": "STRUCT(type VARCHAR, code VARCHAR)",
               "invoke": "DOUBLE", "complete": "DOUBLE", "invoke_wall": "DOUBLE", "verdict": "VARCHAR",
               "rules": "VARCHAR[]", "decisive": "VARCHAR[]",
               "divergences": "STRUCT(rules VARCHAR[], expected VARCHAR, observed VARCHAR)[]",
               "views": "JSON", "returned": "VARCHAR[]",
               "reappeared": "STRUCT(message VARCHAR, deadline DOUBLE, lateness DOUBLE)[]"}
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    start = time.perf_counter()
    con = duckdb.connect()
    source = (f"read_parquet('{folder}/*{COLUMNS_FOLDER}/*.parquet', filename=true)" if columnar else
              f"read_json('{folder}/*.jsonl', format='newline_delimited', columns={spec}, ignore_errors=true, "
              "filename=true)")
    con.execute(f"CREATE TABLE steps AS SELECT * FROM {source}")
    con.execute(f"COPY steps TO '{out}/steps.parquet' (FORMAT parquet)")
    if whole_job:
        duckdb_tables(con, out)
    else:
        con.execute(f"""COPY (
            SELECT target, target_version, profile, rule, count(*) AS exercised,
                   sum(CASE WHEN list_contains(diverged, rule) THEN 1 ELSE 0 END) AS diverging
            FROM (SELECT target, target_version, profile, unnest(list_distinct(list_concat(rules, diverged))) AS rule,
                         diverged
                  FROM (SELECT *, list_transform(divergences, lambda d: d.rules[1]) AS diverged FROM steps))
            GROUP BY ALL) TO '{out}/matrix.parquet' (FORMAT parquet)""")
    con.close()
    return time.perf_counter() - start


def duckdb_tables(con, out: Path) -> None:
    """The job's work after its lines, in DuckDB on the `steps` table: `matrix`, `divergences` and `timing` as
    reports/tables.py defines them (every count, the minimal case of each divergence, the percentiles and the
    histograms' counts), written to Parquet, then what the report reads (the three tables, the minimal cases'
    steps). The quarantine is left out: a copy holds none, and `ignore_errors` keeps no malformed line."""
    target, clock = "target, target_version, profile", "target, target_version, clock"
    minimal_order = ", ".join(MINIMAL_CASE_ORDER)  # the order the job picks a divergence's minimal case in
    con.execute(f"""CREATE VIEW good AS SELECT filename AS source, run_id, {target},
        coalesce(clock, 'virtual') AS clock, "case", step, coalesce(exact_timing_only, false) AS exact_timing_only,
        invoke_wall,
        "complete" - invoke AS latency, verdict,
        coalesce(rules, []) AS rules, coalesce(decisive, []) AS decisive,
        CASE WHEN verdict = 'behind' THEN [] ELSE coalesce(divergences, []) END AS divergences, reappeared,
        operation.type AS op_type, operation.queue AS queue, response.type AS response_type,
        response.code AS error_code, invoke, "complete", views, returned FROM steps""")
    con.execute(f"""COPY (
        WITH kinds AS (SELECT {target}, verdict, list_transform(divergences, lambda d: d.rules[1]) AS diverged, rules,
                              decisive, count(*) AS steps FROM good GROUP BY ALL),
        per_rule AS (SELECT *, list_contains(diverged, rule) AS diverging FROM (
                         SELECT *, unnest(list_distinct(list_concat(rules, diverged))) AS rule FROM kinds))
        SELECT {target}, rule, sum(steps) AS exercised,
               sum(steps) FILTER (WHERE diverging OR (list_contains(decisive, rule) AND verdict != 'unknown'))
                   AS decisive,
               sum(steps) FILTER (WHERE diverging) AS diverging,
               sum(steps) FILTER (WHERE NOT diverging AND verdict = 'unknown') AS uncertain,
               sum(steps) FILTER (WHERE NOT diverging AND verdict NOT IN ('unknown', 'behind')) AS conforming
        FROM per_rule GROUP BY ALL) TO '{out}/matrix.parquet' (FORMAT parquet)""")
    con.execute(f"""COPY (
        WITH seen AS (SELECT {target}, source, run_id, "case", {minimal_order}, d.rules[1] AS rule,
                             d.expected, d.observed
                      FROM (SELECT *, unnest(divergences) AS d FROM good)),
        lengths AS (SELECT source, run_id, "case", count(*) AS case_steps FROM good
                    SEMI JOIN (SELECT DISTINCT source, run_id, "case" FROM seen) USING (source, run_id, "case")
                    GROUP BY ALL),
        ranked AS (SELECT *, row_number() OVER (PARTITION BY {target}, rule ORDER BY {minimal_order}, source, run_id,
                                                "case", case_steps) AS rank
                   FROM seen JOIN lengths USING (source, run_id, "case"))
        SELECT {target}, rule, to_timestamp(min(invoke_wall)) AS first_seen,
               to_timestamp(max(invoke_wall)) AS last_seen,
               count(DISTINCT run_id) AS runs, count(*) AS occurrences,
               any_value({{'file': source, 'run_id': run_id, 'case': "case", 'step': step, 'case_steps': case_steps}})
                   FILTER (WHERE rank = 1) AS minimal_case,
               any_value(expected) FILTER (WHERE rank = 1) AS expected,
               any_value(observed) FILTER (WHERE rank = 1) AS observed
        FROM ranked GROUP BY ALL) TO '{out}/divergences.parquet' (FORMAT parquet)""")

    def bars(column: str, last: int) -> str:
        return "[" + ", ".join(f"count(*) FILTER (WHERE {column} = {i})" for i in range(last + 1)) + "]"

    latency_bar = "least(greatest(ceil(log2(greatest(latency * 1000, 1.0))), 0), 24)"
    con.execute(f"""CREATE TABLE latency AS SELECT {clock}, count(*) AS steps,
        approx_quantile(latency, [0.5, 0.95, 0.99]) AS latency,
        {bars(latency_bar, 24)} AS latency_bars, list(DISTINCT run_id) AS run_ids, list(DISTINCT source) AS sources
        FROM good GROUP BY ALL""")
    lateness_bar = "least(floor(greatest(lateness, 0.0) / 0.25), 20)"
    con.execute(f"""CREATE TABLE lateness AS SELECT {clock}, count(*) AS reappearances,
        approx_quantile(lateness, [0.5, 0.95, 0.99]) AS lateness, {bars(lateness_bar, 20)} AS lateness_bars
        FROM (SELECT {clock}, unnest(reappeared).lateness AS lateness FROM good) GROUP BY ALL""")
    con.execute(f"""COPY (SELECT {clock}, steps, latency[1] AS latency_p50, latency[2] AS latency_p95,
        latency[3] AS latency_p99, coalesce(reappearances, 0) AS reappearances, lateness[1] AS lateness_p50,
        lateness[2] AS lateness_p95, lateness[3] AS lateness_p99
        FROM latency LEFT JOIN lateness USING (target, target_version, clock)) TO '{out}/timing.parquet'
        (FORMAT parquet)""")
    for table in ("matrix", "timing", "divergences"):
        con.execute(f"SELECT * FROM '{out}/{table}.parquet'").fetchall()
    con.execute("SELECT * FROM latency").fetchall()
    con.execute("SELECT * FROM lateness").fetchall()
    con.execute(f"""SELECT source, run_id, "case", step, op_type, queue, response_type, error_code, invoke,
        "complete", views, returned, verdict FROM good
        SEMI JOIN (SELECT minimal_case.file AS source, minimal_case.run_id AS run_id, minimal_case.case AS "case"
                   FROM '{out}/divergences.parquet') USING (source, run_id, "case")""").fetchall()


def same_tables(spark_tables: Path, duckdb_out: Path) -> str:
    """Whether DuckDB's whole job gave the job's counts: the matrix and the divergences (with their minimal cases)
    row for row, the timing's step and reappearance counts (its percentiles are approximate in both)."""
    import duckdb

    queries = {"matrix": "target, target_version, profile, rule, exercised, coalesce(decisive, 0), "
                         "coalesce(diverging, 0), coalesce(uncertain, 0), coalesce(conforming, 0)",
               "divergences": "target, target_version, profile, rule, runs, occurrences, minimal_case.run_id, "
                              "minimal_case.case, minimal_case.step, minimal_case.case_steps, expected, observed",
               "timing": "target, target_version, clock, steps, reappearances"}
    con = duckdb.connect()
    differ = [name for name, columns in queries.items()
              if con.execute(f"SELECT {columns} FROM '{spark_tables}/{name}/*.parquet' ORDER BY ALL").fetchall()
              != con.execute(f"SELECT {columns} FROM '{duckdb_out}/{name}.parquet' ORDER BY ALL").fetchall()]
    con.close()
    return "yes" if not differ else "no, " + ", ".join(differ) + " differ"


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
    from sqs_conformance.reports.spark import session

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
                # The JVM goes on compiling the hot code of this size of input for some runs: each again into a
                # new folder (everything read and built again), the fastest as the steady state, as DuckDB's is.
                agains = [steady(spark, source, work / f"steady-{events}-{columnar}-again{i}") for i in range(AGAIN)]
                again = min(agains)
                print(f"    the same job {AGAIN} times again:      {' / '.join(f'{a:.1f}' for a in agains)} s, fastest "
                      f"{events / again:,.0f} events/s (JIT-warm)")
                rerun = steady(spark, source, work / f"steady-{events}-{columnar}")
                # Each the faster of two runs: DuckDB's first in the process also pays its own start-up.
                baseline = min(duckdb_baseline(source, work / f"duckdb-{events}-{columnar}", columnar)
                               for _ in range(2))
                print(f"    baseline, DuckDB, same input:     {baseline:6.1f} s  {events / baseline:>10,.0f} events/s"
                      "  (the lines to Parquet and a rule count: issue 16's baseline)")
                print(f"    steady ratio Spark / DuckDB:      {baseline / warm:6.2f}  "
                      f"(JIT-warm: {baseline / again:.2f})")
                whole_out = work / f"duckdb-whole-{events}-{columnar}"
                whole = min(duckdb_baseline(source, whole_out, columnar, whole_job=True) for _ in range(2))
                print(f"    DuckDB doing the job's whole work: {whole:5.1f} s  {events / whole:>10,.0f} events/s"
                      "  (the three tables as the job defines them, and the report's reads)")
                same = same_tables(work / f"steady-{events}-{columnar}" / "tables", whole_out)
                print(f"    steady ratio to that:             {whole / warm:6.2f}  (JIT-warm: {whole / again:.2f}; "
                      f"the same tables as Spark's: {same})")
                print(f"    rerun with nothing new:           {rerun:6.1f} s", flush=True)
            shutil.rmtree(folder)
            shutil.rmtree(lines_only)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("pipeline", __doc__):
        main()
