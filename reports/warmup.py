"""A fresh driver JVM warmed up while the report's driver thread is busy with work of its own.

A report begins with serial work on the driver: listing and copying traces, reading the manifest, planning the first
queries; the machine's other cores wait. Meanwhile a tiny job of the kind the tables run (a shuffle, a hash
aggregation, a set collected) makes the JVM load and compile the scheduler and shuffle paths (and code generation's,
where the session generates code) the tables' first jobs would otherwise wait on. It reads no trace and writes
nothing: what it computes is thrown away, and a failure of it is ignored (the report's own jobs meet whatever is
wrong).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

JOB_GROUP = "sqs-conformance-warm-up"


@contextmanager
def warmed_up(spark, enabled: bool = True) -> Iterator[None]:
    """Run the warm-up job in the background for the body's duration; waits for it on the way out, so that no job
    of it outlives the report."""
    if not enabled:
        yield
        return
    worker = threading.Thread(target=_warm_up, args=(spark,), name="spark-warm-up", daemon=True)
    worker.start()
    try:
        yield
    finally:
        worker.join()


def _warm_up(spark) -> None:
    from pyspark.sql import functions as F

    try:
        spark.sparkContext.setJobGroup(JOB_GROUP, "warms up the JVM for the report's jobs", interruptOnCancel=True)
        (spark.range(100).groupBy((F.col("id") % 3).alias("k"))
         .agg(F.count(F.lit(1)), F.collect_set("id")).collect())
    except Exception:  # noqa: BLE001, S110 - only ever a head start: the report's own jobs report what is wrong
        pass
