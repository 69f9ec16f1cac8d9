"""The report's session started ahead of the run's end (reports/early.py): it comes up in the background, the report
takes it fitted to the traces as they are by then, a failed start is the report's error, and a run that fails
stops it. (`test_report_cli.py::test_a_run_ends_with_its_report` runs the whole path: a virtual clock's run.)"""

from __future__ import annotations

import threading

import pytest

from sqs_conformance.reports import early
from sqs_conformance.reports.spark import INTERPRETED, ReportError, set_interpreted
from tests.reports.conftest import step

pytestmark = pytest.mark.xdist_group("spark")


class FakeSession:
    def __init__(self) -> None:
        self.stopped = False
        self.thread = threading.current_thread().name

    def stop(self) -> None:
        self.stopped = True


@pytest.fixture
def started(monkeypatch):
    """Sessions `EarlySession` starts (fakes), and what it set interpreted on them."""
    made: list[FakeSession] = []
    told: list[bool] = []
    release = threading.Event()

    def fake_session(master, archive, quick_jit=False):
        release.wait(10)  # a JVM takes seconds to come up: the caller must not wait for it
        made.append(FakeSession())
        return made[-1]

    monkeypatch.setattr(early, "session", fake_session)
    monkeypatch.setattr(early, "set_interpreted", lambda spark, interpreted: told.append(interpreted))
    return made, told, release


def test_the_session_starts_in_the_background_and_fits_the_traces_as_they_are_at_the_end(tmp_path, started):
    made, told, release = started
    runs = tmp_path / "runs"
    runs.mkdir()
    ahead = early.EarlySession.start([str(runs)], str(tmp_path / "report"))
    assert made == []  # start returned before the session came up
    # the run writes more lines than a report runs interpreted for (reports/workload.py: INTERPRETED_MAX_LINES)
    (runs / "trace.jsonl").write_text("\n".join(step(case=i // 40, index=i % 40) for i in range(20_001)) + "\n")
    release.set()
    spark = ahead.session([str(runs)], str(tmp_path / "report"))
    assert spark is made[0] and spark.thread == "report-session"
    assert told == [False]  # decided from the 20,001 lines there now, not from the empty folder at the start
    ahead.stop()
    assert not spark.stopped  # the report took it: the report's owner stops it


def test_a_small_report_runs_interpreted(tmp_path, started):
    made, told, release = started
    (tmp_path / "trace.jsonl").write_text(step() + "\n")
    release.set()
    early.EarlySession.start([str(tmp_path)], str(tmp_path / "report")).session([str(tmp_path)],
                                                                               str(tmp_path / "report"))
    assert told == [True]


def test_a_session_no_report_took_is_stopped(tmp_path, started):
    made, told, release = started
    ahead = early.EarlySession.start([str(tmp_path)], str(tmp_path / "report"))
    release.set()
    ahead.stop()  # the run failed: waits for the start, then stops what it started
    assert made[0].stopped and told == []


def test_a_failed_start_is_the_reports_error(tmp_path, monkeypatch):
    def no_java(master, archive, quick_jit=False):
        raise ReportError("Java is not installed")

    monkeypatch.setattr(early, "session", no_java)
    ahead = early.EarlySession.start([str(tmp_path)], str(tmp_path / "report"))
    with pytest.raises(ReportError, match="Java is not installed"):
        ahead.session([str(tmp_path)], str(tmp_path / "report"))
    ahead.stop()  # nothing started: nothing to stop, no error


def test_a_running_session_is_made_interpreted_and_back(spark):
    try:
        set_interpreted(spark, True)
        assert all(spark.conf.get(key) == value for key, value in INTERPRETED.items())
        assert spark.range(10).selectExpr("sum(id * 2) AS total").first()["total"] == 90
        set_interpreted(spark, False)
        assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"  # Spark's default again
        assert spark.range(10).selectExpr("sum(id * 2) AS total").first()["total"] == 90
    finally:
        set_interpreted(spark, False)
