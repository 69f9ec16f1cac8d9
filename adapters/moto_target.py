"""moto in-process (`mock_aws`), its clock driven by time-machine so that advancing time costs nothing.

moto's long poll waits on a real condition variable and compares against the wall clock, so under a frozen
clock it would never end. Here it is a discrete-event wait instead: the virtual clock jumps to the next moment
something in the queue becomes visible (moto's own `visible_at`/`delayed_until`), or to the end of the poll. Where
the poll's last look changed the queue (it moved a message to the dead-letter queue, released a FIFO group) and
messages are visible, moto's real wait returns at once and it looks again: so does this one.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid

import boto3
import time_machine

from sqs_conformance.adapters.base import SharedView, Target, TargetError, VirtualClock
from sqs_conformance.adapters.sqs_api import CLIENT_CONFIG, SqsApiTarget, queue_url_parts

EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # the virtual clock's zero
REGION = "us-east-1"
DEFAULT_ACCOUNT = "123456789012"  # moto's, for a request without credentials naming another
_POLL_SLACK = 0.001  # moto ends a long poll once its clock is strictly past the end


class MotoClock(VirtualClock):
    """A virtual clock that also moves the process's faked wall clock, which moto reads."""

    def __init__(self, traveller: time_machine.Traveller) -> None:
        super().__init__()
        self._traveller = traveller

    def advance_to(self, t: float) -> None:
        # To the microsecond: times computed from moto's epoch milliseconds (a long poll's wake-up) carry float noise
        # of a few tenths of a microsecond, which would put a step a hair past a deadline it meant to meet exactly.
        t = round(t, 6)
        if t > self._now:
            self._traveller.move_to(EPOCH + dt.timedelta(seconds=t), tick=False)
            self._now = t


class MotoTarget(SqsApiTarget):
    """Only one may be open at a time in a process: mock_aws and the clock are process-wide."""

    _open = threading.Lock()

    def __init__(self) -> None:
        try:
            from moto import mock_aws
            from moto.sqs import models as sqs_models
        except ImportError as error:  # pragma: no cover - moto is a dependency
            raise TargetError(f"moto is not installed: {error}") from None
        if not MotoTarget._open.acquire(blocking=False):
            raise TargetError("a moto target is already open in this process")
        self._models = sqs_models
        self._travel = time_machine.travel(EPOCH, tick=False)
        traveller = self._travel.start()
        self._mock = mock_aws()
        self._mock.start()
        clock = MotoClock(traveller)
        client = boto3.client("sqs", region_name=REGION, aws_access_key_id="testing",
                              aws_secret_access_key="testing", config=CLIENT_CONFIG)
        super().__init__("moto", client, clock, prefix=f"c{uuid.uuid4().hex[:8]}-",
                         clock_origin_ms=lambda: EPOCH.timestamp() * 1000)
        self._install_virtual_wait()

    def version(self) -> str:
        import moto

        return moto.__version__

    # The suite's own housekeeping goes straight to moto's backend: over the API it would test nothing and, at one
    # request per queue, cost a sixth of a run's requests.

    def _delete_created_queues(self) -> None:
        for url in self._urls.values():
            account, name = queue_url_parts(url)
            self._queues_of(account).pop(name, None)
        for name in self._unanswered_creates:  # cannot happen in-process, where every answer comes
            self._queues_of(DEFAULT_ACCOUNT).pop(name, None)
        self._forget_created_queues()

    def _arn(self, queue: str) -> str:
        account, name = queue_url_parts(self.url(queue))
        return self._queues_of(account)[name].queue_arn

    def _queues_of(self, account: str) -> dict:
        return self._models.sqs_backends[account][REGION].queues

    def shared_connection(self) -> Target:
        """Another consumer of the same queues: moto's backend is the process's, and a boto3 client serves many
        threads at once (moto's own handling of concurrent requests is what such clients test)."""
        return SharedView(self)

    def _install_virtual_wait(self) -> None:
        backend_class = self._models.SQSBackend
        queue_class = self._models.Queue
        self._original_receive = backend_class.receive_message
        self._original_wait = queue_class.wait_for_messages
        clock = self.clock
        # Per thread: concurrent clients (`shared_connection`) each wait in a poll of their own
        poll = threading.local()  # .end: when the poll's wait ends; .looked: the queue as its previous look left it

        def receive_message(backend, queue_name, count, wait_seconds_timeout, *args, **kwargs):
            poll.end = clock.now() + (wait_seconds_timeout or 0)
            poll.looked = _as_left(backend.get_queue(queue_name))
            return self._original_receive(backend, queue_name, count, wait_seconds_timeout, *args, **kwargs)

        def wait_for_messages(queue, timeout):
            before, poll.looked = getattr(poll, "looked", None), _as_left(queue)
            if poll.looked != before and queue.messages:
                return  # its look changed the queue, and some message is visible: moto looks again at once
            now_ms = clock.now() * 1000 + EPOCH.timestamp() * 1000
            upcoming = [t for m in queue._messages for t in (m.visible_at, m.delayed_until) if t and t >= now_ms]
            end = getattr(poll, "end", clock.now()) + _POLL_SLACK
            if upcoming:
                # moto's 'visible' is strictly after visible_at: step a millisecond past the next event
                end = min(end, (min(upcoming) + 1) / 1000 - EPOCH.timestamp())
            clock.advance_to(max(end, clock.now() + 0.001))

        # moto's own methods replaced for the target's life (and restored by `close`): the patch is the point
        backend_class.receive_message = receive_message  # type: ignore[method-assign,assignment]
        queue_class.wait_for_messages = wait_for_messages  # type: ignore[method-assign]

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._models.SQSBackend.receive_message = self._original_receive  # type: ignore[method-assign]
            self._models.Queue.wait_for_messages = self._original_wait  # type: ignore[method-assign]
            self._mock.stop()
            self._travel.stop()
            MotoTarget._open.release()


def _as_left(queue) -> tuple[int, int]:
    """What a look of moto's receive may change in a queue it returns nothing from: the messages it holds (some
    moved to the dead-letter queue), the ones pending (a FIFO group released)."""
    return len(queue._messages), len(queue.pending_messages)
