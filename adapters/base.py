"""What every target implements. Adapters know nothing of Hypothesis or of the checker."""

from __future__ import annotations

import copy
import math
import re
import time
from abc import ABC, abstractmethod
from typing import Protocol
from collections.abc import Callable

from sqs_conformance.adapters import interrupt
from sqs_conformance.model.values import Error, Operation, Response


class TargetError(Exception):
    """A target could not be reached or set up. The message is one line, fit for a user."""


class ProfileNotSpoken(TargetError):
    """The target does not speak the profile asked for (an in-house queue without FIFO, say)."""


class Unsupported(TargetError):
    """The target has no such operation (a peek on an SQS endpoint, say)."""


class Clock(Protocol):
    """Seconds since the target was opened. A virtual clock advances instantly; a real one sleeps; a shifted
    one runs in real time but advances instantly, by moving the target's own clock (libfaketime)."""

    kind: str  # "virtual", "real" or "shifted"

    def now(self) -> float: ...

    def advance(self, seconds: float) -> None: ...


def forward(seconds: float) -> float:
    """What every clock's `advance` checks first."""
    if seconds < 0:
        raise ValueError("time does not run backwards")
    return seconds


class VirtualClock:
    kind = "virtual"

    def __init__(self) -> None:
        self._now = 0.0

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self.advance_to(self._now + forward(seconds))

    def advance_to(self, t: float) -> None:
        self._now = max(self._now, t)


class RealClock:
    """Wall time: advancing sleeps (cut short by a stop, adapters/interrupt.py). Monotonic, so that a clock
    adjustment never bends a window."""

    kind = "real"

    def __init__(self) -> None:
        self._zero = time.monotonic()
        self.epoch_zero = time.time()  # the epoch time of this clock's zero, to express service timestamps in it

    def now(self) -> float:
        return time.monotonic() - self._zero

    def advance(self, seconds: float) -> None:
        interrupt.sleep(forward(seconds))


# The settling's margin beyond a target's scan period (endpoint.settle_for): a scan seen at least this long after a
# jump came within a period of the advance's end.
SCAN_MARGIN = 0.25


class ScanWatch(Protocol):
    """Shows when a target's periodic scan has caught up with a jump of its clock (adapters/scan_sentinel.py)."""

    def arm(self, jump: float, within: float) -> str | None: ...

    def seen(self, mark: str, within: float) -> bool: ...


class ShiftedClock(RealClock):
    """Real time plus an offset that `advance` moves at once; `shift` tells the target's clock the new offset.
    Requests still take real time, so operations are judged in windows as under a real clock.

    `settle`: the last seconds of each advance pass in real time. A target that requeues on a periodic scan
    (LocalStack: every second) would have scanned during a real wait; after an instant jump its next scan is up
    to a period away in real time, and a step made at once would see messages the wait had released still hidden.
    With a `scan_watch`, the settling ends once the target shows a scan made after the jump, a period or less
    before the advance's end; the rest of it is passed at once (every message due a period before the end is
    released: all the real wait guaranteed).
    """

    kind = "shifted"

    def __init__(self, shift: Callable[[float], None], settle: float = 0.0) -> None:
        super().__init__()
        self.offset = 0.0
        self.settle = settle
        self.scan_watch: ScanWatch | None = None
        self._shift = shift

    def now(self) -> float:
        return super().now() + self.offset

    def advance(self, seconds: float) -> None:
        jump = max(0.0, forward(seconds) - self.settle)
        watch, mark = (self.scan_watch if jump else None), None
        if watch is not None:
            started = time.monotonic()
            mark = watch.arm(jump, seconds - jump)
            jump = max(0.0, jump - (time.monotonic() - started))  # the arming's request took real time of the advance
        if jump:
            self._move(jump)
        if watch is None or mark is None:
            super().advance(seconds - jump)
            return
        started = time.monotonic()
        if not watch.seen(mark, seconds - jump):
            return  # waited out, as without a watch
        waited = time.monotonic() - started
        if waited < SCAN_MARGIN:
            # A scan this soon after the jump was a period or more before the advance's end: the next one, within
            # the rest of the settling, releases what is due up to a period before it, as the real wait did
            super().advance(max(0.0, seconds - jump - waited))
        elif seconds - jump - waited > 0:
            self._move(seconds - jump - waited)

    def _move(self, seconds: float) -> None:
        self.offset += seconds
        self._shift(self.offset)

    def held(self) -> ShiftedClock:
        """This clock's time as it reads now, for another client of the same server that must never move it (while
        its own clock stands still, so do the server's): every advance of it is slept."""
        other = copy.copy(self)
        other.settle, other.scan_watch = math.inf, None
        return other


