"""The parts of a large history searched on every core.

Parts are independent (`parts.py`), so a pool of forked processes, each with the history it inherited, searches a
share of them and sends back what the checker keeps of each (`Searched`: the order, its `Judged` steps, the
receipts held). Everything after the search (early returns counted in part order, RCV-EXCLUSIVE) stays in this
process, so the verdict is the same spread or not; the parts come back in order as they are searched, so that
this process counts each while the workers search the next (it would otherwise wait idle, then count alone).
Only where it pays and is safe: SPREAD_FROM operations or more, more than one core, and a process that may fork (one
thread only: a fork copies a lock another thread holds). The two sweeps after the search run side by side the same
way (`side_by_side`): one in a forked process, the other here.

Ctrl-C reaches the whole process group: the workers ignore it and leave the stop to this process, which ends them
all (`Pool.terminate`, a SIGTERM each, which they take as it comes). A worker that died of it instead would be
replaced by the pool, forked from its handler thread while another held a lock: a copy that never starts, and an
exit that waits on it for ever.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import TypeVar, cast

from sqs_conformance.conformance.concurrent.parts import Part
from sqs_conformance.conformance.concurrent.search import Searched, search
from sqs_conformance.model import Model

# Below this many operations one process checks faster than a pool starts (some 50 ms a worker).
SPREAD_FROM = 20_000
CHUNKS_PER_WORKER = 16  # parts differ in size (the queue's own part is large): small chunks even the load out

_work: tuple[list[Part], Model, int] | None = None  # what the forked workers inherit
_beside: Callable[[], object] | None = None  # what `side_by_side`'s forked process runs
T = TypeVar("T")
U = TypeVar("U")


@contextmanager
def searching(parts: list[Part], base: Model, budget: int, workers: int) -> Iterator[Iterator[Searched]]:
    """Each part's search, in the parts' order, each as soon as it and those before it are searched; by `workers`
    processes (`workers_for`: as many as pay and are safe here). They start at once, so that the block may do its
    own work while they search (the first part, the queue's own, is the largest: its answer is long in coming);
    leaving the block (at the end, a stop, an error) ends them."""
    if workers < 2:
        yield (search(p.ops, base, budget) for p in parts)
        return
    global _work
    _work = (parts, base, budget)
    try:
        with _pool(workers) as pool:
            yield pool.imap(_search_part, range(len(parts)),
                            chunksize=max(1, len(parts) // (workers * CHUNKS_PER_WORKER)))
    finally:
        _work = None


def side_by_side(there: Callable[[], T], here: Callable[[], U], spread: bool) -> tuple[T, U]:
    """`there` run in a forked process while this one runs `here`, where `spread` (else one, then the other): two
    pieces of work that read what the fork copies and change nothing the other reads. `there`'s result comes
    back pickled; a stop here ends its process."""
    if not spread:
        return there(), here()
    global _beside
    _beside = there
    try:
        with _pool(1) as pool:
            pending = pool.apply_async(_run_beside)
            done_here = here()
            return cast(T, pending.get()), done_here
    finally:
        _beside = None


@contextmanager
def _pool(workers: int) -> Iterator[Pool]:
    """Forked processes that leave Ctrl-C to this one, ended as the block ends."""
    # Born with Ctrl-C held back, until each worker ignores it and this process has its pool to end
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_leave_the_stop_to_the_parent) as pool:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
            yield pool
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


def workers_for(operations: int) -> int:
    """The processes a check of this many operations is spread over here (1: not spread)."""
    if operations < SPREAD_FROM or threading.active_count() > 1 \
            or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_STOPS = {signal.SIGINT, signal.SIGTERM}


def _leave_the_stop_to_the_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


def _run_beside() -> object:
    assert _beside is not None, "a process forked by side_by_side()"
    return _beside()


def _search_part(index: int) -> Searched:
    assert _work is not None, "a worker forked by searching()"
    parts, base, budget = _work
    return search(parts[index].ops, base, budget)
