"""The driver JVM's standard error, less the one line Spark 4 makes every JVM print.

Spark 4 starts its JVM with the incubating vector module, and the JVM says so on standard error at every start
("WARNING: Using incubator modules: jdk.incubator.vector"): a line a user of `report` can do nothing about. The JVM
inherits this process's standard error, so while it starts, file descriptor 2 is a pipe whose lines are passed on
to the real standard error, that one excepted, for as long as the JVM writes to it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

NOISE = (b"WARNING: Using incubator modules:",)


@contextmanager
def without_noise() -> Iterator[None]:
    """Standard error of the processes started inside (and of this one meanwhile) passed on, the noise left out."""
    read_end, write_end = os.pipe()
    real = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(target=_pass_on, args=(read_end, real), name="jvm-stderr", daemon=True).start()
    try:
        yield
    finally:
        os.dup2(real, 2)  # this process writes to the real one again; the JVM goes on through the pipe


def _pass_on(read_end: int, real: int) -> None:
    with os.fdopen(read_end, "rb", buffering=0) as lines:
        for line in iter(lines.readline, b""):
            if not line.startswith(NOISE):
                os.write(real, line)
