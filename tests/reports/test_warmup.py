"""The report's warm-up job: it runs in the background while the body runs, is waited for on the way out, and
never fails the report nor runs where it is not asked for."""

from __future__ import annotations

import threading

import pytest

from sqs_conformance.reports.warmup import JOB_GROUP, warmed_up


class _Refusing:
    """A session whose every use fails, and which counts the uses."""

    def __init__(self) -> None:
        self.uses = 0

    @property
    def sparkContext(self):  # noqa: N802 - the name PySpark gives it
        self.uses += 1
        raise RuntimeError("the session is gone")


def _warm_up_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "spark-warm-up"]


@pytest.mark.xdist_group("spark")  # the one worker whose JVM the reports tests share
def test_a_job_of_its_own_group_has_run_once_the_body_is_done(spark):
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(JOB_GROUP))
    with warmed_up(spark):
        assert spark.range(10).count() == 10  # the body's own jobs run beside it
    ran = set(tracker.getJobIdsForGroup(JOB_GROUP)) - before
    assert ran and all(tracker.getJobInfo(job).status == "SUCCEEDED" for job in ran)
    assert not _warm_up_threads()
    # The group is the warm-up thread's own: a job of the caller's afterwards is in none.
    spark.range(5).count()
    assert set(tracker.getJobIdsForGroup(JOB_GROUP)) - before == ran


def test_a_failing_warm_up_is_ignored_and_waited_for(monkeypatch):
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    session = _Refusing()
    with warmed_up(session):
        pass
    assert session.uses == 1 and not _warm_up_threads()
    assert escaped == []  # caught in the thread, not left to die there


def test_nothing_runs_where_it_is_not_asked_for():
    session = _Refusing()
    with warmed_up(session, enabled=False):
        assert not _warm_up_threads()
    assert session.uses == 0


def test_the_bodys_failure_comes_through_and_the_warm_up_is_waited_for():
    session = _Refusing()
    with pytest.raises(ValueError, match="the body's"), warmed_up(session):
        raise ValueError("the body's")
    assert session.uses == 1 and not _warm_up_threads()
