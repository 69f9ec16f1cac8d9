"""The suite's adapter for the Redis design: operations in, the library's answers out, on the suite's clock.

    sqs-conformance run --profile sqs-standard \
        --target python:benchmarks.reference_designs.redisq.target:RedisQueueTarget

It starts a redis-server of its own on 127.0.0.1 (stopped by its pid at close), or uses the Redis named by
SQS_CONFORMANCE_REDIS_URL, where it touches only keys under a namespace it made up and deletes them at close.
"""

from __future__ import annotations

import os
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

    def reset(self) -> None:
        self._forget()
        self._case += 1
        self.clock = VirtualClock()
        self.store = self.store_class(self.redis, self.semantics, self.clock.now, self.clock.advance_to,
                                      f"{self._namespace}:{self._case}")

    def _forget(self) -> None:
        """Delete this target's keys: only those under its own namespace."""
        for key in self.redis.scan_iter(match=f"{self._namespace}:*", count=1000):
            self.redis.delete(key)

    def close(self) -> None:
        try:
            if hasattr(self, "_namespace"):
                self._forget()
            self.redis.close()
        finally:
            if self.server is not None:
                self.server.stop()
                self.server = None

    def execute(self, op: Operation) -> Response:
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
