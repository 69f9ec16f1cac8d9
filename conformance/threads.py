"""Work done in threads that a stop does not wait for.

A run's concurrent jobs and witness connections spend their time in requests and real-clock waits. Ctrl-C or
SIGTERM must stop the run within seconds, yet a request under way cannot be cut (a long poll lasts up to 20 s, a
dead connection until its timeout). So the threads are daemons, and the thread that started them waits for them
only briefly once the run is asked to stop (adapters/interrupt.py): each notices the stop at its next wait or
request, and one still blocked in a request is left behind, its answer never used.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from sqs_conformance.adapters import interrupt

T = TypeVar("T")
R = TypeVar("R")

# How long the threads of a stopped run are waited for, to end at their next step, before they are left behind.
GRACE_SECONDS = 0.5


def each_at_once(work: Callable[[T], R], items: Sequence[T], name: str, arrivals: Iterable[T] = ()) -> list[R]:
    """`work(item)` for every item, each in a thread of its own, the results in the items' order; a single item in
    the calling thread. `arrivals`: more items, each given a thread as the calling thread takes it (a server that
    opened), their results after the items'. An error of one thread is raised once all have ended (an interrupt
    before any). An interrupt of the calling thread (Ctrl-C) asks every thread to stop, waits GRACE_SECONDS at
    most, and goes on."""
    if len(items) == 1 and arrivals == ():
        return [work(items[0])]
    results: list[R | None] = []
    errors: list[BaseException] = []
    threads: list[threading.Thread] = []

    def one(index: int, item: T) -> None:
        try:
            results[index] = work(item)
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread
            errors.append(error)

    def launch(item: T) -> None:
        results.append(None)
        thread = threading.Thread(target=one, args=(len(results) - 1, item), name=f"{name}-{len(results) - 1}",
                                  daemon=True)
        threads.append(thread)
        thread.start()

    try:
        for item in items:
            launch(item)
        for item in arrivals:
            launch(item)
        for thread in threads:
            thread.join()
    except BaseException:
        interrupt.request()
        join_all(threads, GRACE_SECONDS)
        raise
    if interrupt.requested():
        raise interrupt.Interrupted()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]


def join_all(threads: Sequence[threading.Thread], seconds: float) -> bool:
    """Waits for the threads, `seconds` in all at most; whether they all ended."""
    ends = time.monotonic() + seconds
    for thread in threads:
        thread.join(max(0.0, ends - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def within(seconds: float, work: Callable[[], None], name: str) -> bool:
    """`work()` in a thread of its own, waited for `seconds` at most: whether it ended in time (it goes on
    otherwise, and is left behind when the process exits). Its error, if it ended with one, is raised here."""
    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread
            errors.append(error)

    thread = threading.Thread(target=guarded, name=name, daemon=True)
    thread.start()
    ended = join_all([thread], seconds)
    if errors:
        raise errors[0]
    return ended
