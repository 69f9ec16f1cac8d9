"""The report command end to end: after a run, under spark-submit, and its one-line errors."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.reports.conftest import step
from tests.cli import SQS_CONFORMANCE

pytestmark = pytest.mark.xdist_group("spark")


def sqs_conformance(*args, env=None, timeout=600):
    return subprocess.run([*SQS_CONFORMANCE, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_a_run_ends_with_its_report(tmp_path):
    result = sqs_conformance("run", "--target", "model", "--examples", "3", "--steps", "6", "--seed", "3",
                             "--budget", "0",
                             "--out", str(tmp_path / "runs"), "--report", str(tmp_path / "report"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"report: {tmp_path / 'report' / 'report.html'}" in result.stdout
    assert "WARNING" not in result.stderr, result.stderr  # the JVM's incubator-module line is left out
    page = (tmp_path / "report" / "report.html").read_text()
    model_column = page.split("<table id=matrix-table>")[1].split("</table>")[0]
    assert "<th>model" in model_column and "class=diverges" not in model_column
    assert model_column.count("class=conforms") >= 10
    (suite,) = ET.parse(tmp_path / "report" / "junit.xml").getroot()
    assert suite.get("failures") == "0" and int(suite.get("tests")) > 30


def test_the_job_runs_under_spark_submit(tmp_path):
    spark_submit = Path(sys.executable).with_name("spark-submit")
    if not spark_submit.exists():
        spark_submit = Path(shutil.which("spark-submit") or "spark-submit")
    trace = tmp_path / "t.jsonl"
    trace.write_text(step("r1", 1, 0, verdict="divergence", rules=["VIS-TERMINATE"],
                          divergences=[["VIS-TERMINATE"]], final=True) + "\n")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    result = subprocess.run([str(spark_submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
                             "reports/job.py", str(trace), "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "1 distinct divergences" in result.stdout
    assert "VIS-TERMINATE" in (tmp_path / "out" / "junit.xml").read_text()


def test_no_traces_is_one_line_before_spark_starts_and_nothing_is_written(tmp_path):
    result = sqs_conformance("report", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr == f"sqs-conformance: error: no trace files at {tmp_path / 'nothing-here'}\n"
    assert not (tmp_path / "out").exists()


def test_without_java_the_error_says_so_in_one_line(tmp_path):
    (tmp_path / "t.jsonl").write_text(step() + "\n")
    bin_dir = tmp_path / "bin"  # a PATH with Python and no java
    bin_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"} | {"PATH": str(bin_dir)}
    result = sqs_conformance("report", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "out"), env=env)
    assert result.returncode == 2
    assert result.stderr == ("sqs-conformance: error: Java is not installed: PySpark 4 needs Java 17 or newer "
                             "(Debian: apt-get install openjdk-17-jre-headless)\n")
    assert not (tmp_path / "out").exists()


def test_an_unwritable_destination_is_one_line_and_no_java_stack(tmp_path):
    (tmp_path / "t.jsonl").write_text(step() + "\n")
    (tmp_path / "a-file").write_text("in the way")
    result = sqs_conformance("report", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "a-file" / "out"))
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(f"sqs-conformance: error: --out {tmp_path / 'a-file' / 'out'}: "
                                                     "cannot write there (Not a directory)")
    assert "\tat " not in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "a-file").read_text() == "in the way"


def test_a_file_that_is_no_trace_is_refused_in_one_line_before_spark_starts_and_nothing_is_written(tmp_path):
    (tmp_path / "notes.txt").write_text("these are my notes\nnot a trace\n")
    result = sqs_conformance("report", str(tmp_path / "notes.txt"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and result.stderr.startswith("sqs-conformance: error: no trace lines in ")
    assert result.stderr.count("\n") == 1  # no JVM started to warn before it
    assert not (tmp_path / "out").exists()
    # A folder holding a trace among other files is left to the job, which reads the trace
    (tmp_path / "t.jsonl").write_text(step() + "\n")
    from sqs_conformance.reports.local_inputs import problem
    assert problem([str(tmp_path)]) is None and problem([str(tmp_path / "notes.txt")]) is not None
