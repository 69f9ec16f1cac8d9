"""The distributed path: the reports job on a Spark standalone cluster (master and worker on 127.0.0.1, from
PySpark's own scripts) builds the same tables as on `local[*]`."""

import subprocess

import pytest

from tests.spark_cluster import StandaloneCluster
from tests.cli import SQS_CONFORMANCE

pytestmark = pytest.mark.xdist_group("spark")


def test_the_report_on_a_standalone_cluster_has_the_same_tables_as_local(tmp_path, spark):
    runs = tmp_path / "runs"
    found = subprocess.run([*SQS_CONFORMANCE, "run", "--target", "moto", "--witnesses-only",
                            "--out", str(runs)], capture_output=True, text=True, timeout=600)
    assert found.returncode == 1, found.stdout[-2000:] + found.stderr[-2000:]  # moto diverges: tables with rows
    trace = str(runs / "trace.jsonl")

    def report(out, *master):
        done = subprocess.run([*SQS_CONFORMANCE, "report", trace, "--out", str(out), *master],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]

    report(tmp_path / "local")
    with StandaloneCluster(tmp_path) as cluster:
        report(tmp_path / "cluster", "--master", cluster.url)
    assert all(p.poll() is not None for p in cluster.processes)  # stopped by their process ids
    assert "Asked to launch executor" in (tmp_path / "worker.log").read_text()  # the job ran on the cluster

    for table in ("matrix", "divergences", "timing"):
        local = spark.read.parquet(str(tmp_path / "local" / "tables" / table))
        remote = spark.read.parquet(str(tmp_path / "cluster" / "tables" / table))
        assert local.count() > 0, table
        assert sorted(map(repr, local.collect())) == sorted(map(repr, remote.collect())), table