class Target(ABC):
    """A queue service under test. Queue names are the suite's; the adapter maps them to its own."""

    name: str
    clock: Clock
    profiles: frozenset[str]  # the profiles this target can be checked against
    # Under a real clock: how far (s) a deadline may show early or late before it counts as a divergence.
    tolerance: float = 0.0

    @abstractmethod
    def execute(self, op: Operation) -> Response:
        """Perform one operation and return the normalised response (errors as `Error` values)."""

    def version(self) -> str:
        return "unknown"

    # What some targets can do beyond the interface, declared here rather than probed: each answers None where
    # the target cannot.

    def another_connection(self) -> Target | None:
        """Another client of the same service for a concurrent job: its own queues, the same name in the trace."""
        return None

    def held_connection(self) -> Target | None:
        """On a moved clock: another client of this very server, its own queues, whose clock reads the server's
        moved time and never moves it (its waits are slept), for cases that need no move, played beside one
        another while nobody moves this server's clock."""
        return None

    def shared_connection(self) -> Target | None:
        """Another client of the very same queues, for concurrent consumers (`run --clients N`): it names the queues
        this target created by the same names, reads the same clock object, and may be used from another thread at
        the same time as this one and the other shared connections. It owns nothing: closing it leaves the queues,
        the clock and any server alone, and only this target resets or closes them."""
        return None

    def requests_billed(self) -> int | None:
        """The requests sent so far to a service that bills by the request (real AWS, an SQS endpoint)."""
        return None

    def cost_estimate(self, fifo: bool) -> float | None:
        """What `requests_billed` cost at public SQS pricing."""
        return None

    def reset(self) -> None:  # noqa: B027 (a hook: a target without state between cases needs none)
        """Forget every queue this target created, ready for an independent case."""

    def close(self) -> None:  # noqa: B027 (a hook: a target that holds nothing needs none)
        """Delete what this target created and release it."""


_QUERY_PREFIX = "AWS.SimpleQueueService."


def normalise_error(code: str | None, message: str = "", status: int = 400) -> Error:
    """One spelling per error: 'AWS.SimpleQueueService.X', 'com.amazonaws.sqs#X' and 'X;Sender' all become 'X'.
    This is the only place error codes are normalised."""
    raw = (code or "Unknown").split(";")[0].split("#")[-1]
    if raw.startswith(_QUERY_PREFIX):
        raw = raw[len(_QUERY_PREFIX):]
    return Error(raw, redact(re.sub(r"\s+", " ", message or "").strip()), status)


_ACCOUNT_IN_ARN = re.compile(r"(arn:aws[\w-]*:[\w-]+:[\w-]*:)\d{12}(?=:)")
_QUEUE_URL = re.compile(r"https?://[^\s'\"]+?/\d{12}/[\w.-]+")


def redact(text: str) -> str:
    """Account ids and queue URLs never reach a trace, a report or the terminal."""
    return _QUEUE_URL.sub("<queue-url>", _ACCOUNT_IN_ARN.sub(r"\1<account>", text))


class SharedView(Target):
    """Another client of `primary`'s queues through `primary` itself: its `shared_connection` where one connection
    serves many threads at once (a boto3 client; the model, which takes one step at a time under its own lock)."""

    def __init__(self, primary: Target) -> None:
        self.primary = primary
        self.name, self.profiles, self.tolerance = primary.name, primary.profiles, primary.tolerance

    @property
    def clock(self):  # type: ignore[override]  # the primary's, which a reset may replace
        return self.primary.clock

    def execute(self, op: Operation) -> Response:
        return self.primary.execute(op)

    def version(self) -> str:
        return self.primary.version()
