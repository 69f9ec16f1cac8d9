"""What makes a moved clock cheap: a libfaketime whose waits on the monotonic clock keep their deadlines (else every
waiting thread of a Python server spins)."""

from __future__ import annotations

import os
import subprocess
import sys

from sqs_conformance.adapters.servers import FakeTime

# A wait of 0.3 s on a condition variable of the monotonic clock, as CPython's GIL waits, timed.
_MONOTONIC_WAIT = """
import ctypes, time
libc = ctypes.CDLL(None)
class timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
attr, cond, mutex = (ctypes.create_string_buffer(64) for _ in range(3))
libc.pthread_condattr_init(attr)
libc.pthread_condattr_setclock(attr, 1)  # CLOCK_MONOTONIC
libc.pthread_cond_init(cond, attr)
libc.pthread_mutex_init(mutex, None)
libc.pthread_mutex_lock(mutex)
deadline = timespec()
libc.clock_gettime(1, ctypes.byref(deadline))
deadline.tv_sec, deadline.tv_nsec = divmod(deadline.tv_sec * 10**9 + deadline.tv_nsec + 300_000_000, 10**9)
started = time.monotonic()
libc.pthread_cond_timedwait(cond, mutex, ctypes.byref(deadline))
print(time.monotonic() - started)
"""


def test_under_libfaketime_a_wait_on_the_monotonic_clock_lasts_its_time_on_a_moved_clock(tmp_path):
    """libfaketime's default on this glibc recomputes such a deadline from the faked time, years in the past: the
    wait returns at once, and a Python server's threads then spin for the GIL (10 times the CPU)."""
    faketime = FakeTime(tmp_path)
    faketime.shift(25 * 3600)
    waited = subprocess.run([sys.executable, "-c", _MONOTONIC_WAIT], capture_output=True, text=True, timeout=60,
                            env={**os.environ, **faketime.env})
    assert waited.returncode == 0, waited.stderr
    assert 0.25 <= float(waited.stdout) < 5
