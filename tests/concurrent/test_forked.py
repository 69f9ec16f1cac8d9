"""Forked workers (`conformance/concurrent/forked.py`): results in order, and an end that nothing holds up.

Each test runs its block in a thread and waits a generous while for it: the behaviour checked is that the block
ends at all (multiprocessing.Pool, which this replaced, waits for ever where a worker dies), not how fast."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sqs_conformance.conformance.concurrent.forked import WorkerLost, in_order

ENDS_WITHIN = 60.0  # seconds: far beyond what any of these takes; only a block that waits for ever reaches it


def _ended(block: Callable[[], object]) -> object:
    """What `block` returned or raised, failing the test if it had not ended within ENDS_WITHIN seconds."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(block())
        except Exception as error:  # noqa: BLE001 - handed to the test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(ENDS_WITHIN)
    assert not thread.is_alive(), "the block never ended"
    return outcome[0]


def _square_slowly_backwards(index: int) -> int:
    time.sleep(0.001 * (20 - index))  # the later indices are done first
    return index * index


@pytest.mark.parametrize("workers, chunk", [(1, 1), (2, 1), (2, 3), (3, 7), (2, 50)])
def test_results_come_in_order_whatever_order_the_workers_finish_in(workers, chunk):
    def block():
        with in_order(_square_slowly_backwards, 20, workers, chunk) as results:
            return list(results)

    assert _ended(block) == [i * i for i in range(20)]
    assert not multiprocessing.active_children()


def test_the_workers_inherit_what_this_process_holds_and_never_pickle_it():
    unpicklable = threading.Lock()  # a closure over it could not be sent to a spawned or pooled worker

    def work(index: int) -> int:
        with unpicklable:
            return index + 1

    def block():
        with in_order(work, 5, 2) as results:
            return list(results)

    assert _ended(block) == [1, 2, 3, 4, 5]


def _killed_at_three(index: int) -> int:
    if index == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
    return index


def test_a_worker_killed_before_its_results_are_handed_back_is_an_error_not_a_wait_for_ever():
    got: list[int] = []

    def block():
        with in_order(_killed_at_three, 8, 2) as results:
            got.extend(results)

    error = _ended(block)
    assert isinstance(error, WorkerLost) and "killed" in str(error)
    assert got == [0, 1, 2]  # those before it, handed back in order
    assert not multiprocessing.active_children()


def test_a_worker_that_raises_is_an_error_that_carries_what_it_raised():
    def work(index: int) -> int:
        if index == 2:
            raise ValueError("the second part could not be searched")
        return index

    def block():
        with in_order(work, 6, 2) as results:
            return list(results)

    error = _ended(block)
    assert isinstance(error, WorkerLost) and "the second part could not be searched" in str(error)
    assert not multiprocessing.active_children()


def test_leaving_early_ends_workers_that_are_still_working_or_writing_what_nobody_reads():
    """After the first result: one worker in the middle of a long search, the others with results far larger
    than a pipe holds, which nobody will read."""

    def work(index: int) -> bytes:
        if index == 0:
            return b"first"
        if index == 1:
            time.sleep(ENDS_WITHIN * 2)
        return b"x" * (16 << 20)

    def block():
        with in_order(work, 6, 3) as results:
            first = next(results)
            time.sleep(0.5)  # the others are writing by now
            return first

    assert _ended(block) == b"first"
    assert not multiprocessing.active_children()
    assert "forked-results" not in {t.name for t in threading.enumerate()}  # its reader ended with the block


_PARENT = """
import multiprocessing, sys, time
from sqs_conformance.conformance.concurrent.forked import in_order
with in_order(lambda index: time.sleep(600), 4, 2) as results:
    print(*(p.pid for p in multiprocessing.active_children()), flush=True)
    next(results)
"""


def _running(pid: int) -> bool:
    """Alive and not a zombie (a container's first process may never reap the orphans it inherits)."""
    try:
        return " Z " not in Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1][:4]
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="the death signal is Linux's (prctl)")
def test_a_parent_killed_outright_takes_its_workers_with_it():
    """SIGKILL (or the out-of-memory killer) gives the parent no chance to end its workers: the kernel does, at
    once, where they would otherwise work on for ten minutes for nothing."""
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2 and all(map(_running, workers))
    parent.kill()
    parent.wait()
    ends = time.monotonic() + ENDS_WITHIN
    try:
        while any(map(_running, workers)):
            assert time.monotonic() < ends, "a worker outlived its parent"
            time.sleep(0.05)
    finally:
        for pid in filter(_running, workers):  # only where the test failed
            os.kill(pid, signal.SIGKILL)
