"""leaseq: an in-memory SQS look-alike (standard and FIFO) in which visibility timeouts are leases.

A receive grants a lease to a new receipt: an expiry time on the virtual clock, and a 12-hour ceiling counted from
the moment the ReceiveMessage request arrived. A message is receivable when it is past its delay and holds no live
lease; ChangeMessageVisibility replaces the lease (never adds to it); a FIFO group is locked, from its first
in-flight message on, by the leases of its in-flight messages. Expired leases are reclaimed when an operation touches
the queue, from a heap ordered by expiry; nothing runs in the background and nothing reads system time.

Written from the SQS developer guides (the seed documents) and the observed-AWS notes (EVIDENCE.md) alone; every
choice where they are silent or hedge is listed in README.md. All of the design's logic lives in methods of
`LeaseQueueTarget`, so that a mutant (mutants.py) is one edited method of a subclass.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqs_conformance.adapters.base import ProfileNotSpoken, SharedView, Target, Unsupported, VirtualClock
from sqs_conformance.model.values import (
    AttributesOk,
    BatchOk,
    ChangeMessageVisibility,
    ChangeMessageVisibilityBatch,
    ChangeOk,
    CreateQueue,
    DeleteMessage,
    DeleteMessageBatch,
    EntryFailure,
    Error,
    GetQueueAttributes,
    Ok,
    Operation,
    PeekMessage,
    PeekOk,
    PurgeQueue,
    ReceivedMessage,
    ReceiveMessage,
    ReceiveOk,
    Response,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)

PROFILES = ("sqs-standard", "sqs-fifo")

_QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")
_FIFO_QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,75}\.fifo")
_BATCH_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
# MessageGroupId, MessageDeduplicationId, ReceiveRequestAttemptId: alphanumerics and punctuation, 1..128.
_FIFO_TOKEN = re.compile(r"[A-Za-z0-9!-/:-@\[-`{-~]{1,128}")
_INVALID_BODY_CHAR = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")


def as_int(raw: Any) -> int | None:
    """An integer argument as sent (an int, or its decimal text), or None when it is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and _INTEGER.fullmatch(raw):
        return int(raw)
    return None


def as_bool(raw: Any) -> bool | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return None


def ms(seconds: float) -> int:
    return int(round(seconds * 1000))


# --- state -------------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Receipt:
    """What a receipt handle names: one receive of one message. The ceiling is the latest deadline any change made
    through this handle may set (12 hours after the ReceiveMessage request arrived)."""

    handle: str
    queue: str
    message_id: str
    requested_at: float
    ceiling: float
    changed: bool = False  # a ChangeMessageVisibility went through this handle (ends ReceiveRequestAttemptId reuse)


@dataclass(eq=False)
class Lease:
    receipt: Receipt
    expires_at: float


@dataclass(eq=False)
class Message:
    id: str
    body: str
    seq: int
    sent_at: float
    visible_from: float  # the end of its delay
    group: str | None = None
    dedup_key: str | None = None
    receive_count: int = 0
    first_receive_at: float | None = None
    lease: Lease | None = None


@dataclass(frozen=True)
class Redrive:
    target: str  # the dead-letter queue's name (ours)
    max_receive_count: int


@dataclass(eq=False)
class DedupRecord:
    message_id: str
    sent_at: float


@dataclass(eq=False)
class Attempt:
    at: float
    receipts: tuple[Receipt, ...]


@dataclass(eq=False)
class Queue:
    name: str
    fifo: bool
    attrs: dict[str, Any]
    created_at: float
    modified_at: float
    messages: dict[str, Message] = field(default_factory=dict)  # in queue order (send, or arrival by redrive)
    expiries: list[tuple[float, int, Lease]] = field(default_factory=list)  # heap; stale entries are skipped
    dedup: dict[str, DedupRecord] = field(default_factory=dict)
    attempts: dict[str, Attempt] = field(default_factory=dict)
    purged_at: float | None = None


# --- the design and its adapter ----------------------------------------------------------------------------

