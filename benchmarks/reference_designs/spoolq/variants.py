"""Race-prone variants of spoolq: each is a bug a team could plausibly ship, invisible to one client at a time
(every variant answers a lone client exactly as `SpoolQueue` does) and visible only when clients overlap.

Written before any suite ran on them, and not tuned since. No variant sleeps: each window is the file system
calls the code makes between its read and its write.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqs_conformance.model.values import ChangeOk, Error, Ok, PurgeQueue, Raw, ReceivedMessage, Response

from .params import Redrive
from .spool import QueueDir, Receipt
from .target import Claim, SpoolQueue, no_queue


class UnlockedClaim(SpoolQueue):
    """A receive claims a message by reading its file and renaming a new record over it without taking the message
    lock ("the rename is atomic"), so two consumers can both claim one message and a claim can undo a delete."""

    def _claim(self, q: QueueDir, stem: str, timeout: int, redrive: Redrive | None) -> ReceivedMessage | Claim:
        return self._claim_in_place(q, stem, timeout, redrive)


class ProcessOwnedLocks(SpoolQueue):
    """Message locks are POSIX record locks (`fcntl.lockf`), which belong to the process rather than the open file,
    so the threads of one process never exclude each other and every read-modify-write races."""

    @contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


class ChangeLocksOnlyTheWrite(SpoolQueue):
    """ChangeMessageVisibility reads the record and computes the new deadline before taking the lock, which it holds
    only to write the record back, so a receive or delete in between is overwritten (lost claim, lost count, or a
    deleted message brought back)."""

    def _change(self, q: QueueDir, receipt: Receipt, handle: str, timeout: int, raw_timeout: Raw) -> Response:
        record = self._load(q, receipt.stem)
        if record is None:
            return self._not_available(handle)
        deadline = self._new_deadline(record, timeout, raw_timeout)
        if isinstance(deadline, Error):
            return deadline
        record.visible_at = deadline
        with self._locked(q.lock_path(receipt.stem)):
            self._store(q, receipt.stem, record)
        return ChangeOk()


class PurgeWithoutLocks(SpoolQueue):
    """PurgeQueue lists the directory and unlinks each file without the message locks ("rm msgs/*"), so a receive
    that read a message just before the unlink renames its claimed record back afterwards: the message survives
    the purge."""

    def _purge(self, op: PurgeQueue) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        for stem in q.listing():
            self._remove(q, stem)
        return Ok()


class LongPollStaleDelta(SpoolQueue):
    """A long poll moves the shared clock by `target - seen`, a delta from the time it read before scanning, so when
    another client moved the clock meanwhile it overshoots its deadline and carries every client's time past it."""

    def _advance_clock(self, target: float, seen: float) -> None:
        if target > seen:
            self.clock.advance(target - seen)


class LongPollGivesUpOnRace(SpoolQueue):
    """A long poll that saw a message visible but lost it to another consumer's claim returns empty at once, before
    its wait is over, instead of waiting on."""

    def _keep_waiting_after_race(self) -> bool:
        return False


class CountAfterClaim(SpoolQueue):
    """The receive count and first-receive time are bumped after the claim, in a second read-modify-write made
    without the lock ("the count is only approximate"), so overlapping receives of a zero-timeout message report
    the same count, and that late write can undo a concurrent claim, change or delete."""

    def _claim(self, q: QueueDir, stem: str, timeout: int, redrive: Redrive | None) -> ReceivedMessage | Claim:
        with self._locked(q.lock_path(stem)):
            record = self._load(q, stem)
            now = self.clock.now()
            if record is None or record.visible_at > now:
                return Claim.LOST
            if redrive is not None and record.receive_count >= redrive.max_receive_count and \
                    self._dead_letter(q, stem, record, redrive, now):
                return Claim.GONE
            self._mark_received(q, stem, record, now, timeout, count=False)
            self._store(q, stem, record)
        counted = self._load(q, stem) or record
        counted.receive_count += 1
        if counted.first_receive_at is None:
            counted.first_receive_at = now
        self._store(q, stem, counted)
        return self._as_received(counted)


VARIANTS: list[type[SpoolQueue]] = [
    UnlockedClaim,
    ProcessOwnedLocks,
    ChangeLocksOnlyTheWrite,
    PurgeWithoutLocks,
    LongPollStaleDelta,
    LongPollGivesUpOnRace,
    CountAfterClaim,
]
