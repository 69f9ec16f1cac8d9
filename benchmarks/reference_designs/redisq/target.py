"""The suite's adapter for the Redis design: operations in, the library's answers out, on the suite's clock.

    sqs-conformance run --profile sqs-standard \
        --target python:benchmarks.reference_designs.redisq.target:RedisQueueTarget

It starts a redis-server of its own on 127.0.0.1 (stopped by its pid at close), or uses the Redis named by
SQS_CONFORMANCE_REDIS_URL, where it touches only keys under a namespace it made up and deletes them at close.

`shared_connection()` gives another client of the same queues (concurrent consumers): a Redis client of its own
on the same URL and namespace, a store of the same class over the owner's clock, following the owner's case.
"""

from __future__ import annotations

import os
import threading
import uuid

from sqs_conformance.adapters.base import Target, TargetError, Unsupported, VirtualClock
from benchmarks.reference_designs.redisq.semantics import SEMANTICS
from benchmarks.reference_designs.redisq.store import Missing, QueueError, RedisQueues
from sqs_conformance.model.values import (
    AttributesOk, BatchOk, ChangeMessageVisibility, ChangeMessageVisibilityBatch, ChangeOk, CreateQueue,
    DeleteMessage, DeleteMessageBatch, EntryFailure, GetQueueAttributes, Ok, Operation, PeekMessage, PeekOk,
    PurgeQueue, ReceivedMessage, ReceiveMessage, ReceiveOk, Response, SendMessage, SendOk, SetQueueAttributes,
)

URL_VARIABLE = "SQS_CONFORMANCE_REDIS_URL"


