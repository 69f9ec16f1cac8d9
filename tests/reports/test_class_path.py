"""The driver's class path: the jars most classes come from named first, whatever their versions, with a class path
spark-defaults.conf sets kept in front of them; and a session the job starts has them first."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqs_conformance.reports import class_path
from sqs_conformance.reports.class_path import (
    BUSIEST_JARS, artifact, busiest_first, configured_class_path, driver_class_path,
)


@pytest.mark.parametrize(("jar", "name"), [
    ("spark-sql_2.13-4.3.0.jar", "spark-sql"),
    ("spark-sql-api_2.13-4.3.0.jar", "spark-sql-api"),
    ("scala-library-2.13.18.jar", "scala-library"),
    ("hadoop-client-api-3.5.0.jar", "hadoop-client-api"),
    ("netty-common-4.2.13.Final.jar", "netty-common"),
    ("jackson-module-scala_2.13-2.21.2.jar", "jackson-module-scala"),
    ("netty-tcnative-boringssl-static-2.0.70.Final-linux-x86_64.jar", "netty-tcnative-boringssl-static"),
    ("py4j-0.10.9.9.jar", "py4j"),
    ("connect-repl", None),
    ("unversioned.jar", None),
])
def test_a_jar_is_named_by_its_artifact_without_versions(jar, name):
    assert artifact(jar) == name


def _jars(folder: Path, names: list[str]) -> Path:
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"")
    return folder


def test_the_busiest_jars_come_in_their_order_and_others_not_at_all(tmp_path):
    # Listed in another order than BUSIEST_JARS, with other versions than today's, and jars it does not name.
    jars = _jars(tmp_path / "jars", ["spark-core_2.13-9.0.0.jar", "zzz-unused-1.0.jar", "spark-sql_2.13-9.0.0.jar",
                                     "scala-library-2.14.0.jar", "spark-catalyst_2.13-9.0.0.jar",
                                     "spark-sql-api_2.13-9.0.0.jar"])
    assert [p.name for p in busiest_first(jars)] == ["spark-catalyst_2.13-9.0.0.jar", "scala-library-2.14.0.jar",
                                                     "spark-core_2.13-9.0.0.jar", "spark-sql_2.13-9.0.0.jar",
                                                     "spark-sql-api_2.13-9.0.0.jar"]
    assert BUSIEST_JARS.index("spark-catalyst") < BUSIEST_JARS.index("scala-library") < BUSIEST_JARS.index("spark-core")


def test_the_installed_pysparks_jars_are_found_by_their_names():
    found = [artifact(p.name) for p in busiest_first(class_path.spark_jars())]
    assert found[:4] == ["spark-catalyst", "scala-library", "spark-core", "spark-sql"]
    assert len(set(found)) == len(found)  # each named once, though spark-sql-api also starts with spark-sql


@pytest.mark.parametrize("line", ["spark.driver.extraClassPath /opt/s3/hadoop-aws.jar",
                                  "spark.driver.extraClassPath=/opt/s3/hadoop-aws.jar",
                                  "  spark.driver.extraClassPath : /opt/s3/hadoop-aws.jar  "])
def test_a_class_path_set_in_spark_defaults_stays_first(tmp_path, monkeypatch, line):
    (tmp_path / "spark-defaults.conf").write_text(
        f"# spark.driver.extraClassPath /commented/out.jar\nspark.driver.memory 2g\n{line}\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert configured_class_path() == "/opt/s3/hadoop-aws.jar"
    first, *rest = driver_class_path().split(":")
    assert first == "/opt/s3/hadoop-aws.jar"
    assert rest == [str(p) for p in busiest_first(class_path.spark_jars())]


def test_without_spark_defaults_only_the_busiest_jars(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "none"))
    assert configured_class_path() is None
    assert driver_class_path().split(":") == [str(p) for p in busiest_first(class_path.spark_jars())]


@pytest.mark.xdist_group("spark")  # the one worker whose JVM the reports tests share
def test_the_jobs_driver_loads_from_the_busiest_jars_first(spark):
    system = spark.sparkContext._jvm.java.lang.System  # noqa: SLF001
    entries = str(system.getProperty("java.class.path")).split(":")
    busiest = [str(p) for p in busiest_first(class_path.spark_jars())]
    assert entries[:len(busiest)] == busiest
    # The class the job uses most is loaded from the first of them.
    source = spark.sparkContext._jvm.java.lang.Class.forName(  # noqa: SLF001
        "org.apache.spark.sql.catalyst.expressions.Expression").getProtectionDomain().getCodeSource().getLocation()
    assert Path(str(source.getPath())).name == Path(busiest[0]).name
