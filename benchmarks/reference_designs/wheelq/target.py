"""wheelq: SQS visibility-timeout semantics in memory, for standard and FIFO queues.

The core is a timer wheel per queue: every deadline (the end of a delay, of a visibility timeout) is an entry in a
one-second bucket keyed by floor(deadline), the buckets ordered by a small heap of their keys. Nothing scans the
messages to find what is receivable: each operation first *releases* the entries that are due (lazy release), and
a message whose deadline moved since its entry was scheduled carries a newer `stamp`, so the old entry is ignored.
Receivable messages are an insertion-ordered dict per standard queue and a deque per FIFO message group.
Receipt handles are opaque random tokens mapped to (message, receive generation, when that receive was asked).

Where the documents are silent or hedge, the choice made is written where it is made (and in README.md). Sources:
the SQS developer guides (seeds 000-002), the third-party summary (seed 003) and EVIDENCE.md.
The clock is the caller's (`self.clock`, virtual); nothing here reads the system time.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import random
import re
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqs_conformance.adapters.base import Target, Unsupported, VirtualClock
from sqs_conformance.model import errors
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
    ErrorSpec,
    GetQueueAttributes,
    Ok,
    Operation,
    PeekMessage,
    PurgeQueue,
    ReceivedMessage,
    ReceiveMessage,
    ReceiveOk,
    Response,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)

DEFAULT_VISIBILITY = 30      # "Each queue starts with a default setting of 30 seconds" (seeds 000-003)
MAX_VISIBILITY = 43200       # "The maximum is 12 hours" (seed 002); EVIDENCE: integer 0..43200
MAX_DELAY = 900              # EVIDENCE: DelaySeconds 0..900
MAX_WAIT = 20                # EVIDENCE: WaitTimeSeconds 0..20
MAX_BATCH = 10               # EVIDENCE: at most 10 entries
MAX_RECEIVE_COUNT = 1000     # AWS's documented maxReceiveCount range is 1..1000 (not in the seeds: a choice)
DEDUP_WINDOW = 300.0         # "the deduplication interval": 5 minutes (seed 002 names it; AWS docs: 5 minutes)
ATTEMPT_WINDOW = 300.0       # EVIDENCE: "a retry within 5 minutes returns the same messages and handles"
PURGE_INTERVAL = 60.0        # "Only one PurgeQueue operation is allowed every 60 seconds" (errors.purge_in_progress)
INFLIGHT_QUOTA = 120_000     # EVIDENCE: about 120,000 in flight; OverLimit only for standard short polls
# Choice: a standard-queue handle that is stale (its message was received again since) and older than 12 hours
# is refused as expired. EVIDENCE records a handle of about 55,000 s refused so; younger stale handles are accepted.
STALE_HANDLE_LIFETIME = float(MAX_VISIBILITY)

_BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")   # EVIDENCE: ids [A-Za-z0-9_-]{1,80}
_INTEGER = re.compile(r"[+-]?\d+")

# A message's state. DELAYED: sent, never received, its delay not over. READY: receivable (subject to FIFO group
# order). INFLIGHT: received (or re-hidden by a change) and its deadline not yet released.
DELAYED, READY, INFLIGHT = "delayed", "ready", "inflight"

# Queue attributes that are integers, with their ranges. MaximumMessageSize and MessageRetentionPeriod are stored
# and reported but not enforced (choice: the documents say nothing of them).
_INT_ATTRIBUTES: dict[str, tuple[int, int]] = {
    "VisibilityTimeout": (0, MAX_VISIBILITY),
    "DelaySeconds": (0, MAX_DELAY),
    "ReceiveMessageWaitTimeSeconds": (0, MAX_WAIT),
    "MaximumMessageSize": (1024, 1_048_576),
    "MessageRetentionPeriod": (60, 1_209_600),
}
_DEFAULTS: dict[str, Any] = {
    "VisibilityTimeout": DEFAULT_VISIBILITY,
    "DelaySeconds": 0,
    "ReceiveMessageWaitTimeSeconds": 0,
    "MaximumMessageSize": 1_048_576,
    "MessageRetentionPeriod": 345_600,
    "RedrivePolicy": None,
    "ContentBasedDeduplication": False,
}


# --- refusals ----------------------------------------------------------------------------------------------

class Refusal(Exception):
    """An operation (or one batch entry) refused with an SQS error."""

    def __init__(self, error: Error) -> None:
        super().__init__(error.message)
        self.error = error


def refuse(spec: ErrorSpec, handle: object = None) -> Refusal:
    """The error `spec` spells, with the real handle in place of the placeholder where its text names one."""
    error = spec.instantiate()
    if handle is not None:
        error = Error(error.code, error.message.replace("<handle>", str(handle)), error.status)
    return Refusal(error)


def no_such_queue() -> Refusal:
    return Refusal(Error("QueueDoesNotExist", "The specified queue does not exist.", 400))


def as_int(raw: Any) -> int | None:
    """An integer as sent (an int, or a string of digits); None for anything else (bools, floats, junk)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and _INTEGER.fullmatch(raw.strip()):
        return int(raw.strip())
    return None


