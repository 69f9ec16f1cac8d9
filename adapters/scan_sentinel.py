"""Seeing a periodic scan catch up with a move of the target's clock, instead of waiting out its period.

A target that releases messages on a periodic scan (LocalStack: once a second) sees a jump of its clock only at
its next scan. `ShiftedClock` therefore ends each advance with `settle` seconds of real time, enough for a scan
whatever its phase. The sentinel shows when that scan has come: just before the jump it sends a message to a
queue of its own with a delay that the jump passes and real time cannot (longer than the settling: a target
whose scan fell behind must not be taken to have scanned); that message can come back only through a scan made
after the jump. Once a receive finds it, `ShiftedClock` passes the rest of the advance at once where that scan
came within a period of the advance's end (the guarantee the real wait gave), and waits the rest otherwise; where
the message does not come back within the settling, the advance simply ends as it would have. The queue is
a standard one whatever the run's (a per-message delay); LocalStack releases delayed messages and requeues
expired receipts in the same scan.

The sentinel's queue is the run's (its prefix and tag), made on the first jump and deleted with the target.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import botocore.exceptions

from sqs_conformance.adapters import interrupt
from sqs_conformance.adapters.sqs_api import UNANSWERED

MAX_DELAY = 900  # seconds: SQS's DelaySeconds range
REAL_TIME_MARGIN = 1.0  # seconds a delay exceeds the settling by, so that real time alone cannot pass it
POLL_EVERY = 0.05  # seconds between receives while waiting for the scan


class ScanSentinel:
    """`arm(jump, within)` before a jump, `seen(mark, within)` after it (ShiftedClock)."""

    def __init__(self, client: Any, queue_name: str, tags: dict[str, str],
                 forget_queue: Callable[[str], None]) -> None:
        self._client = client
        self._queue_name = queue_name
        self._tags = tags
        self._forget_queue = forget_queue
        self._url: str | None = None
        self._marks = itertools.count(1)
        self._lock = threading.Lock()
        self.caught_up = 0  # advances ended by the scan seen
        self.waited_out = 0  # advances whose scan was not seen within `settle`

    def arm(self, jump: float, within: float) -> str | None:
        """Send the message the next scan after a jump of `jump` seconds releases, with a delay the jump passes and
        the `within` seconds of settling cannot; its body is the mark `seen` looks for. None: a jump too short for
        such a delay, or a queue that refused, and the advance settles by waiting."""
        delay = min(MAX_DELAY, math.floor(jump) - 1)
        if delay < within + REAL_TIME_MARGIN:
            return None
        mark = f"scan-{next(self._marks)}-{uuid.uuid4().hex[:8]}"
        try:
            with self._lock:
                url = self._url or self._create()
                self._client.send_message(QueueUrl=url, MessageBody=mark, DelaySeconds=delay)
        except (botocore.exceptions.ClientError, *UNANSWERED):
            return None
        return mark

    def seen(self, mark: str, within: float) -> bool:
        """Whether a scan made after the jump released the marked message within `within` real seconds. Whatever
        a receive finds is deleted (an earlier mark, unseen in time, may come back too), leaving the queue empty
        for the next jump."""
        deadline = time.monotonic() + within
        while True:
            if self._received_and_deleted(mark):
                self.caught_up += 1
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                self.waited_out += 1
                return False
            interrupt.sleep(min(POLL_EVERY, left))

    def close(self) -> None:
        if self._url is not None:
            self._forget_queue(self._url)
            self._url = None

    def _create(self) -> str:
        self._url = self._client.create_queue(QueueName=self._queue_name, tags=self._tags)["QueueUrl"]
        return self._url

    def _received_and_deleted(self, mark: str) -> bool:
        try:
            messages = self._client.receive_message(QueueUrl=self._url, MaxNumberOfMessages=10).get("Messages", [])
            if messages:
                self._client.delete_message_batch(QueueUrl=self._url, Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)])
        except (botocore.exceptions.ClientError, *UNANSWERED):
            return False  # not seen: the advance waits on, and settles as it would have
        return any(m["Body"] == mark for m in messages)
