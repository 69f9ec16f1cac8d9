"""The report's driver class path: where its classes come from, and what loading them from the busiest jars first
saves (reports/class_path.py).

First, one cold report with `-Xlog:class+load`: the classes loaded from each jar, most first, with each jar's place
on the class path `jars/*` gives (the directory's order, as the JVM expands it) and on the job's, and the jars a
class load looks in before its own, summed (each miss is a lookup in a jar's directory). Then cold reports in fresh
processes, `session()` and the job on a synthetic corpus, alternately with the job's class path and with Spark's
plain one: the time of each, and the mean ratio.

    python3 -m benchmarks.class_path [--events 1000] [--pairs 3] [--master local[2]]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.pipeline import corpus  # noqa: E402
from sqs_conformance.reports.class_path import BUSIEST_JARS, artifact, busiest_first, spark_jars  # noqa: E402

# One cold report in this process: the session (its class path the job's, or Spark's own) and the job; prints its
# seconds as JSON.
ONE_REPORT = """
import json, sys, time
start = time.perf_counter()
from sqs_conformance.reports import spark as reports_spark
if sys.argv[4] == "plain":
    reports_spark.driver_class_path = lambda: ""
from sqs_conformance.reports.job import build
from sqs_conformance.reports.workload import session_options
traces, out, master = [sys.argv[1]], sys.argv[2], sys.argv[3]
spark = reports_spark.session(master, None, **session_options(traces, out))  # as `report` starts it
started = time.perf_counter()
build(spark, traces, out)
print(json.dumps({"session": started - start, "total": time.perf_counter() - start}))
"""


def one_report(traces: Path, out: Path, master: str, class_path: str, java_options: str = "") -> dict[str, float]:
    env = {**os.environ, "JDK_JAVA_OPTIONS": java_options} if java_options else None
    done = subprocess.run([sys.executable, "-c", ONE_REPORT, str(traces), str(out), master, class_path],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parent.parent)
    if done.returncode:
        sys.exit(f"the report failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def loaded_per_jar(traces: Path, work: Path, master: str) -> Counter[str]:
    """Classes a cold report's driver loads from each jar (the launcher's short-lived JVM left out)."""
    logs = work / "class-load"
    logs.mkdir()
    one_report(traces, work / "logged", master, "plain", f"-Xlog:class+load=info:file={logs}/%p.txt")
    counts = max((Counter(m.group(1) for m in re.finditer(r"source: file:\S*/([^/\s]+\.jar)", log.read_text()))
                  for log in logs.iterdir()), key=lambda c: sum(c.values()))  # the driver loads by far the most
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-path-bench-") as tmp:
        work = Path(tmp)
        corpus(work / "corpus", args.events, 8)
        counts = loaded_per_jar(work / "corpus", work, args.master)
        plain = os.listdir(spark_jars())  # the order `jars/*` expands in: the directory's
        ours = [p.name for p in busiest_first(spark_jars())]
        ours += [jar for jar in plain if jar not in ours]

        def misses(order: list[str]) -> int:
            return sum(count * order.index(jar) for jar, count in counts.items() if jar in order)

        print(f"{sum(counts.values()):,} classes loaded from {len(counts)} of {len(plain)} jars; the busiest:")
        for jar, count in counts.most_common(12):
            print(f"  {count:6,d}  {jar:45s} place on Spark's class path {plain.index(jar) + 1:3d}, on the job's "
                  f"{ours.index(jar) + 1:3d}")
        unlisted = [jar for jar, _ in counts.most_common(len(BUSIEST_JARS)) if artifact(jar) not in BUSIEST_JARS]
        print(f"  jars looked in before a class's own, summed: {misses(plain):,} on Spark's class path, "
              f"{misses(ours):,} on the job's"
              + (f"; busy jars BUSIEST_JARS does not name: {', '.join(unlisted)}" if unlisted else ""))
        times: dict[str, list[dict[str, float]]] = {"plain": [], "busiest first": []}
        for pair in range(args.pairs):
            for name in times:
                out = work / f"out-{name.replace(' ', '-')}-{pair}"
                times[name].append(one_report(work / "corpus", out, args.master,
                                              "plain" if name == "plain" else "job"))
        for name, runs in times.items():
            print(f"cold report, {args.events:,} lines, {name + ' class path:':27s} session "
                  + " / ".join(f"{r['session']:.2f}" for r in runs) + " s, whole "
                  + " / ".join(f"{r['total']:.2f}" for r in runs) + f" s (mean {mean(r['total'] for r in runs):.2f})")

        def ratio(part: str) -> float:
            return mean(r[part] for r in times["busiest first"]) / mean(r[part] for r in times["plain"])

        print(f"busiest first / plain, mean: whole {ratio('total'):.3f}, session start {ratio('session'):.3f}")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("class_path", __doc__):
        main()
