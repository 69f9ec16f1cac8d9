"""The cycle collector run less often through a busy stretch: a run's steps, a history's check."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The cycle collector's youngest-generation threshold through such a stretch (CPython's default is 700). A step
# allocates thousands of short-lived objects (botocore, moto, the model) over a heap of long-lived ones
# (Hypothesis' tree of cases, the trace's held rows), and each collection of the oldest generation walks that heap:
# a run on moto in-process, alone in its process, spent 0.17-0.22 ms a step (7-9%) in the collector at the
# default, 0.06-0.10 ms at this threshold (benchmarks/throughput.py prints the collector's share). The history
# checker keeps every step's verdict: on 1e5 operations the default cost it a fifth of its time.
COLLECTION_THRESHOLD = 10_000

_lock = threading.Lock()
_stretches = 0  # under way in this process, in any thread
_before: tuple[int, ...] = gc.get_threshold()
_unwalked = False  # the stretch under way made collection stop: its heap is moved to the oldest generation at the end


@contextmanager
def fewer_collections(none: bool = False) -> Iterator[None]:
    """The threshold raised to COLLECTION_THRESHOLD while any stretch of this process is under way, set back as it
    was once the last ends. Objects freed by reference counting (nearly all a step makes) are freed as before.
    `none`: no automatic collection at all through a stretch that starts alone (a history's check, which makes no
    cycles and keeps millions of objects: each full collection walks them all, half its time at 1e6 operations),
    at whose end what it made is moved to the oldest generation as a whole (`gc.freeze`, then `gc.unfreeze`):
    left in the youngest, the first collection after it walks every object (2.5 s of a 40 s check at 1e6)."""
    global _stretches, _before, _unwalked
    with _lock:
        if _stretches == 0:
            _before = gc.get_threshold()
            youngest, *older = _before
            _unwalked = bool(youngest) and none
            if youngest:  # 0: automatic collection is off, and stays so
                gc.set_threshold(0 if none else max(youngest, COLLECTION_THRESHOLD), *older)
        _stretches += 1
    try:
        yield
    finally:
        with _lock:
            _stretches -= 1
            if _stretches == 0:
                if _unwalked:
                    gc.freeze()
                    gc.unfreeze()
                gc.set_threshold(*_before)
