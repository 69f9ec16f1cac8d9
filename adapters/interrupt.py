"""A run asked to stop from outside (Ctrl-C, SIGTERM): every thread of the process gives way at its next wait or
request.

One flag for the process, since a signal is the process's: whoever receives it calls `request()`. A thread
notices it at its next request (`check()`) or during a wait (`sleep()`), and raises `Interrupted`. A request
already under way is not interrupted (a socket read cannot be): whoever stops the run does not wait for it, and
its answer is never used, since its thread checks the flag before doing anything more.
"""

from __future__ import annotations

import threading

_REQUESTED = threading.Event()


class Interrupted(KeyboardInterrupt):
    """Raised in a thread that notices the stop. A KeyboardInterrupt, so that no `except Exception` (Hypothesis'
    own included) takes it for a failure to shrink, and whatever handles Ctrl-C handles it too."""


def request() -> None:
    _REQUESTED.set()


def requested() -> bool:
    return _REQUESTED.is_set()


def clear() -> None:
    """For a process that goes on after a stopped run (a test session): the next run is not stopped at once."""
    _REQUESTED.clear()


def check() -> None:
    if _REQUESTED.is_set():
        raise Interrupted()


def sleep(seconds: float) -> None:
    """`time.sleep`, cut short by a stop."""
    if _REQUESTED.wait(max(0.0, seconds)):
        raise Interrupted()