def request_int(name: str, raw: Any, low: int, high: int,
                spec: Callable[[Any], ErrorSpec] | None = None) -> int:
    """A request parameter in [low, high], else InvalidParameterValue (EVIDENCE: out-of-range)."""
    value = as_int(raw)
    if value is None or not low <= value <= high:
        raise refuse(spec(raw) if spec is not None else errors.out_of_range(name, raw, "sqs"))
    return value


def attribute_int(name: str, raw: Any) -> int:
    """A queue attribute in its range, else InvalidAttributeValue (EVIDENCE: out-of-range, queue attributes)."""
    low, high = _INT_ATTRIBUTES[name]
    value = as_int(raw)
    if value is None or not low <= value <= high:
        raise refuse(errors.attribute_out_of_range(name, raw))
    return value


def attribute_bool(name: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    raise refuse(errors.attribute_out_of_range(name, raw))


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


# --- the timing structure ----------------------------------------------------------------------------------

class TimerWheel:
    """Deadlines in one-second buckets keyed by floor(deadline); a heap of the bucket keys finds the earliest.
    An entry is (deadline, seq, stamp, message_id); `due(now)` hands back the entries whose deadline has come,
    in (deadline, send order) order, and keeps the rest."""

    def __init__(self) -> None:
        self.buckets: dict[int, list[tuple[float, int, int, str]]] = {}
        self.slots: list[int] = []

    def schedule(self, deadline: float, seq: int, stamp: int, message_id: str) -> None:
        slot = math.floor(deadline)
        bucket = self.buckets.get(slot)
        if bucket is None:
            bucket = self.buckets[slot] = []
            heapq.heappush(self.slots, slot)
        bucket.append((deadline, seq, stamp, message_id))

    def due(self, now: float) -> list[tuple[float, int, int, str]]:
        fired: list[tuple[float, int, int, str]] = []
        while self.slots and self.slots[0] <= now:
            slot = self.slots[0]
            bucket = self.buckets[slot]
            later: list[tuple[float, int, int, str]] = []
            for entry in bucket:
                (fired if entry[0] <= now else later).append(entry)
            if later:  # only the bucket of the current second can hold a later deadline: stop here
                self.buckets[slot] = later
                break
            heapq.heappop(self.slots)
            del self.buckets[slot]
        fired.sort()
        return fired

    def next_deadline(self) -> float | None:
        """The earliest deadline still scheduled (possibly a stale entry: a spurious wake-up is harmless)."""
        if not self.slots:
            return None
        return min(entry[0] for entry in self.buckets[self.slots[0]])


# --- state -------------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Message:
    message_id: str
    body: str
    seq: int                      # send order (FIFO order within a group; ties between equal deadlines)
    visible_at: float             # end of the delay, or of the current visibility timeout
    state: str
    group: str | None = None
    receive_count: int = 0        # also the generation of the newest receipt
    first_receive: float | None = None
    stamp: int = 0                # bumped whenever visible_at moves: wheel entries with an older stamp are stale
    gone: bool = False            # deleted, purged, or moved to the dead-letter queue


@dataclass(eq=False)
class Receipt:
    queue: str
    message: Message
    generation: int               # the message's receive_count at the receive that issued this handle
    asked_at: float               # when the ReceiveMessage request arrived: the 12-hour ceiling counts from here
    changed: bool = False         # a ChangeMessageVisibility went through this handle


@dataclass(eq=False)
class Attempt:
    """A FIFO receive made with a ReceiveRequestAttemptId, for a retry to replay."""

    at: float
    timeout: int
    receipts: tuple[Receipt, ...]
    answer: tuple[ReceivedMessage, ...]


@dataclass(eq=False)
class Queue:
    name: str
    fifo: bool
    settings: dict[str, Any]
    messages: dict[str, Message] = field(default_factory=dict)
    timers: TimerWheel = field(default_factory=TimerWheel)
    ready: dict[str, Message] = field(default_factory=dict)              # standard: receivable, in release order
    groups: dict[str, deque[Message]] = field(default_factory=dict)      # FIFO: each group's messages, sent order
    dedup: dict[str, tuple[float, str]] = field(default_factory=dict)    # FIFO: dedup id -> (first sent, id)
    attempts: dict[str, Attempt] = field(default_factory=dict)           # FIFO: ReceiveRequestAttemptId
    last_purge: float | None = None

    @property
    def visibility(self) -> int:
        return self.settings["VisibilityTimeout"]

    @property
    def delay(self) -> int:
        return self.settings["DelaySeconds"]

    @property
    def wait(self) -> int:
        return self.settings["ReceiveMessageWaitTimeSeconds"]

    @property
    def redrive(self) -> tuple[str, str, int] | None:
        """(the key the policy named its target by, the dead-letter queue's name, maxReceiveCount)."""
        return self.settings["RedrivePolicy"]


# --- the target --------------------------------------------------------------------------------------------

class WheelQueueTarget(Target):
    name = "wheelq"
    profiles = frozenset({"sqs-standard", "sqs-fifo"})
    WHEEL: type[TimerWheel] = TimerWheel  # each queue's timing structure (a mutant may swap it)

    _HANDLERS: dict[type, str] = {
        CreateQueue: "_create_queue",
        SetQueueAttributes: "_set_attributes",
        GetQueueAttributes: "_get_attributes",
        SendMessage: "_send",
        ReceiveMessage: "_receive",
        ChangeMessageVisibility: "_change_one",
        ChangeMessageVisibilityBatch: "_change_batch",
        DeleteMessage: "_delete_one",
        DeleteMessageBatch: "_delete_batch",
        PurgeQueue: "_purge",
    }

    def __init__(self, profile_name: str = "sqs-standard") -> None:
        if profile_name not in self.profiles:
            raise Unsupported(f"wheelq implements sqs-standard and sqs-fifo, not {profile_name}")
        self.profile = profile_name
        self.clock = VirtualClock()
        self.reset()

    def version(self) -> str:
        return "wheelq 1.0"

    def reset(self) -> None:
        # The clock is kept: the suite drives it, and only times relative to it matter.
        self._queues: dict[str, Queue] = {}
        self._receipts: dict[str, Receipt] = {}
        self._rng = random.Random(0x5157)  # opaque but reproducible ids and handles
        self._seq = 0

    def close(self) -> None:
        self.reset()

    def execute(self, op: Operation) -> Response:
        if isinstance(op, PeekMessage):
            raise Unsupported("SQS has no peek since the 2008 API, and neither has wheelq")
        handler = self._HANDLERS.get(type(op))
        if handler is None:
            raise Unsupported(f"wheelq has no {type(op).__name__}")
        try:
            return getattr(self, handler)(op)
        except Refusal as refusal:
            return refusal.error

    # --- plumbing -------------------------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _message_id(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def _token(self) -> str:
        return f"{self._rng.getrandbits(256):064x}"

    def _queue(self, name: str) -> Queue:
        q = self._queues.get(name)
        if q is None:
            raise no_such_queue()
        return q

    def _release_due(self, q: Queue) -> None:
        """Lazy release: every deadline that has come makes its message receivable, unless it moved since."""
        for _deadline, _seq, stamp, message_id in q.timers.due(self.now()):
            msg = q.messages.get(message_id)
            if msg is None or msg.stamp != stamp:
                continue  # deleted since, or hidden again with a newer deadline
            self._make_ready(q, msg)

    def _make_ready(self, q: Queue, msg: Message) -> None:
        msg.state = READY
        if q.fifo:
            # A FIFO message stays where it was sent in its group: the group's deque is the order.
            return
        q.ready[msg.message_id] = msg

    def _hide(self, q: Queue, msg: Message, until: float) -> None:
        """Hide `msg` until `until` (a visibility timeout from a receive or a change)."""
        msg.stamp += 1
        msg.visible_at = until
        msg.state = INFLIGHT
        q.ready.pop(msg.message_id, None)
        q.timers.schedule(until, msg.seq, msg.stamp, msg.message_id)

    def _enqueue(self, q: Queue, msg: Message) -> None:
        q.messages[msg.message_id] = msg
        if q.fifo:
            q.groups.setdefault(msg.group or "", deque()).append(msg)

    def _remove(self, q: Queue, msg: Message) -> None:
        msg.gone = True
        q.messages.pop(msg.message_id, None)
        q.ready.pop(msg.message_id, None)
        if q.fifo:
            group = q.groups.get(msg.group or "")
            if group is not None:
                group.remove(msg)
                if not group:
                    del q.groups[msg.group or ""]

    def _receipt(self, q: Queue, handle: Any, *, with_text: bool) -> Receipt:
        """The receipt a handle names. A handle no receive of this queue issued is malformed (EVIDENCE:
        ReceiptHandleIsInvalid; choice: a handle of another queue counts as malformed here)."""
        receipt = self._receipts.get(handle) if isinstance(handle, str) else None
        if receipt is None or receipt.queue != q.name:
            raise refuse(errors.malformed_handle(str(handle), with_text=with_text, dialect="sqs")[0])
        return receipt

    def _expired(self, q: Queue, receipt: Receipt) -> bool:
        """Whether a handle is refused as expired.

        FIFO: once its deadline is over or its message was received again (EVIDENCE: a FIFO delete after the
        deadline is refused "The receipt handle has expired"; choice: the same for a change, and for a stale
        handle). A deleted message keeps the deadline it had, so deleting twice inside it succeeds twice.
        Standard: only a stale handle more than 12 hours old (EVIDENCE: expired-but-not-received-again handles
        are accepted; a handle of about 55,000 s was refused as expired).
        """
        msg = receipt.message
        stale = receipt.generation != msg.receive_count
        if q.fifo:
            return stale or msg.visible_at <= self.now()
        return stale and self.now() - receipt.asked_at > STALE_HANDLE_LIFETIME

    # --- queues ---------------------------------------------------------------------------------------------

    def _is_fifo(self, name: str, attributes: dict[str, Any]) -> bool:
        """Choice: FifoQueue decides when given; otherwise a queue is FIFO under the sqs-fifo profile or when its
        name ends in ".fifo" (AWS would insist on both the suffix and the attribute; the names are the suite's)."""
        if "FifoQueue" in attributes:
            return attribute_bool("FifoQueue", attributes["FifoQueue"])
        return self.profile == "sqs-fifo" or name.endswith(".fifo")

    def _parse_attributes(self, attributes: dict[str, Any], fifo: bool) -> dict[str, Any]:
        """Every attribute checked before any is applied (a refused request changes nothing)."""
        if not isinstance(attributes, dict):
            raise refuse(errors.attribute_out_of_range("Attributes", attributes))
        parsed: dict[str, Any] = {}
        for name, raw in attributes.items():
            if name in _INT_ATTRIBUTES:
                parsed[name] = attribute_int(name, raw)
            elif name == "RedrivePolicy":
                parsed[name] = self._redrive_policy(raw, fifo)
            elif name == "FifoQueue":
                parsed[name] = attribute_bool(name, raw)
            elif name == "ContentBasedDeduplication" and fifo:
                parsed[name] = attribute_bool(name, raw)
            else:
                # Choice: AWS's spelling for an attribute it does not know (ContentBasedDeduplication included,
                # on a standard queue).
                raise Refusal(Error("InvalidAttributeName", f"Unknown Attribute {name}.", 400))
        return parsed

    def _redrive_policy(self, raw: Any, fifo: bool) -> tuple[str, str, int] | None:
        """RedrivePolicy as a JSON text or a dict: deadLetterTargetArn (the queue name is its last ':' part) or
        deadLetterTargetQueue (a name), and maxReceiveCount 1..1000. "" or {} removes it. Choices: every problem is
        InvalidAttributeValue (EVIDENCE: queue attributes refuse with that code); the dead-letter queue must exist
        and be of the same kind (FIFO or not) as the source, as AWS requires."""
        if raw is None or raw == "" or raw == {}:
            return None
        policy = raw
        if isinstance(raw, str):
            try:
                policy = json.loads(raw)
            except ValueError:
                raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw)) from None
        if not isinstance(policy, dict):
            raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw))
        key = "deadLetterTargetArn" if "deadLetterTargetArn" in policy else "deadLetterTargetQueue"
        target = policy.get(key)
        count = as_int(policy.get("maxReceiveCount"))
        if not isinstance(target, str) or count is None or not 1 <= count <= MAX_RECEIVE_COUNT:
            raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw))
        dead_letter = self._queues.get(target.rsplit(":", 1)[-1])
        if dead_letter is None or dead_letter.fifo != fifo:
            raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw))
        return key, dead_letter.name, count

    def _create_queue(self, op: CreateQueue) -> Response:
        attributes = dict(op.attributes or {})
        fifo = self._is_fifo(op.queue, attributes)
        parsed = self._parse_attributes(attributes, fifo)
        parsed.pop("FifoQueue", None)
        existing = self._queues.get(op.queue)
        if existing is not None:
            # Choice: creating an existing queue again is fine when every attribute named matches, as on AWS;
            # otherwise QueueAlreadyExists.
            if existing.fifo != fifo or any(existing.settings[k] != v for k, v in parsed.items()):
                return Error("QueueAlreadyExists",
                             "A queue already exists with the same name and a different value for attribute(s).")
            return Ok()
        self._queues[op.queue] = Queue(op.queue, fifo, {**_DEFAULTS, **parsed}, timers=self.WHEEL())
        return Ok()

    def _set_attributes(self, op: SetQueueAttributes) -> Response:
        q = self._queue(op.queue)
        parsed = self._parse_attributes(dict(op.attributes or {}), q.fifo)
        if parsed.pop("FifoQueue", q.fifo) != q.fifo:
            raise refuse(errors.attribute_out_of_range("FifoQueue", op.attributes["FifoQueue"]))
        # Changes apply to later sends and receives only: in-flight deadlines and pending delays do not move
        # (EVIDENCE: "treat as not moving"). Choice: they take effect at once (no 60 s propagation).
        q.settings.update(parsed)
        return Ok()

    def _get_attributes(self, op: GetQueueAttributes) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        counts = Counter(msg.state for msg in q.messages.values())
        attributes = {
            "VisibilityTimeout": str(q.visibility),
            "DelaySeconds": str(q.delay),
            "ReceiveMessageWaitTimeSeconds": str(q.wait),
            "MaximumMessageSize": str(q.settings["MaximumMessageSize"]),
            "MessageRetentionPeriod": str(q.settings["MessageRetentionPeriod"]),
            # Choice: FIFO messages waiting behind a locked group count as available, as they are stored, visible.
            "ApproximateNumberOfMessages": str(counts[READY]),
            "ApproximateNumberOfMessagesNotVisible": str(counts[INFLIGHT]),
            "ApproximateNumberOfMessagesDelayed": str(counts[DELAYED]),
        }
        if q.redrive is not None:
            key, dead_letter, count = q.redrive
            target = dead_letter if key == "deadLetterTargetQueue" else f"arn:aws:sqs:local:000000000000:{dead_letter}"
            attributes["RedrivePolicy"] = json.dumps({key: target, "maxReceiveCount": count})
        if q.fifo:
            attributes["FifoQueue"] = "true"
            attributes["ContentBasedDeduplication"] = "true" if q.settings["ContentBasedDeduplication"] else "false"
        return AttributesOk(attributes)

    def _purge(self, op: PurgeQueue) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        now = self.now()
        if q.last_purge is not None and now - q.last_purge < PURGE_INTERVAL:
            raise refuse(errors.purge_in_progress())
        q.last_purge = now
        # In-flight messages go too (EVIDENCE, VAL). Choices: the purge is immediate (AWS may take up to 60 s), and
        # it forgets neither the FIFO deduplication ids nor the group order of what is sent afterwards.
        for msg in list(q.messages.values()):
            self._remove(q, msg)
        return Ok()

    # --- send -----------------------------------------------------------------------------------------------

    def _send(self, op: SendMessage) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        now = self.now()
        if not isinstance(op.body, str) or op.body == "":
            # Choice: AWS refuses an empty body.
            raise Refusal(Error(errors.MISSING_PARAMETER, "The request must contain the parameter MessageBody."))
        if q.fifo:
            # No per-message delay on FIFO queues, 0 included: only the queue's DelaySeconds applies.
            if op.delay_seconds is not None:
                raise refuse(errors.fifo_message_delay(op.delay_seconds))
            if not op.group_id:
                raise refuse(errors.missing_group_id())
            dedup = op.dedup_id or (hashlib.sha256(op.body.encode()).hexdigest()
                                    if q.settings["ContentBasedDeduplication"] else None)
            if not dedup:
                raise refuse(errors.missing_dedup_id())
            seen = q.dedup.get(dedup)
            # Choice: the window counts from the first accepted send; a duplicate is accepted, not delivered, and
            # answered with the original's message id; deleting or purging the original does not end the window.
            if seen is not None and now - seen[0] < DEDUP_WINDOW:
                return SendOk(seen[1])
            delay = q.delay
        else:
            # Choice: a group id or dedup id on a standard queue is ignored.
            delay = q.delay if op.delay_seconds is None else request_int("DelaySeconds", op.delay_seconds, 0, MAX_DELAY)
        msg = Message(self._message_id(), op.body, self._next_seq(), now + delay, DELAYED,
                      group=op.group_id if q.fifo else None)
        self._enqueue(q, msg)
        if q.fifo:
            q.dedup[dedup] = (now, msg.message_id)
        if delay > 0:
            q.timers.schedule(msg.visible_at, msg.seq, msg.stamp, msg.message_id)
        else:
            self._make_ready(q, msg)
        return SendOk(msg.message_id)

    # --- receive --------------------------------------------------------------------------------------------

    def _receive(self, op: ReceiveMessage) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        limit = 1 if op.max_messages is None else request_int(
            "MaxNumberOfMessages", op.max_messages, 1, 10, errors.max_messages_out_of_range)
        timeout = q.visibility if op.visibility_timeout is None else request_int(
            "VisibilityTimeout", op.visibility_timeout, 0, MAX_VISIBILITY)
        wait = q.wait if op.wait_time_seconds is None else request_int(
            "WaitTimeSeconds", op.wait_time_seconds, 0, MAX_WAIT, errors.wait_out_of_range)
        attempt_id = op.attempt_id if q.fifo else None  # choice: ignored on standard queues
        if attempt_id:
            replayed = self._replay(q, attempt_id)
            if replayed is not None:
                return ReceiveOk(replayed)
        if not q.fifo and wait == 0 and len(q.messages) >= INFLIGHT_QUOTA:
            if sum(1 for msg in q.messages.values() if msg.state == INFLIGHT) >= INFLIGHT_QUOTA:
                raise refuse(errors.over_limit())
        taken = self._poll(q, limit, timeout, wait)
        answer = tuple(view for _receipt, view in taken)
        if attempt_id and taken:
            # Choice: an attempt that returned nothing is not remembered: its retry is a fresh receive.
            q.attempts[attempt_id] = Attempt(self.now(), timeout, tuple(r for r, _view in taken), answer)
        return ReceiveOk(answer)

    def _replay(self, q: Queue, attempt_id: str) -> tuple[ReceivedMessage, ...] | None:
        """A FIFO retry within 5 minutes of the attempt: the same messages and handles, their visibility timeout
        started again ("If a retry occurs within the deduplication interval, it resets the visibility timeout"),
        receive counts unchanged (it is the same receive). Not replayable once any of them was deleted, changed
        or received again (choice: received again counts as changed); then the retry is a fresh receive."""
        attempt = q.attempts.get(attempt_id)
        now = self.now()
        if attempt is None or now - attempt.at >= ATTEMPT_WINDOW:
            return None
        if any(r.message.gone or r.changed or r.generation != r.message.receive_count for r in attempt.receipts):
            return None
        for receipt in attempt.receipts:
            self._hide(q, receipt.message, now + attempt.timeout)
        return attempt.answer

    def _poll(self, q: Queue, limit: int, timeout: int, wait: int) -> list[tuple[Receipt, ReceivedMessage]]:
        """Short poll (wait 0): what is receivable now. Long poll: sleep on the virtual clock to the next deadline
        of this queue (or the end of the wait), and return as soon as anything is receivable (EVIDENCE: "returns
        as soon as any message is available"; it does not wait to fill MaxNumberOfMessages).
        Choice: a short poll samples every "server": it returns everything receivable up to the limit."""
        asked_at = self.now()
        end = asked_at + wait
        while True:
            taken = self._take(q, limit, timeout, asked_at)
            if taken or self.now() >= end:
                return taken
            due = q.timers.next_deadline()
            # Always forward: a deadline not after now (none should be left once released) wakes at the end.
            self.clock.advance_to(due if due is not None and self.now() < due < end else end)
            self._release_due(q)

    def _candidates(self, q: Queue) -> list[Message]:
        """What a receive may return now, in the order it returns it.

        Standard: the receivable messages in the order they became receivable (a timed-out message goes to the
        back; standard queues promise no order). FIFO: group by group, the oldest head first; of each group the
        prefix of receivable messages before its first hidden (in flight or delayed) one, so nothing of a group
        passes a message of that group still in flight (EVIDENCE: FIFO groups). Choice: when one group cannot
        fill the receive, the next groups add theirs ("as many messages of one group as it can", then others)."""
        if not q.fifo:
            return list(q.ready.values())
        out: list[Message] = []
        for _head_seq, name in sorted((group[0].seq, name) for name, group in q.groups.items() if group):
            for msg in q.groups[name]:
                if msg.state != READY:
                    break
                out.append(msg)
        return out

    def _take(self, q: Queue, limit: int, timeout: int, asked_at: float) -> list[tuple[Receipt, ReceivedMessage]]:
        now = self.now()
        taken: list[tuple[Receipt, ReceivedMessage]] = []
        for msg in self._candidates(q):
            if len(taken) == limit:
                break
            if self._redrive(q, msg):
                continue
            msg.receive_count += 1
            if msg.first_receive is None:
                msg.first_receive = now
            self._hide(q, msg, now + timeout)
            token = self._token()
            receipt = self._receipts[token] = Receipt(q.name, msg, msg.receive_count, asked_at)
            taken.append((receipt, ReceivedMessage(msg.message_id, msg.body, token, msg.receive_count,
                                                   _ms(msg.first_receive))))
        return taken

    def _redrive(self, q: Queue, msg: Message) -> bool:
        """Move `msg` to the dead-letter queue when this receive would take its count past maxReceiveCount
        (EVIDENCE: "instead of being returned"). It keeps its id, receive count and first receive (EVIDENCE:
        dead-letter copy). Choices: it is receivable there at once (the dead-letter queue's own delay is not
        applied), at the back of its group on a FIFO dead-letter queue; with the dead-letter queue gone, nothing
        moves."""
        if q.redrive is None:
            return False
        _key, dead_letter_name, max_receive_count = q.redrive
        dead_letter = self._queues.get(dead_letter_name)
        if dead_letter is None or msg.receive_count + 1 <= max_receive_count:
            return False
        self._remove(q, msg)
        moved = Message(msg.message_id, msg.body, self._next_seq(), self.now(), DELAYED, group=msg.group,
                        receive_count=msg.receive_count, first_receive=msg.first_receive)
        self._enqueue(dead_letter, moved)
        self._make_ready(dead_letter, moved)
        return True

    # --- change visibility ----------------------------------------------------------------------------------

    def _change(self, q: Queue, handle: Any, raw_timeout: Any) -> None:
        """Non-additive: the new deadline is now + timeout (seeds 000, 002); 0 makes the message receivable at
        once; never past 12 hours after the ReceiveMessage request that issued the handle, refused rather than
        clipped (EVIDENCE: 12-hour ceiling). A stale or expired standard handle is accepted and takes effect
        (EVIDENCE; choice: an expired one hides the message again). The change belongs to this receipt only: the
        next receive uses the queue's timeout or its own override (seeds 000, 002)."""
        timeout = request_int("VisibilityTimeout", raw_timeout, 0, MAX_VISIBILITY)
        receipt = self._receipt(q, handle, with_text=False)
        msg = receipt.message
        now = self.now()
        if msg.gone:
            raise refuse(errors.not_available_for_change(), handle)
        if self._expired(q, receipt):
            raise refuse(errors.handle_expired(), handle)
        if now + timeout > receipt.asked_at + MAX_VISIBILITY:
            raise refuse(errors.beyond_ceiling(raw_timeout))
        receipt.changed = True
        self._hide(q, msg, now + timeout)

    def _change_one(self, op: ChangeMessageVisibility) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        self._change(q, op.receipt_handle, op.visibility_timeout)
        return ChangeOk()

    def _change_batch(self, op: ChangeMessageVisibilityBatch) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        return self._batch(op.entries, lambda e: self._change(q, e.receipt_handle, e.visibility_timeout))

    # --- delete ---------------------------------------------------------------------------------------------

    def _delete(self, q: Queue, handle: Any) -> None:
        """Deleting twice succeeds (EVIDENCE). Standard: an expired or stale handle still deletes (EVIDENCE:
        expired handles delete; stale ones "might not be deleted": choice, deleted), unless stale and over 12 hours
        old. FIFO: refused as expired after the deadline (EVIDENCE)."""
        receipt = self._receipt(q, handle, with_text=True)
        if self._expired(q, receipt):
            raise refuse(errors.handle_expired(), handle)
        if not receipt.message.gone:
            self._remove(q, receipt.message)

    def _delete_one(self, op: DeleteMessage) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        self._delete(q, op.receipt_handle)
        return Ok()

    def _delete_batch(self, op: DeleteMessageBatch) -> Response:
        q = self._queue(op.queue)
        self._release_due(q)
        return self._batch(op.entries, lambda e: self._delete(q, e.receipt_handle))

    # --- batches --------------------------------------------------------------------------------------------

    def _batch(self, entries: Iterable[Any], apply: Callable[[Any], None]) -> Response:
        """The envelope is checked first and refuses the whole request (empty, more than 10, an ill-formed id,
        repeated ids: EVIDENCE, batches); then each entry succeeds or fails on its own, in order (SenderFault)."""
        entries = tuple(entries or ())
        if not entries:
            raise refuse(errors.empty_batch())
        if len(entries) > MAX_BATCH:
            raise refuse(errors.too_many_entries(len(entries)))
        if any(not isinstance(e.id, str) or not _BATCH_ID.fullmatch(e.id) for e in entries):
            raise refuse(errors.invalid_batch_entry_id())
        if len({e.id for e in entries}) != len(entries):
            raise refuse(errors.batch_ids_not_distinct())
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry in entries:
            try:
                apply(entry)
            except Refusal as refusal:
                failed.append(EntryFailure(entry.id, refusal.error.code, refusal.error.message, True))
                continue
            successful.append(entry.id)
        return BatchOk(tuple(successful), tuple(failed))
