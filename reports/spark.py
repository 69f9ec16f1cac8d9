"""The Spark session of the reports job: `local[*]` on this machine by default (driver on 127.0.0.1, UI off,
logs quiet, scratch files in a project-owned folder), or any cluster given by `--master`. Under `spark-submit`
the session spark-submit made is used as it is."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sqs_conformance.reports.class_path import driver_class_path
from sqs_conformance.reports.jvm_stderr import without_noise

if TYPE_CHECKING:
    from sqs_conformance.reports.jvm_archive import JvmArchive

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
SCRATCH = Path(".sqs-conformance") / "spark"
MIN_JAVA = 17


class ReportError(Exception):
    """Something the reports job cannot go on with; the message is one line for the user."""


def java_version() -> int:
    """The major version of the `java` Spark would start (JAVA_HOME first, as Spark's launcher does)."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', java_banner())
    if not found:
        raise ReportError(f"cannot tell the version of {_java()}")
    major = int(found.group(1))
    return int(found.group(2)) if major == 1 else major  # "1.8.0" is Java 8


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ReportError(f"Java is not installed: PySpark 4 needs Java {MIN_JAVA} or newer "
                          f"(Debian: apt-get install openjdk-17-jre-headless)")
    return java


def java_banner() -> str:
    """What that `java -version` prints."""
    return _banner(_java())


@functools.cache  # the version check and the class archive's key both ask; one Java answers once
def _banner(java: str) -> str:
    try:
        return subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ReportError(f"cannot run {java}: {error}") from None


def in_one_jvm(master: str | None) -> bool:
    """Whether the driver runs every task itself, on this machine: no master (`local[*]`), `local`, `local[N]`,
    `local[*]`, `local[N,F]`; not `local-cluster[...]`, whose executors are JVMs of their own."""
    return master is None or re.fullmatch(r"local(\[[^\]]*\])?", master) is not None


def _local_threads(master: str | None) -> int:
    """The task threads of a master `in_one_jvm`: `local` has one, `local[*]` (and no master) one a core."""
    found = re.match(r"local\[(\d+)", master or "")  # local[N] and local[N,F]: N threads
    if found:
        return max(1, int(found.group(1)))
    return 1 if master == "local" else os.cpu_count() or 1


# Every query evaluated as it is planned, no code generated and compiled for it (whole stages or expressions).
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


def set_interpreted(spark, interpreted: bool) -> None:
    """Make a running session generate code for its queries or not (INTERPRETED), as `session_config` would have."""
    for key, value in INTERPRETED.items():
        if interpreted:
            spark.conf.set(key, value)
        else:
            spark.conf.unset(key)


def session_config(master: str | None, interpreted: bool = False) -> dict[str, str]:
    """The settings the job's own session gets beyond its Java options: a master in one JVM (given or not) is sized
    for the machine and bound to loopback, and with `interpreted` generates no code (`workload.interpreted` says
    when); a cluster keeps Spark's defaults."""
    config = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
              "spark.sql.session.timeZone": "UTC", "spark.local.dir": str(SCRATCH.resolve())}
    if not in_one_jvm(master):
        return config | {"spark.sql.shuffle.partitions": "200", "spark.sql.adaptive.enabled": "true"}
    # One partition a task thread: what is shuffled is already aggregated (kinds of steps, divergences, a row a
    # target and clock), and the three tables' jobs run at once, so a stage's few tasks leave no core idle. On
    # local[2], against 8 (four a thread, before): 1,000 lines cold 8.5 -> 7.6 s, 1e6 lines cold the same, warm
    # 6.7 -> 5.8 s (the job alone, pairs). With so few, re-planning each stage costs more than it saves.
    return config | (INTERPRETED if interpreted else {}) | {
        "spark.sql.shuffle.partitions": str(_local_threads(master)), "spark.sql.adaptive.enabled": "false",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def _driver_java_options(master: str | None, archive: JvmArchive | None, quick_jit: bool = False) -> list[str]:
    options = [f"-Dlog4j.configurationFile={LOG_CONFIG.resolve()}"]
    if in_one_jvm(master):
        # One JVM runs the driver and every task: the throughput collector, whose work stops the tasks briefly,
        # rather than G1's, whose concurrent threads compete with them for the machine's few cores (~1 s of 20 at
        # 1e6 lines cold, no slower warm: benchmarks/pipeline.py).
        options.append("-XX:+UseParallelGC")
        if quick_jit:  # C1 only: where the work is mostly first runs of queries (reports/workload.py)
            options.append("-XX:TieredStopAtLevel=1")
    if archive:
        options.append(archive.java_options())
    return options


def session(master: str | None = None, archive: JvmArchive | None = None, quick_jit: bool = False,
            interpreted: bool = False):
    """A SparkSession for the job. Without `master` (and outside spark-submit), a local one on loopback. With
    `archive`, a driver JVM this call starts uses it, or records its classes for it (reports/jvm_archive.py). With
    `quick_jit`, a local driver JVM this call starts compiles with C1 only, and with `interpreted` a local session it
    makes generates no code (`workload.quick_jit` and `workload.interpreted` say when)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active  # a caller made it
    if "PYSPARK_GATEWAY_PORT" in os.environ and master is None:
        # Launched by spark-submit, whose JVM is already up with its own --master and --conf: take them as given.
        return SparkSession.builder.appName("sqs-conformance-report").getOrCreate()
    if java_version() < MIN_JAVA:
        raise ReportError(f"PySpark 4 needs Java {MIN_JAVA} or newer; JAVA_HOME/PATH has Java {java_version()}")
    # Python workers run this interpreter, not whatever `python3` is on PATH; an unresolvable host name would
    # otherwise end in Spark's generic "Java gateway exited".
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    SCRATCH.mkdir(parents=True, exist_ok=True)
    builder = SparkSession.builder.appName("sqs-conformance-report").master(master or "local[*]")
    for key, value in session_config(master, interpreted).items():
        builder = builder.config(key, value)
    java_options = " ".join(_driver_java_options(master, archive, quick_jit))
    builder = builder.config("spark.driver.extraJavaOptions", java_options)
    class_path = driver_class_path()
    if class_path:  # none where Spark's jars are not where PySpark keeps them
        builder = builder.config("spark.driver.extraClassPath", class_path)  # loads its classes sooner
    try:
        with without_noise():  # the JVM starts here
            spark = builder.getOrCreate()
    except Exception as error:  # py4j and Spark raise many kinds; the user needs the first line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ReportError(f"Spark did not start: {first}") from None
    spark.sparkContext.setLogLevel("FATAL")  # as the log4j2 file says; the command reports failures itself
    return spark
