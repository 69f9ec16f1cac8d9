"""The driver JVM's class path with the jars most of its classes come from first.

Spark's launcher puts `jars/*` on the class path, which the JVM expands in directory order (on this machine
spark-core, 1,167 of a report's classes, came 259th of 280 jars). The class loader looks for each class in one jar
after another, so a class loaded from the 200th jar costs 199 misses first: for a report's 14,000 loads from jars, a
quarter of the samples Java Flight Recorder took of the driver's own threads in a cold report. Naming the busiest
jars again in front, through `spark.driver.extraClassPath`, makes most loads hit in the first few jars. Every jar
stays where it was as well, so a class is found wherever it lives, and the same one: a jar named twice holds the
same classes. A driver class path set in `spark-defaults.conf` (say, a file system's connector, or a jar meant to
shadow one of Spark's) stays first, in front of the busiest jars.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Jars by the classes a report's driver loads from each, most first (a cold `report` of 1e6 lines on local[2] with
# -Xlog:class+load; `python benchmarks/class_path.py` prints the count again and times the order). Named without
# their version, so a newer PySpark keeps its order; a name no jar has is skipped.
BUSIEST_JARS = (
    "spark-catalyst", "scala-library", "spark-core", "spark-sql", "scala-reflect", "spark-sql-api", "parquet-column",
    "log4j-core", "jackson-databind", "hadoop-client-api", "parquet-jackson", "janino", "spark-config",
    "parquet-encoding", "hadoop-client-runtime", "commons-compiler", "spark-network-common",
    "parquet-format-structures", "ivy", "netty-common", "antlr4-runtime", "parquet-hadoop", "netty-transport",
    "jackson-module-scala", "spark-common-utils", "jackson-core", "log4j-api", "icu4j", "parquet-common", "py4j",
    "jackson-annotations",
)

_DEFAULTS_SETTING = re.compile(r"\s*spark\.driver\.extraClassPath(?:\s*[=:]\s*|\s+)(?P<value>.*?)\s*")
_VERSIONED = re.compile(r"(?P<artifact>.+?)(?:_2\.1[0-9])?-\d[^/]*\.jar")


def artifact(jar: str) -> str | None:
    """The artifact a jar file's name stands for, without its Scala and release versions:
    `spark-sql_2.13-4.3.0.jar` is `spark-sql`, `netty-common-4.2.13.Final.jar` is `netty-common`."""
    found = _VERSIONED.fullmatch(jar)
    return found.group("artifact") if found else None


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def spark_jars() -> Path:
    """The jars PySpark's launcher puts on the class path (its SPARK_HOME's, as it finds it)."""
    return _spark_home() / "jars"


def configured_class_path() -> str | None:
    """The driver class path `spark-defaults.conf` sets, read where Spark's launcher reads it (SPARK_CONF_DIR, else
    SPARK_HOME/conf): the job's own setting would otherwise replace it."""
    defaults = Path(os.environ.get("SPARK_CONF_DIR") or _spark_home() / "conf") / "spark-defaults.conf"
    try:
        lines = defaults.read_text(errors="replace").splitlines()
    except OSError:
        return None
    found = [m.group("value") for m in map(_DEFAULTS_SETTING.fullmatch, lines) if m]
    return found[-1] if found else None  # a properties file's last setting wins


def busiest_first(jars: Path) -> list[Path]:
    """The jars of `jars` that BUSIEST_JARS names, in its order."""
    by_artifact: dict[str | None, list[Path]] = {}
    for path in sorted(jars.glob("*.jar")):
        by_artifact.setdefault(artifact(path.name), []).append(path)
    return [path for name in BUSIEST_JARS for path in by_artifact.get(name, [])]


def driver_class_path() -> str:
    """`spark.driver.extraClassPath` for a driver this job starts: the one spark-defaults.conf sets, if any, then the
    busiest jars, in front of `jars/*`."""
    configured = configured_class_path()
    busiest = [str(path) for path in busiest_first(spark_jars())]
    return os.pathsep.join([configured, *busiest] if configured else busiest)
