"""The queue library: queues on one Redis, under a namespace of their own, on the caller's clock.

Arguments are checked here, in the order SQS checks them; the state changes are the Lua scripts of
`scripts.py`. Errors are raised as `QueueError` carrying SQS's (or SMQ's) code and text, from `model.errors`,
so that a client sees what it would see from the service.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from collections.abc import Callable

from redis import Redis, WatchError

from benchmarks.reference_designs.redisq import scripts
from benchmarks.reference_designs.redisq.semantics import Semantics
from sqs_conformance.model import errors
from sqs_conformance.model.values import Error, ErrorSpec

SETTINGS = {"VisibilityTimeout": "vt", "DelaySeconds": "delay", "ReceiveMessageWaitTimeSeconds": "wait"}
_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


class QueueError(Exception):
    def __init__(self, spec: ErrorSpec) -> None:
        self.error: Error = spec.instantiate()
        super().__init__(f"{self.error.code}: {self.error.message}")


class Missing(Exception):
    """What this design does not have (an operation, an attribute, a parameter)."""


@dataclass(frozen=True)
class Received:
    message_id: str
    body: str
    handle: str
    receive_count: int
    first_receive: float  # seconds on the caller's clock


@dataclass(frozen=True)
class Peeked:
    message_id: str
    body: str
    receive_count: int
    first_receive: float | None


def _int_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _as_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


class RedisQueues:
    """`clock()` is now; `sleep_until(t)` lets time pass to t (a long poll waits with it)."""

    SOURCES = {name: getattr(scripts, name) for name in ("SEND", "RECEIVE", "CHANGE", "DELETE", "PURGE")}

    def __init__(self, redis: Redis, semantics: Semantics, clock: Callable[[], float],
                 sleep_until: Callable[[float], None], namespace: str) -> None:
        self.redis = redis
        self.semantics = semantics
        self.clock = clock
        self.sleep_until = sleep_until
        self.namespace = namespace
        self._scripts = {name: redis.register_script(source) for name, source in self.SOURCES.items()}

    # --- keys and helpers ---------------------------------------------------------------------------------

    def _prefix(self, queue: str) -> str:
        return f"{self.namespace}:q:{queue}"

    def _run(self, script: str, queue: str, *args: object) -> list:
        now = self.clock()
        return self._scripts[script](keys=[self._prefix(queue), self.namespace], args=[repr(float(now)), *args])

    def _meta(self, queue: str) -> dict[str, str]:
        meta = self.redis.hgetall(self._prefix(queue) + ":meta")
        if not meta:
            raise Missing(f"no queue {queue}")
        return {k.decode(): v.decode() for k, v in meta.items()}

    def _range_error(self, name: str, value: object) -> ErrorSpec | None:
        s = self.semantics
        if _int_in(value, s.visibility_min, s.visibility_max):
            return None
        return errors.out_of_range(name, value, s.dialect)

    # --- queues --------------------------------------------------------------------------------------------

    def create_queue(self, queue: str, attributes: dict[str, object]) -> None:
        fields = self._parse_attributes(attributes, creating=True)
        meta = {"vt": "30", "delay": "0", "wait": "0", "dlq": "", "max_receives": "0", "purged_at": "",
                "cbd": "0"} | fields
        self.redis.hset(self._prefix(queue) + ":meta", mapping=meta)

    def set_attributes(self, queue: str, attributes: dict[str, object]) -> None:
        self._meta(queue)
        fields = self._parse_attributes(attributes, creating=False)
        self.redis.hset(self._prefix(queue) + ":meta", mapping=fields)

    def _parse_attributes(self, attributes: dict[str, object], *, creating: bool) -> dict[str, str]:
        s = self.semantics
        limits = {"VisibilityTimeout": (s.visibility_min, s.visibility_max, True),
                  "DelaySeconds": (0, s.max_delay, s.delay), "ReceiveMessageWaitTimeSeconds": (0, s.max_wait,
                                                                                             s.long_poll)}
        fields: dict[str, str] = {}
        for name, value in attributes.items():
            if name in limits:
                low, high, supported = limits[name]
                if not supported:
                    raise Missing(f"no queue attribute {name}")
                number = _as_int(value)
                if number is None or not _int_in(number, low, high):
                    raise QueueError(errors.out_of_range(name, value, "smq") if s.dialect == "smq"
                                     else errors.attribute_out_of_range(name, value))
                fields[SETTINGS[name]] = str(number)
            elif name == "RedrivePolicy" and s.redrive:
                policy = json.loads(value) if isinstance(value, str) else dict(value)  # type: ignore[arg-type]
                count = _as_int(policy.get("maxReceiveCount"))
                if count is None or not _int_in(count, 1, 1000):
                    raise QueueError(errors.attribute_out_of_range("RedrivePolicy", value))
                fields |= {"dlq": self._prefix(policy["deadLetterTargetQueue"]), "max_receives": str(count)}
            elif name == "FifoQueue" and creating:
                if (str(value).lower() == "true") != s.fifo:
                    raise Missing(f"FifoQueue={value} on {s.name}")
            elif name == "ContentBasedDeduplication" and creating and s.fifo:
                fields["cbd"] = "1" if str(value).lower() == "true" else "0"
            else:
                raise Missing(f"no queue attribute {name}")
        return fields

    def attributes(self, queue: str) -> dict[str, str]:
        meta = self._meta(queue)
        now = self.clock()
        counts = {"ApproximateNumberOfMessages": 0, "ApproximateNumberOfMessagesNotVisible": 0,
                  "ApproximateNumberOfMessagesDelayed": 0}
        for member, score in self.redis.zrange(self._prefix(queue) + ":due", 0, -1, withscores=True):
            if score <= now:
                counts["ApproximateNumberOfMessages"] += 1
            elif self.redis.hget(f"{self.namespace}:m:{member.decode()}", "state") == b"delayed":
                counts["ApproximateNumberOfMessagesDelayed"] += 1
            else:
                counts["ApproximateNumberOfMessagesNotVisible"] += 1
        shown = {name: str(v) for name, v in counts.items()}
        return shown | {name: meta[field] for name, field in SETTINGS.items()}

    def purge(self, queue: str) -> None:
        if not self.semantics.purge:
            raise Missing("no PurgeQueue")
        self._meta(queue)  # the queue exists
        now = self.clock()
        self._claim_purge(self._prefix(queue) + ":meta", now)
        self._run("PURGE", queue)

    def _claim_purge(self, meta_key: str, now: float) -> None:
        """Take the queue's purge slot, or refuse: the check and the claim in one transaction (WATCH), so that two
        consumers purging at once cannot both pass the check (a race the concurrent suite caught)."""
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(meta_key)
                    purged_at = pipe.hget(meta_key, "purged_at")
                    if purged_at and now < float(purged_at) + self.semantics.purge_interval:
                        raise QueueError(errors.purge_in_progress())
                    pipe.multi()
                    pipe.hset(meta_key, "purged_at", repr(float(now)))
                    pipe.execute()
                    return
                except WatchError:
                    continue  # another purge claimed it meanwhile: look again

    # --- messages ------------------------------------------------------------------------------------------

    def send(self, queue: str, body: str, *, delay: int | None = None, group: str | None = None,
             dedup: str | None = None) -> str:
        s = self.semantics
        meta = self._meta(queue)
        if s.fifo:
            if group is None:
                raise QueueError(errors.missing_group_id())
            if delay is not None:
                raise QueueError(errors.fifo_message_delay(delay))
            if dedup is None and meta["cbd"] == "1":
                dedup = hashlib.sha256(body.encode()).hexdigest()
            if dedup is None:
                raise QueueError(errors.missing_dedup_id())
        elif group is not None or dedup is not None:
            raise Missing("message groups on a standard queue")
        if delay is not None and not s.delay:
            raise Missing("no per-message delay")
        if delay is not None and not _int_in(delay, 0, s.max_delay):
            raise QueueError(errors.out_of_range("DelaySeconds", delay, s.dialect))
        seconds = int(meta["delay"]) if delay is None else delay
        message_id, _ = self._run("SEND", queue, body, seconds, group or "", dedup or "", s.dedup_window)
        return message_id.decode()

    def receive(self, queue: str, *, max_messages: int | None = None, visibility_timeout: int | None = None,
                wait_seconds: int | None = None, attempt_id: str | None = None) -> list[Received]:
        """A long poll (a wait given, or the queue's default) sleeps until the next message is due or the wait
        is over, and tries again."""
        wait = wait_seconds
        if wait is None and self.semantics.long_poll:
            wait = int(self._meta(queue)["wait"])
        end = self.clock() + (wait or 0)
        replay = True
        while True:
            got, replayed = self._receive_now(queue, max_messages, visibility_timeout, wait_seconds, attempt_id,
                                              replay=replay)
            if got or replayed or not wait or self.clock() >= end:
                return got
            replay = False  # the next try is this same request, not a retry of it
            due = self._next_due(queue, self.clock())
            self.sleep_until(min(end, due) if due is not None else end)

    def _receive_now(self, queue: str, max_messages: int | None, visibility_timeout: int | None,
                     wait_seconds: int | None, attempt_id: str | None,
                     replay: bool = True) -> tuple[list[Received], bool]:
        """One try of a receive: what it got, and whether that is the answer of an earlier request with the same
        attempt id (only if `replay`)."""
        s = self.semantics
        meta = self._meta(queue)
        if attempt_id is not None and not s.fifo:
            raise Missing("ReceiveRequestAttemptId on a standard queue")
        if s.validates_receive and max_messages is not None and not _int_in(max_messages, 1, s.max_messages):
            raise QueueError(errors.max_messages_out_of_range(max_messages))
        if wait_seconds and not s.long_poll:
            raise Missing("no long polling")
        if s.validates_receive and wait_seconds and not _int_in(wait_seconds, 0, s.max_wait):
            raise QueueError(errors.wait_out_of_range(wait_seconds))
        if visibility_timeout is not None:
            problem = self._range_error("VisibilityTimeout", visibility_timeout)
            if problem is not None:
                raise QueueError(problem)
        timeout = int(meta["vt"]) if visibility_timeout is None else visibility_timeout
        most = max_messages if isinstance(max_messages, int) else 1
        how, rows = self._run("RECEIVE", queue, most, timeout, meta["max_receives"], meta["dlq"],
                              attempt_id or "", s.attempt_window, "1" if replay else "")
        return ([Received(m.decode(), b.decode(), h.decode(), int(c), float(f)) for m, b, h, c, f in rows],
                how == b"replayed")

    def _next_due(self, queue: str, after: float) -> float | None:
        """When the next message of the queue becomes receivable after `after`."""
        due = self.redis.zrangebyscore(self._prefix(queue) + ":due", f"({after!r}", "+inf", start=0, num=1,
                                       withscores=True)
        return due[0][1] if due else None

    def change_visibility(self, queue: str, handle: str, timeout: object) -> tuple[str, float] | None:
        """None, or for SMQ the new handle and the deadline."""
        s = self.semantics
        self._meta(queue)
        problem = self._range_error("VisibilityTimeout", timeout)
        if problem is not None:  # the value is checked before the handle, as SQS does
            raise QueueError(problem)
        answer = [part.decode() for part in self._run(
            "CHANGE", queue, handle, timeout, int(s.stale_handles_work), int(s.fifo), s.ceiling or 0,
            int(s.change_mints_handle), int(s.lock_unreceived))]
        if answer[0] == "ok":
            return (answer[1], float(answer[2])) if len(answer) > 1 else None
        raise QueueError(self._change_refused(answer[0], handle, timeout))

    def _change_refused(self, why: str, handle: str, timeout: object) -> ErrorSpec:
        s = self.semantics
        if why == "malformed":
            return errors.malformed_handle(handle, with_text=False, dialect=s.dialect)[0]
        if s.dialect == "smq":
            return errors.smq_message_not_exist()
        return {"gone": errors.not_available_for_change(), "expired": errors.handle_expired(),
                "beyond ceiling": errors.beyond_ceiling(timeout),
                "not current": errors.not_available_for_change()}[why]

    def delete(self, queue: str, handle: str) -> None:
        s = self.semantics
        self._meta(queue)
        why = self._run("DELETE", queue, handle, int(s.fifo), int(s.stale_handles_work))[0].decode()
        if why == "ok" or why == "gone" and s.dialect == "sqs":  # deleting twice is fine in SQS
            return
        if why == "malformed":
            raise QueueError(errors.malformed_handle(handle, with_text=True, dialect=s.dialect)[0])
        raise QueueError(errors.smq_message_not_exist() if s.dialect == "smq" else errors.handle_expired())

    def peek(self, queue: str, max_messages: int) -> list[Peeked]:
        if not self.semantics.peek:
            raise Missing("no PeekMessage")
        self._meta(queue)
        rows = []
        for member in self.redis.zrange(self._prefix(queue) + ":due", 0, -1):
            fields = self.redis.hmget(f"{self.namespace}:m:{member.decode()}", "seq", "body", "count", "first")
            rows.append((int(fields[0]), member.decode(), fields[1].decode(), int(fields[2]), fields[3].decode()))
        return [Peeked(mid, body, count, float(first) if first else None)
                for _, mid, body, count, first in sorted(rows)[:max_messages]]

    # --- batches -------------------------------------------------------------------------------------------

    def check_batch(self, entry_ids: list[str]) -> None:
        if not self.semantics.batches:
            raise Missing("no batch operations")
        if not entry_ids:
            raise QueueError(errors.empty_batch())
        if len(entry_ids) > self.semantics.max_batch:
            raise QueueError(errors.too_many_entries(len(entry_ids)))
        if any(_ENTRY_ID.fullmatch(i) is None for i in entry_ids):
            raise QueueError(errors.invalid_batch_entry_id())
        if len(set(entry_ids)) != len(entry_ids):
            raise QueueError(errors.batch_ids_not_distinct())