class RedisQueueTarget(Target):
    name = "redisq"
    profiles = frozenset(SEMANTICS)
    store_class = RedisQueues  # a mutant swaps its own in

    def __init__(self, profile: str) -> None:
        import redis

        self.semantics = SEMANTICS[profile]
        self.server = None
        url = os.environ.get(URL_VARIABLE)
        if url is None:
            from benchmarks.reference_designs.redisq.server import start_redis

            self.server = start_redis()
            url = f"redis://127.0.0.1:{self.server.port}/0"
        self._url = url
        self._owner: RedisQueueTarget | None = None  # set on a shared connection: the target that owns the queues
        self._clock_lock = threading.Lock()  # one per owner, shared by its connections: see _sleep_until
        self.redis = redis.Redis.from_url(url, socket_timeout=10)
        try:
            self.redis.ping()
        except redis.RedisError as error:
            self.close()
            raise TargetError(f"Redis at {url.split('@')[-1]} does not answer: {error}") from None
        self._namespace = f"sqsconf-{uuid.uuid4().hex[:12]}"
        self._case = 0
        self.reset()

    def version(self) -> str:
        return f"1.0 on Redis {self.redis.info('server')['redis_version']}"

    @property
    def clock(self) -> VirtualClock:
        """The case's clock: a new one per case, made by the owner; a shared connection reads its owner's."""
        return self._clock if self._owner is None else self._owner.clock

    @clock.setter
    def clock(self, clock: VirtualClock) -> None:
        self._clock = clock

    def reset(self) -> None:
        """A new case: the owner forgets its keys and starts a new clock and namespace. On a shared connection it
        deletes nothing: the connection only follows its owner's current case (as every operation does)."""
        if self._owner is not None:
            self._follow()
            return
        self._forget()
        self.clock = VirtualClock()  # before the case moves on: a connection that follows the new case reads it
        self._case += 1
        self.store = self._new_store()

    def _new_store(self) -> RedisQueues:
        return self.store_class(self.redis, self.semantics, self.clock.now, self._sleep_until,
                                f"{self._namespace}:{self._case}")

    def _sleep_until(self, t: float) -> None:
        """A long poll lets virtual time pass to t. VirtualClock.advance_to reads, then writes: two connections'
        advances interleaved there could move the shared clock back, so the owner's connections take turns."""
        with self._clock_lock:
            self.clock.advance_to(t)

    def shared_connection(self) -> RedisQueueTarget:
        """Another client of these very queues, of this target's class (a mutant's connections carry its bug): its
        own Redis client and connection pool on the same URL, the same namespace, and a store of the same class
        over the owner's clock. All the per-case state is the owner's: the case number (which names the keys) and
        the clock, read afresh from the owner by each operation; the queues themselves are in Redis. Each thread
        uses its own connection. Its `close()` closes its client only; its `reset()` deletes nothing."""
        import redis

        owner = self._owner or self
        other = object.__new__(type(self))
        other.__dict__.update(owner.__dict__)
        other._owner = owner
        other.server = None
        other.redis = redis.Redis.from_url(owner._url, socket_timeout=10)
        other._case = -1  # attached to the owner's case by _follow
        other._follow()
        return other

    def _follow(self) -> None:
        """A shared connection: on the owner's current case, with a store over its own client and the owner's
        clock. The owner resets only between cases, when no connection is running an operation."""
        assert self._owner is not None
        if self._case != self._owner._case:
            self._case = self._owner._case
            self.store = self._new_store()

    def _forget(self) -> None:
        """Delete this target's keys: only those under its own namespace."""
        for key in self.redis.scan_iter(match=f"{self._namespace}:*", count=1000):
            self.redis.delete(key)

    def close(self) -> None:
        if self._owner is not None:  # a shared connection owns nothing but its client
            self.redis.close()
            return
        try:
            if hasattr(self, "_namespace"):
                self._forget()
            self.redis.close()
        finally:
            if self.server is not None:
                self.server.stop()
                self.server = None

    def execute(self, op: Operation) -> Response:
        if self._owner is not None:
            self._follow()
        try:
            return self._execute(op)
        except QueueError as error:
            return error.error
        except Missing as missing:
            raise Unsupported(f"{self.name}: {missing}") from None

    def _execute(self, op: Operation) -> Response:
        store = self.store
        if isinstance(op, CreateQueue):
            store.create_queue(op.queue, op.attributes)
            return Ok()
        if isinstance(op, SetQueueAttributes):
            store.set_attributes(op.queue, op.attributes)
            return Ok()
        if isinstance(op, GetQueueAttributes):
            return AttributesOk(store.attributes(op.queue))
        if isinstance(op, SendMessage):
            return SendOk(store.send(op.queue, op.body, delay=op.delay_seconds, group=op.group_id,
                                     dedup=op.dedup_id))
        if isinstance(op, ReceiveMessage):
            return self._receive(op)
        if isinstance(op, ChangeMessageVisibility):
            minted = store.change_visibility(op.queue, op.receipt_handle, op.visibility_timeout)
            return ChangeOk() if minted is None else ChangeOk(minted[0], round(minted[1] * 1000))
        if isinstance(op, DeleteMessage):
            store.delete(op.queue, op.receipt_handle)
            return Ok()
        if isinstance(op, ChangeMessageVisibilityBatch):
            return self._batch(op, lambda e: store.change_visibility(op.queue, e.receipt_handle,
                                                                     e.visibility_timeout))
        if isinstance(op, DeleteMessageBatch):
            return self._batch(op, lambda e: store.delete(op.queue, e.receipt_handle))
        if isinstance(op, PurgeQueue):
            store.purge(op.queue)
            return Ok()
        if isinstance(op, PeekMessage):
            return PeekOk(tuple(ReceivedMessage(p.message_id, p.body, None, p.receive_count,
                                                None if p.first_receive is None else round(p.first_receive * 1000))
                                for p in store.peek(op.queue, op.max_messages)))
        raise Missing(f"no {type(op).__name__}")

    def _receive(self, op: ReceiveMessage) -> Response:
        got = self.store.receive(op.queue, max_messages=op.max_messages, visibility_timeout=op.visibility_timeout,
                                 wait_seconds=op.wait_time_seconds, attempt_id=op.attempt_id)
        return ReceiveOk(tuple(ReceivedMessage(r.message_id, r.body, r.handle, r.receive_count,
                                               round(r.first_receive * 1000)) for r in got))

    def _batch(self, op, single) -> Response:
        self.store.check_batch([e.id for e in op.entries])
        successful, failed = [], []
        for entry in op.entries:
            try:
                single(entry)
                successful.append(entry.id)
            except QueueError as error:
                failed.append(EntryFailure(entry.id, error.error.code, error.error.message))
        return BatchOk(tuple(successful), tuple(failed))
