"""The parts of a large history searched on every core.

Parts are independent (`parts.py`), so forked processes, each with the history it inherited, search a
share of them and send back what the checker keeps of each (`Searched`: the order, its `Judged` steps, the
receipts held). Everything after the search (early returns counted in part order, RCV-EXCLUSIVE) stays in this
process, so the verdict is the same spread or not; the parts come back in order as they are searched, so that
this process counts each while the workers search the next (it would otherwise wait idle, then count alone).
Only where it pays and is safe: SPREAD_FROM operations or more, more than one core, and a process that may fork (one
thread only: a fork copies a lock another thread holds). The two sweeps after the search run side by side the same
way (`side_by_side`): one in a forked process, the other here.

The processes are forked (`forked.py`): they inherit the history, and a stop ends them at once.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from sqs_conformance.conformance.concurrent.forked import in_order
from sqs_conformance.conformance.concurrent.parts import Part
from sqs_conformance.conformance.concurrent.search import Searched, search
from sqs_conformance.model import Model

# Below this many operations one process checks faster than the workers start (some 50 ms each).
SPREAD_FROM = 20_000
CHUNKS_PER_WORKER = 16  # parts differ in size (the queue's own part is large): small chunks even the load out

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
    with in_order(lambda index: search(parts[index].ops, base, budget), len(parts), workers,
                  chunk=max(1, len(parts) // (workers * CHUNKS_PER_WORKER))) as results:
        yield results


def side_by_side(there: Callable[[], T], here: Callable[[], U], spread: bool) -> tuple[T, U]:
    """`there` run in a forked process while this one runs `here`, where `spread` (else one, then the other): two
    pieces of work that read what the fork copies and change nothing the other reads. `there`'s result comes
    back pickled; a stop here ends its process."""
    if not spread:
        return there(), here()
    with in_order(lambda _: there(), 1, workers=1) as result:
        done_here = here()
        return next(result), done_here


def workers_for(operations: int) -> int:
    """The processes a check of this many operations is spread over here (1: not spread)."""
    if operations < SPREAD_FROM or threading.active_count() > 1 \
            or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