class LeaseQueueTarget(Target):
    """The queue service and its adapter in one: `execute` takes the suite's operations on the virtual clock."""

    name = "leaseq"
    tolerance = 0.0

    MAX_VISIBILITY = 12 * 60 * 60
    MAX_DELAY = 15 * 60
    MAX_WAIT = 20
    MAX_BATCH = 10
    DEDUP_WINDOW = 5 * 60
    ATTEMPT_WINDOW = 5 * 60
    PURGE_INTERVAL = 60
    INFLIGHT_LIMIT = 120_000
    MAX_RECEIVE_COUNT = 1000

    _HANDLERS = {
        CreateQueue: "_create_queue",
        SetQueueAttributes: "_set_queue_attributes",
        GetQueueAttributes: "_get_queue_attributes",
        SendMessage: "_send_message",
        ReceiveMessage: "_receive_message",
        ChangeMessageVisibility: "_change_message_visibility",
        ChangeMessageVisibilityBatch: "_change_message_visibility_batch",
        DeleteMessage: "_delete_message",
        DeleteMessageBatch: "_delete_message_batch",
        PurgeQueue: "_purge_queue",
        PeekMessage: "_peek_message",
    }

    def __init__(self, profile: str = "sqs-standard") -> None:
        if profile not in PROFILES:
            raise ProfileNotSpoken(f"leaseq speaks {' and '.join(PROFILES)}, not {profile}")
        self.profile = profile
        self.profiles = frozenset({profile})
        self.clock = VirtualClock()
        self._lock = threading.RLock()
        self._forget()

    def _forget(self) -> None:
        self._queues: dict[str, Queue] = {}
        self._receipts: dict[str, Receipt] = {}
        self._serial = itertools.count(1)

    # --- Target ------------------------------------------------------------------------------------------

    def execute(self, op: Operation) -> Response:
        handler = self._HANDLERS.get(type(op))
        if handler is None:
            raise Unsupported(f"leaseq has no operation {type(op).__name__}")
        with self._lock:
            return getattr(self, handler)(op)

    def version(self) -> str:
        return "leaseq 1"

    def shared_connection(self) -> Target | None:
        return SharedView(self)

    def reset(self) -> None:
        with self._lock:
            self._forget()

    def close(self) -> None:
        self.reset()

    # --- names, ids, errors ------------------------------------------------------------------------------

    def _our_name(self, name: str) -> str:
        """The suite's queue name as this service spells it: a FIFO profile's queues carry the .fifo suffix."""
        if self.profile == "sqs-fifo" and not name.endswith(".fifo"):
            return name + ".fifo"
        return name

    def _arn(self, name: str) -> str:
        return f"arn:aws:sqs:us-east-1:000000000000:{name}"

    def _new_message_id(self) -> str:
        n = next(self._serial)
        return str(uuid.UUID(int=(n << 64) | n, version=4))

    def _new_handle(self, queue: Queue, msg: Message) -> str:
        n = next(self._serial)
        digest = hashlib.sha256(f"{queue.name}/{msg.id}/{n}".encode()).hexdigest()[:24]
        return f"AQEB{n:010d}{digest}"

    def _queue(self, name: str) -> Queue | Error:
        queue = self._queues.get(self._our_name(name))
        if queue is None:
            return Error("NonExistentQueue", "The specified queue does not exist.")
        return queue

    @staticmethod
    def _invalid(name: str, raw: Any, reason: str) -> Error:
        return Error("InvalidParameterValue", f"Value {raw} for parameter {name} is invalid. Reason: {reason}")

    def _param(self, raw: Any, name: str, low: int, high: int, reason: str) -> int | Error:
        value = as_int(raw)
        if value is None or not low <= value <= high:
            return self._invalid(name, raw, reason)
        return value

    @staticmethod
    def _invalid_handle(handle: Any) -> Error:
        return Error("ReceiptHandleIsInvalid", f'The input receipt handle "{handle}" is not a valid receipt handle.')

    def _expired(self, handle: str) -> Error:
        return self._invalid("ReceiptHandle", handle, "The receipt handle has expired.")

    def _gone(self, handle: str) -> Error:
        return self._invalid(
            "ReceiptHandle", handle, "Message does not exist or is not available for visibility timeout change.")

    def _receipt(self, queue: Queue, handle: Any) -> Receipt | None:
        receipt = self._receipts.get(handle) if isinstance(handle, str) else None
        if receipt is None or receipt.queue != queue.name:
            return None
        return receipt

    # --- leases ------------------------------------------------------------------------------------------

    def _reclaim(self, queue: Queue, now: float) -> None:
        """Release every lease whose expiry has come (a lease expiring at t no longer holds at t), and drop the
        messages past the retention period."""
        heap = queue.expiries
        while heap and heap[0][0] <= now:
            _, _, lease = heapq.heappop(heap)
            msg = queue.messages.get(lease.receipt.message_id)
            if msg is not None and msg.lease is lease:
                self._release(queue, msg)
        retention = queue.attrs["MessageRetentionPeriod"]
        for msg in [m for m in queue.messages.values() if now >= m.sent_at + retention]:
            del queue.messages[msg.id]

    def _release(self, queue: Queue, msg: Message) -> None:
        msg.lease = None

    def _grant(self, queue: Queue, msg: Message, receipt: Receipt, expires_at: float) -> None:
        lease = Lease(receipt, expires_at)
        msg.lease = lease
        heapq.heappush(queue.expiries, (expires_at, next(self._serial), lease))

    def _lease_out(self, queue: Queue, msg: Message, timeout: int, requested_at: float, now: float) -> Receipt:
        """One receive of `msg`: a new receipt, and a lease of `timeout` seconds from now."""
        msg.receive_count += 1
        if msg.first_receive_at is None:
            msg.first_receive_at = now
        receipt = Receipt(self._new_handle(queue, msg), queue.name, msg.id, requested_at,
                          ceiling=requested_at + self.MAX_VISIBILITY)
        self._receipts[receipt.handle] = receipt
        self._grant(queue, msg, receipt, now + timeout)
        return receipt

    def _next_event(self, queue: Queue, now: float) -> float | None:
        """The earliest time after `now` at which a lease expires or a delay ends: when a long poll looks again."""
        times = [m.lease.expires_at for m in queue.messages.values() if m.lease is not None]
        times += [m.visible_from for m in queue.messages.values() if m.lease is None]
        later = [t for t in times if t > now]
        return min(later) if later else None

    # --- attributes --------------------------------------------------------------------------------------

    def _attribute_ranges(self) -> dict[str, tuple[int, int, int]]:
        """Integer queue attributes: lowest, highest, default."""
        return {
            "VisibilityTimeout": (0, self.MAX_VISIBILITY, 30),
            "DelaySeconds": (0, self.MAX_DELAY, 0),
            "ReceiveMessageWaitTimeSeconds": (0, self.MAX_WAIT, 0),
            "MessageRetentionPeriod": (60, 14 * 24 * 60 * 60, 4 * 24 * 60 * 60),
            "MaximumMessageSize": (1024, 256 * 1024, 256 * 1024),
        }

    def _defaults(self, fifo: bool) -> dict[str, Any]:
        attrs: dict[str, Any] = {name: default for name, (_, _, default) in self._attribute_ranges().items()}
        attrs["RedrivePolicy"] = None
        if fifo:
            attrs.update(ContentBasedDeduplication=False, DeduplicationScope="queue", FifoThroughputLimit="perQueue")
        return attrs

    def _parse_attributes(self, raw: dict[str, Any], fifo: bool, source: str) -> dict[str, Any] | Error:
        """Settable attributes, parsed; the first invalid one is the answer. FifoQueue is the caller's."""
        ranges = self._attribute_ranges()
        choices = {"DeduplicationScope": ("messageGroup", "queue"),
                   "FifoThroughputLimit": ("perQueue", "perMessageGroupId")}
        parsed: dict[str, Any] = {}
        for name, value in raw.items():
            if name in ranges:
                low, high, _ = ranges[name]
                number = as_int(value)
                if number is None or not low <= number <= high:
                    return Error("InvalidAttributeValue", f"Invalid value for the parameter {name}.")
                parsed[name] = number
            elif name == "RedrivePolicy":
                policy = self._parse_redrive(value, fifo, source)
                if isinstance(policy, Error):
                    return policy
                parsed[name] = policy
            elif fifo and name == "ContentBasedDeduplication":
                flag = as_bool(value)
                if flag is None:
                    return Error("InvalidAttributeValue", f"Invalid value for the parameter {name}.")
                parsed[name] = flag
            elif fifo and name in choices:
                if value not in choices[name]:
                    return Error("InvalidAttributeValue", f"Invalid value for the parameter {name}.")
                parsed[name] = value
            else:
                return Error("InvalidAttributeName", f"Unknown Attribute {name}.")
        return parsed

    def _parse_redrive(self, raw: Any, fifo: bool, source: str) -> Redrive | None | Error:
        if raw == "" or raw is None:
            return None  # an empty policy removes the redrive
        text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"), default=str)

        def invalid(reason: str) -> Error:
            return self._invalid("RedrivePolicy", text, reason)

        policy = raw
        if isinstance(raw, str):
            try:
                policy = json.loads(raw)
            except ValueError:
                return invalid("Redrive policy is not a valid JSON map.")
        if not isinstance(policy, dict):
            return invalid("Redrive policy is not a valid JSON map.")
        # The dead-letter queue is named by deadLetterTargetQueue (a queue name: the suite's adapter contract) or by
        # deadLetterTargetArn (an ARN or a bare name, as SQS takes it); given both, they must name the same queue.
        refs = {key: policy[key] for key in ("deadLetterTargetQueue", "deadLetterTargetArn") if key in policy}
        if not refs:
            return invalid("Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
        if "maxReceiveCount" not in policy:
            return invalid("Redrive policy does not contain mandatory attribute: maxReceiveCount.")
        count = as_int(policy["maxReceiveCount"])
        if count is None or not 1 <= count <= self.MAX_RECEIVE_COUNT:
            return invalid(f"Invalid value for maxReceiveCount: {policy['maxReceiveCount']}, valid values are from 1 "
                           f"to {self.MAX_RECEIVE_COUNT} both inclusive.")
        if any(not isinstance(ref, str) or not ref for ref in refs.values()):
            return invalid("Dead letter target does not exist.")
        # An ARN's part after the last ':' names the queue; a name is taken whole. Either is mapped as names are.
        names = {self._our_name(ref.rsplit(":", 1)[-1] if key == "deadLetterTargetArn" else ref)
                 for key, ref in refs.items()}
        if len(names) > 1:
            return invalid("deadLetterTargetQueue and deadLetterTargetArn name different queues.")
        target = self._queues.get(names.pop())
        if target is None:
            return invalid("Dead letter target does not exist.")
        if target.name == source:
            return invalid("Dead letter target cannot be the source queue.")
        if target.fifo != fifo:
            return invalid("Dead-letter queue must be same type of queue as the source.")
        return Redrive(target.name, count)

    def _render(self, name: str, value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, Redrive):
            return json.dumps({"deadLetterTargetArn": self._arn(value.target),
                               "maxReceiveCount": value.max_receive_count}, separators=(",", ":"))
        return str(value)

    # --- operations: queues ------------------------------------------------------------------------------

    def _create_queue(self, op: CreateQueue) -> Response:
        name = self._our_name(op.queue)
        raw = dict(op.attributes)
        if self.profile == "sqs-fifo":
            raw.setdefault("FifoQueue", "true")
        fifo = False
        if "FifoQueue" in raw:
            flag = as_bool(raw.pop("FifoQueue"))
            if flag is None:
                return Error("InvalidAttributeValue", "Invalid value for the parameter FifoQueue.")
            fifo = flag
        if fifo and not _FIFO_QUEUE_NAME.fullmatch(name):
            return Error("InvalidParameterValue", "The name of a FIFO queue can only include alphanumeric "
                         "characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
        if not fifo and not _QUEUE_NAME.fullmatch(name):
            return Error("InvalidParameterValue",
                         "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
        parsed = self._parse_attributes(raw, fifo, name)
        if isinstance(parsed, Error):
            return parsed
        attrs = self._defaults(fifo)
        attrs.update(parsed)
        existing = self._queues.get(name)
        if existing is not None:
            if existing.fifo != fifo:
                return Error("QueueAlreadyExists",
                             "A queue already exists with the same name and a different value for attribute FifoQueue")
            for key, value in attrs.items():
                if existing.attrs.get(key) != value:
                    return Error("QueueAlreadyExists",
                                 f"A queue already exists with the same name and a different value for attribute {key}")
            return Ok()
        now = self.clock.now()
        self._queues[name] = Queue(name, fifo, attrs, created_at=now, modified_at=now)
        return Ok()

    def _set_queue_attributes(self, op: SetQueueAttributes) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        parsed = self._parse_attributes(dict(op.attributes), queue.fifo, queue.name)
        if isinstance(parsed, Error):
            return parsed
        queue.attrs.update(parsed)  # later receives and sends see the new values; leases already granted stay
        queue.modified_at = self.clock.now()
        return Ok()

    def _get_queue_attributes(self, op: GetQueueAttributes) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        now = self.clock.now()
        self._reclaim(queue, now)
        visible = not_visible = delayed = 0
        for msg in queue.messages.values():
            if msg.lease is not None:
                not_visible += 1
            elif now < msg.visible_from:
                delayed += 1
            else:
                visible += 1
        out = {name: self._render(name, value) for name, value in queue.attrs.items() if value is not None}
        out.update(
            QueueArn=self._arn(queue.name),
            ApproximateNumberOfMessages=str(visible),
            ApproximateNumberOfMessagesNotVisible=str(not_visible),
            ApproximateNumberOfMessagesDelayed=str(delayed),
            CreatedTimestamp=str(int(queue.created_at)),
            LastModifiedTimestamp=str(int(queue.modified_at)),
        )
        if queue.fifo:
            out["FifoQueue"] = "true"
        return AttributesOk(out)

    def _purge_queue(self, op: PurgeQueue) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        now = self.clock.now()
        if queue.purged_at is not None and now < queue.purged_at + self.PURGE_INTERVAL:
            return Error("PurgeQueueInProgress",
                         f"Only one PurgeQueue operation on {queue.name} is allowed every 60 seconds.", 403)
        self._reclaim(queue, now)
        queue.messages.clear()  # in-flight messages too; their heap entries go stale and are skipped
        queue.purged_at = now
        return Ok()

    # --- operations: messages ----------------------------------------------------------------------------

    def _send_message(self, op: SendMessage) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        now = self.clock.now()
        self._reclaim(queue, now)
        body = op.body
        if not isinstance(body, str):
            return self._invalid("MessageBody", body, "Message body must be a string.")
        if body == "":
            return Error("MissingParameter", "The request must contain the parameter MessageBody.")
        bad = _INVALID_BODY_CHAR.search(body)
        if bad is not None:
            return Error("InvalidMessageContents",
                         f"Invalid binary character '#x{ord(bad.group()):X}' was found in the message body, the set "
                         "of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | "
                         "#x10000 to #x10FFFF")
        limit = queue.attrs["MaximumMessageSize"]
        if len(body.encode("utf-8")) > limit:
            return Error("InvalidParameterValue",
                         f"One or more parameters are invalid. Reason: Message must be shorter than {limit} bytes.")
        delay = None
        if op.delay_seconds is not None:
            delay = self._param(op.delay_seconds, "DelaySeconds", 0, self.MAX_DELAY,
                                f"DelaySeconds must be >= 0 and <= {self.MAX_DELAY}.")
            if isinstance(delay, Error):
                return delay
        if op.group_id is not None and not (isinstance(op.group_id, str) and _FIFO_TOKEN.fullmatch(op.group_id)):
            return self._invalid("MessageGroupId", op.group_id,
                                 "MessageGroupId can only include alphanumeric and punctuation characters. "
                                 "1 to 128 in length.")
        if not queue.fifo:
            if op.dedup_id is not None:
                return self._invalid("MessageDeduplicationId", op.dedup_id,
                                     "The request include parameter that is not valid for this queue type.")
            return self._enqueue(queue, body, delay, None, None, now)
        if op.group_id is None:
            return Error("MissingParameter", "The request must contain the parameter MessageGroupId.")
        if delay:
            return self._invalid("DelaySeconds", op.delay_seconds,
                                 "The request include parameter that is not valid for this queue type.")
        if op.dedup_id is not None:
            if not (isinstance(op.dedup_id, str) and _FIFO_TOKEN.fullmatch(op.dedup_id)):
                return self._invalid("MessageDeduplicationId", op.dedup_id,
                                     "MessageDeduplicationId can only include alphanumeric and punctuation "
                                     "characters. 1 to 128 in length.")
            key = op.dedup_id
        elif queue.attrs["ContentBasedDeduplication"]:
            key = hashlib.sha256(body.encode("utf-8")).hexdigest()
        else:
            return Error("InvalidParameterValue", "The queue should either have ContentBasedDeduplication enabled "
                         "or MessageDeduplicationId provided explicitly")
        if queue.attrs["DeduplicationScope"] == "messageGroup":
            key = f"{op.group_id}\x00{key}"
        record = queue.dedup.get(key)
        if record is not None and now < record.sent_at + self.DEDUP_WINDOW:
            return SendOk(record.message_id)  # a duplicate inside the window: accepted, not enqueued again
        return self._enqueue(queue, body, None, op.group_id, key, now)

    def _enqueue(self, queue: Queue, body: str, delay: int | None, group: str | None, dedup_key: str | None,
                 now: float) -> Response:
        delay = queue.attrs["DelaySeconds"] if delay is None else delay
        msg = Message(self._new_message_id(), body, next(self._serial), sent_at=now, visible_from=now + delay,
                      group=group, dedup_key=dedup_key)
        queue.messages[msg.id] = msg
        if dedup_key is not None:
            queue.dedup[dedup_key] = DedupRecord(msg.id, now)
        return SendOk(msg.id)

    def _receive_message(self, op: ReceiveMessage) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        count = 1
        if op.max_messages is not None:
            count = self._param(op.max_messages, "MaxNumberOfMessages", 1, self.MAX_BATCH,
                                f"Must be between 1 and {self.MAX_BATCH}, if provided.")
            if isinstance(count, Error):
                return count
        timeout = None
        if op.visibility_timeout is not None:
            timeout = self._param(op.visibility_timeout, "VisibilityTimeout", 0, self.MAX_VISIBILITY,
                                  f"Must be >= 0 and <= {self.MAX_VISIBILITY}, if provided.")
            if isinstance(timeout, Error):
                return timeout
        wait = None
        if op.wait_time_seconds is not None:
            wait = self._param(op.wait_time_seconds, "WaitTimeSeconds", 0, self.MAX_WAIT,
                               f"Must be >= 0 and <= {self.MAX_WAIT}, if provided.")
            if isinstance(wait, Error):
                return wait
        attempt_id = op.attempt_id if queue.fifo else None  # a standard queue ignores it
        if attempt_id is not None and not (isinstance(attempt_id, str) and _FIFO_TOKEN.fullmatch(attempt_id)):
            return self._invalid("ReceiveRequestAttemptId", attempt_id,
                                 "ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. "
                                 "1 to 128 in length.")
        timeout = queue.attrs["VisibilityTimeout"] if timeout is None else timeout
        wait = queue.attrs["ReceiveMessageWaitTimeSeconds"] if wait is None else wait
        start = self.clock.now()
        self._reclaim(queue, start)
        if attempt_id is not None:
            prior = queue.attempts.get(attempt_id)
            if prior is not None and start < prior.at + self.ATTEMPT_WINDOW and self._repeatable(queue, prior):
                return ReceiveOk(tuple(self._view(queue.messages[r.message_id], r) for r in prior.receipts))
        if not queue.fifo and wait == 0 and self._in_flight(queue) >= self.INFLIGHT_LIMIT:
            return Error("OverLimit", f"The number of in-flight messages has reached {self.INFLIGHT_LIMIT}.", 403)
        deadline = start + wait
        while True:
            now = self.clock.now()
            self._reclaim(queue, now)
            taken = self._take(queue, count, timeout, start, now)
            if taken or now >= deadline:
                break
            wake = self._next_event(queue, now)
            if wake is None or wake > deadline:
                self.clock.advance(deadline - now)
                break
            self.clock.advance(wake - now)
        if attempt_id is not None and taken:
            queue.attempts[attempt_id] = Attempt(start, tuple(receipt for _, receipt in taken))
        return ReceiveOk(tuple(self._view(msg, receipt) for msg, receipt in taken))

    def _repeatable(self, queue: Queue, prior: Attempt) -> bool:
        """A ReceiveRequestAttemptId retry gets the same messages and handles while every one of them is still held
        by that receive's lease, and none was deleted or changed."""
        for receipt in prior.receipts:
            msg = queue.messages.get(receipt.message_id)
            if msg is None or msg.lease is None or msg.lease.receipt is not receipt or receipt.changed:
                return False
        return bool(prior.receipts)

    def _view(self, msg: Message, receipt: Receipt | None) -> ReceivedMessage:
        first = None if msg.first_receive_at is None else ms(msg.first_receive_at)
        return ReceivedMessage(msg.id, msg.body, None if receipt is None else receipt.handle, msg.receive_count, first)

    def _take(self, queue: Queue, count: int, timeout: int, requested_at: float,
              now: float) -> list[tuple[Message, Receipt]]:
        """Lease out up to `count` receivable messages, moving to the dead-letter queue those whose receive count
        would pass maxReceiveCount."""
        count = min(count, self.INFLIGHT_LIMIT - self._in_flight(queue))
        policy = queue.attrs["RedrivePolicy"]
        taken: list[tuple[Message, Receipt]] = []
        for msg in self._candidates(queue, now):
            if len(taken) >= count:
                break
            if policy is not None and msg.receive_count >= policy.max_receive_count:
                self._dead_letter(queue, msg, policy, now)
                continue
            taken.append((msg, self._lease_out(queue, msg, timeout, requested_at, now)))
        return taken

    def _in_flight(self, queue: Queue) -> int:
        return sum(1 for m in queue.messages.values() if m.lease is not None)

    def _candidates(self, queue: Queue, now: float) -> list[Message]:
        """The receivable messages in the order a receive hands them out."""
        if not queue.fifo:
            return [m for m in queue.messages.values() if m.lease is None and now >= m.visible_from]
        runs: dict[str | None, list[Message]] = {}
        blocked: set[str | None] = set()
        for msg in queue.messages.values():
            group = msg.group
            if group in blocked:
                continue
            if now < msg.visible_from:
                blocked.add(group)  # a delayed message holds back the rest of its group, to keep the order
                continue
            if msg.lease is not None:
                blocked.add(group)  # a lease locks the rest of its group
                continue
            runs.setdefault(group, []).append(msg)
        # As many messages of one group as possible, groups in the order of their oldest receivable message.
        return [msg for run in runs.values() for msg in run]

    def _dead_letter(self, queue: Queue, msg: Message, policy: Redrive, now: float) -> None:
        del queue.messages[msg.id]
        target = self._queues.get(policy.target)
        if target is None:
            return
        moved = Message(msg.id, msg.body, next(self._serial), sent_at=msg.sent_at, visible_from=now, group=msg.group,
                        dedup_key=msg.dedup_key, receive_count=msg.receive_count,
                        first_receive_at=msg.first_receive_at)
        target.messages[moved.id] = moved

    def _peek_message(self, op: PeekMessage) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        count = self._param(op.max_messages, "MaxNumberOfMessages", 1, self.MAX_BATCH,
                            f"Must be between 1 and {self.MAX_BATCH}, if provided.")
        if isinstance(count, Error):
            return count
        self._reclaim(queue, self.clock.now())
        return PeekOk(tuple(self._view(msg, None) for msg in list(queue.messages.values())[:count]))

    # --- visibility changes and deletes ------------------------------------------------------------------

    def _change_message_visibility(self, op: ChangeMessageVisibility) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        result = self._change_one(queue, op.receipt_handle, op.visibility_timeout)
        return result if isinstance(result, Error) else ChangeOk()

    def _change_one(self, queue: Queue, handle: Any, raw_timeout: Any) -> Response:
        receipt = self._receipt(queue, handle)
        if receipt is None:
            return self._invalid_handle(handle)
        timeout = self._param(raw_timeout, "VisibilityTimeout", 0, self.MAX_VISIBILITY,
                              f"Must be between 0 and {self.MAX_VISIBILITY}.")
        if isinstance(timeout, Error):
            return timeout
        now = self.clock.now()
        self._reclaim(queue, now)
        msg = queue.messages.get(receipt.message_id)
        if msg is None:
            return self._gone(handle)
        if queue.fifo and (msg.lease is None or msg.lease.receipt is not receipt):
            return self._expired(handle)  # a FIFO receipt acts only while its own lease holds
        ceiling = receipt.ceiling
        if now + timeout > ceiling:
            return self._invalid("VisibilityTimeout", timeout, "Total VisibilityTimeout for the message is beyond "
                                 f"the limit [{self.MAX_VISIBILITY} seconds].")
        receipt.changed = True
        if timeout == 0:
            self._release(queue, msg)
        else:
            self._grant(queue, msg, receipt, now + timeout)
        return Ok()

    def _change_message_visibility_batch(self, op: ChangeMessageVisibilityBatch) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        refused = self._check_batch(op.entries, "ChangeMessageVisibilityBatchRequestEntry")
        if refused is not None:
            return refused
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry in op.entries:
            result = self._change_one(queue, entry.receipt_handle, entry.visibility_timeout)
            if isinstance(result, Error):
                failed.append(EntryFailure(entry.id, result.code, result.message))
            else:
                successful.append(entry.id)
        return BatchOk(tuple(successful), tuple(failed))

    def _delete_message(self, op: DeleteMessage) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        return self._delete_one(queue, op.receipt_handle)

    def _delete_one(self, queue: Queue, handle: Any) -> Response:
        receipt = self._receipt(queue, handle)
        if receipt is None:
            return self._invalid_handle(handle)
        now = self.clock.now()
        self._reclaim(queue, now)
        msg = queue.messages.get(receipt.message_id)
        if msg is None:
            return Ok()  # deleted already, purged, or moved to the dead-letter queue: nothing left to do
        if queue.fifo and (msg.lease is None or msg.lease.receipt is not receipt):
            return self._expired(handle)  # a FIFO receipt deletes only while its own lease holds
        if msg.lease is None and now > receipt.ceiling:
            return self._expired(handle)  # a standard handle lives 12 hours from its receive
        del queue.messages[msg.id]
        return Ok()

    def _delete_message_batch(self, op: DeleteMessageBatch) -> Response:
        queue = self._queue(op.queue)
        if isinstance(queue, Error):
            return queue
        refused = self._check_batch(op.entries, "DeleteMessageBatchRequestEntry")
        if refused is not None:
            return refused
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry in op.entries:
            result = self._delete_one(queue, entry.receipt_handle)
            if isinstance(result, Error):
                failed.append(EntryFailure(entry.id, result.code, result.message))
                continue
            successful.append(entry.id)
        return BatchOk(tuple(successful), tuple(failed))

    def _check_batch(self, entries: tuple[Any, ...], kind: str) -> Error | None:
        """What refuses a whole batch: no entries, too many, a malformed id, an id used twice."""
        if not entries:
            return Error("EmptyBatchRequest", f"There should be at least one {kind} in the request.")
        if len(entries) > self.MAX_BATCH:
            return Error("TooManyEntriesInBatchRequest",
                         f"Maximum number of entries per request are {self.MAX_BATCH}. You have sent {len(entries)}.")
        seen: set[str] = set()
        for entry in entries:
            if not (isinstance(entry.id, str) and _BATCH_ENTRY_ID.fullmatch(entry.id)):
                return Error("InvalidBatchEntryId", "A batch entry id can only contain alphanumeric characters, "
                             "hyphens and underscores. It can be at most 80 letters long.")
            if entry.id in seen:
                return Error("BatchEntryIdsNotDistinct", f"Id {entry.id} repeated.")
            seen.add(entry.id)
        return None
