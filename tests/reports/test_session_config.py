"""The report's own Spark session: a master that runs every task in the driver's JVM, named or not, is sized for the
machine and bound to loopback; a cluster keeps Spark's defaults. (A `local[2]` given by name once got a cluster's
200 shuffle partitions and adaptive re-planning, and its driver no loopback binding.)"""

from __future__ import annotations

import pytest

from sqs_conformance.reports.spark import _driver_java_options, in_one_jvm, session_config


@pytest.mark.parametrize("master", [None, "local", "local[1]", "local[2]", "local[*]", "local[4,2]", "local[*,3]"])
def test_a_master_in_one_jvm_is_sized_for_the_machine_and_bound_to_loopback(master):
    config = session_config(master)
    assert in_one_jvm(master)
    assert config["spark.sql.adaptive.enabled"] == "false"
    assert 1 <= int(config["spark.sql.shuffle.partitions"]) < 200
    assert config["spark.driver.host"] == config["spark.driver.bindAddress"] == "127.0.0.1"
    assert "-XX:+UseParallelGC" in _driver_java_options(master, None)


def test_a_partition_a_task_thread(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert session_config("local[2]")["spark.sql.shuffle.partitions"] == "2"
    assert session_config("local[16]")["spark.sql.shuffle.partitions"] == "16"
    assert session_config("local[16,3]")["spark.sql.shuffle.partitions"] == "16"
    assert session_config("local[*]")["spark.sql.shuffle.partitions"] == "16"
    assert session_config(None)["spark.sql.shuffle.partitions"] == "16"
    assert session_config("local")["spark.sql.shuffle.partitions"] == "1"


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "local-cluster[2,1,1024]", "yarn", "k8s://https://h:443",
                                    "localhost", "local[2]x"])
def test_a_cluster_keeps_sparks_defaults(master):
    config = session_config(master)
    assert not in_one_jvm(master)
    assert config["spark.sql.adaptive.enabled"] == "true"
    assert config["spark.sql.shuffle.partitions"] == "200"
    assert "spark.driver.host" not in config and "spark.driver.bindAddress" not in config
    assert "-XX:+UseParallelGC" not in _driver_java_options(master, None)
