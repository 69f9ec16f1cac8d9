"""spoolq: a standard SQS queue kept as a spool directory, one file per message, for several consumers at once.

Every change to a message is a read-modify-write of its file made under the message's lock (`fcntl.flock` on a
lock stripe), and written by rename, so a reader without the lock always sees a whole record. A receive scans the
directory, skips what is hidden, and claims each candidate under its lock after reading it again there: two
consumers racing for one message serialise on the lock, and the second sees the first's deadline.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
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
    GetQueueAttributes,
    Ok,
    Operation,
    PeekMessage,
    PurgeQueue,
    Raw,
    ReceivedMessage,
    ReceiveMessage,
    ReceiveOk,
    Response,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)

from .params import (
    CEILING,
    DEFAULTS,
    QUEUE_NAME,
    RANGES,
    Redrive,
    arn,
    check_attributes,
    check_batch,
    check_body,
    in_range,
    parse_redrive,
    redrive_error,
)
from .spool import QueueDir, Receipt, Record, Spool, make_queue_dir, read_or_none, write_atomic

VERSION = "1.0"
# CHOICE: a change landing exactly on the 12-hour ceiling is accepted (AWS may refuse it by a second); the
# epsilon keeps float sums of virtual times from missing it by ulps.
_EPSILON = 1e-6


class Claim(Enum):
    """Why a candidate seen visible was not returned."""

    LOST = "another client changed or removed it first"
    GONE = "retention or redrive took it away"


def no_queue() -> Error:
    # CHOICE: the JSON protocol's spelling of a missing queue (the query protocol says NonExistentQueue).
    return Error("QueueDoesNotExist", "The specified queue does not exist.")


class SpoolQueue(Target):
    """A standard SQS queue on a spool directory. `shared_connection()` is another client of the same directory
    and clock, safe to use from another thread."""

    name = "spoolq"
    profiles = frozenset({"sqs-standard"})

    def __init__(self, profile: str = "sqs-standard", *, spool: Spool | None = None) -> None:
        if profile not in self.profiles:  # no FIFO: any other profile is Unsupported
            raise Unsupported(f"spoolq speaks {', '.join(sorted(self.profiles))}, not {profile}: it has no FIFO")
        self.profile = profile
        self._owner = spool is None  # only the connection that made the spool resets or removes it
        self._spool = spool if spool is not None else Spool()
        self._handlers: dict[type, Callable[[Any], Response]] = {
            CreateQueue: self._create_queue, SetQueueAttributes: self._set_attributes,
            GetQueueAttributes: self._get_attributes, SendMessage: self._send, ReceiveMessage: self._receive,
            ChangeMessageVisibility: self._change_one, ChangeMessageVisibilityBatch: self._change_batch,
            DeleteMessage: self._delete_one, DeleteMessageBatch: self._delete_batch, PurgeQueue: self._purge,
        }

    # --- Target --------------------------------------------------------------------------------------------------

    @property
    def clock(self) -> VirtualClock:  # type: ignore[override]  # shared by every connection; reset replaces it
        return self._spool.clock

    @property
    def directory(self) -> Path:
        return self._spool.root

    def execute(self, op: Operation) -> Response:
        if isinstance(op, PeekMessage):
            raise Unsupported("spoolq is a standard SQS queue: there is no peek")
        handler = self._handlers.get(type(op))
        if handler is None:
            raise Unsupported(f"spoolq has no {type(op).__name__}")
        return handler(op)

    def version(self) -> str:
        return f"spoolq {VERSION}"

    def shared_connection(self) -> SpoolQueue:
        return type(self)(self.profile, spool=self._spool)

    def reset(self) -> None:
        if self._owner:
            self._spool.forget_queues()
            self._spool.clock = VirtualClock()

    def close(self) -> None:
        if self._owner:
            self._spool.remove()

    # --- locks and files: the seams the variants change -----------------------------------------------------------

    @contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        """An exclusive lock on a lock file. flock belongs to the open file description, so two threads of one
        process that each open the file exclude each other, as two processes do."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the description releases its lock

    def _load(self, q: QueueDir, stem: str) -> Record | None:
        raw = read_or_none(q.message_path(stem))
        return None if raw is None else Record.loads(raw)

    def _store(self, q: QueueDir, stem: str, record: Record) -> None:
        write_atomic(q.message_path(stem), record.dumps(), q.tmp)

    def _remove(self, q: QueueDir, stem: str) -> None:
        q.message_path(stem).unlink(missing_ok=True)

    def _advance_clock(self, target: float, seen: float) -> None:
        """Move the shared clock forward to `target` (a long poll's next deadline or its end); `seen` is the time
        this poll read before it scanned. Only forward: another client's poll may have gone further already."""
        with self._spool.clock_lock:
            self.clock.advance_to(target)

    # --- queues ---------------------------------------------------------------------------------------------------

    def _queue(self, name: Raw) -> QueueDir | None:
        if not isinstance(name, str) or not QUEUE_NAME.fullmatch(name):
            return None  # no such name can exist: it does not exist
        q = self._spool.queue(name)
        return q if q.attributes_file.exists() else None

    def _attributes(self, q: QueueDir) -> dict[str, str]:
        raw = read_or_none(q.attributes_file)
        return {} if raw is None else json.loads(raw)

    def _check_dead_letter_target(self, attributes: dict[str, str], raw: dict[str, Raw]) -> Error | None:
        policy = attributes.get("RedrivePolicy")
        if policy:
            redrive = parse_redrive(policy)
            if redrive is None or self._queue(redrive.target) is None:
                # CHOICE: the dead-letter queue must exist when the policy is set.
                return redrive_error(raw.get("RedrivePolicy"), "Dead letter target does not exist")
        return None

    def _create_queue(self, op: CreateQueue) -> Response:
        attributes = op.attributes if isinstance(op.attributes, dict) else {}
        if str(attributes.get("FifoQueue", "false")).lower() == "true" or str(op.queue).endswith(".fifo"):
            raise Unsupported("spoolq has no FIFO queues")
        if not isinstance(op.queue, str) or not QUEUE_NAME.fullmatch(op.queue):
            # CHOICE: a name SQS would refuse is refused here too (it is also what keeps it a safe directory name).
            return Error(errors.INVALID_PARAMETER_VALUE, "Can only include alphanumeric characters, hyphens, or "
                         "underscores. 1 to 80 in length")
        given = check_attributes(op.attributes)
        if isinstance(given, Error):
            return given
        refused = self._check_dead_letter_target(given, op.attributes)
        if refused:
            return refused
        now = self.clock.now()
        stored = DEFAULTS | {k: v for k, v in given.items() if v != ""}
        stored |= {"CreatedTimestamp": str(int(now)), "LastModifiedTimestamp": str(int(now))}
        if make_queue_dir(self._spool.root, op.queue, stored):
            return Ok()
        # CHOICE: creating an existing queue succeeds if every attribute given matches it, as SQS documents;
        # attributes not given are not compared.
        existing = self._attributes(self._spool.queue(op.queue))
        for name, value in given.items():
            if existing.get(name, "") != value:
                return Error("QueueAlreadyExists", f"A queue already exists with the same name and a different value "
                             f"for attribute {name}")
        return Ok()

    def _set_attributes(self, op: SetQueueAttributes) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        given = check_attributes(op.attributes)
        if isinstance(given, Error):
            return given
        refused = self._check_dead_letter_target(given, op.attributes)
        if refused:
            return refused
        with self._locked(q.queue_lock):
            current = self._attributes(q) | given
            current = {k: v for k, v in current.items() if v != ""}
            current["LastModifiedTimestamp"] = str(int(self.clock.now()))
            write_atomic(q.attributes_file, json.dumps(current).encode(), q.tmp)
        # CHOICE: a new VisibilityTimeout or DelaySeconds applies to later receives and sends only; deadlines
        # already running do not move (the evidence marks this uncertain).
        return Ok()

    def _get_attributes(self, op: GetQueueAttributes) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        attributes = self._attributes(q)
        # CHOICE: every attribute is returned: the configured ones, the ARN, the approximate counts (a snapshot
        # taken without locks) and the timestamps in whole seconds of the virtual clock.
        now = self.clock.now()
        visible = hidden = delayed = 0
        for stem in q.listing():
            record = self._load(q, stem)
            if record is None:
                continue
            if record.visible_at <= now:
                visible += 1
            elif record.receive_count == 0:
                delayed += 1  # hidden before its first receive: delayed, not in flight
            else:
                hidden += 1
        return AttributesOk(attributes | {
            "QueueArn": arn(q.name),
            "ApproximateNumberOfMessages": str(visible),
            "ApproximateNumberOfMessagesNotVisible": str(hidden),
            "ApproximateNumberOfMessagesDelayed": str(delayed),
        })

    def _purge(self, op: PurgeQueue) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        # Each message is removed under its lock, so a receive claiming it at the same moment either finishes
        # first (and its message is then purged) or finds it gone; it can never write it back afterwards.
        # CHOICE: no 60-second PurgeQueueInProgress limit; a message sent during the purge may survive it.
        for stem in q.listing():
            with self._locked(q.lock_path(stem)):
                self._remove(q, stem)
        return Ok()

    # --- send -----------------------------------------------------------------------------------------------------

    def _send(self, op: SendMessage) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        attributes = self._attributes(q)
        if op.dedup_id is not None:
            # CHOICE: a deduplication id belongs to FIFO queues; a standard queue refuses it as SQS does. A group id
            # is accepted and ignored (SQS now takes one on standard queues).
            return Error(errors.INVALID_PARAMETER_VALUE, "The request include parameter that is not valid for this "
                         "queue type")
        if op.delay_seconds is None:
            delay = int(attributes["DelaySeconds"])
        else:
            checked = in_range(op.delay_seconds, *RANGES["DelaySeconds"][:2])
            if checked is None:
                return errors.out_of_range("DelaySeconds", op.delay_seconds, "sqs").instantiate()
            delay = checked
        refused = check_body(op.body, int(attributes["MaximumMessageSize"]))
        if refused:
            return refused
        now = self.clock.now()
        message_id = str(uuid.uuid4())
        # CHOICE: receives prefer the oldest messages: a stem starts with the send's wall-clock nanoseconds.
        stem = f"{time.time_ns():020d}-{message_id}"
        record = Record(message_id, op.body, sent_at=now, visible_at=now + delay,
                        attributes={"SentTimestamp": str(int(now * 1000))})
        self._store(q, stem, record)  # a new name: nobody else can hold its lock yet
        return SendOk(message_id)

    # --- receive --------------------------------------------------------------------------------------------------

    def _receive(self, op: ReceiveMessage) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        attributes = self._attributes(q)
        # CHOICE: when several parameters are out of range, MaxNumberOfMessages is named first, then
        # VisibilityTimeout, then WaitTimeSeconds.
        limit = in_range(1 if op.max_messages is None else op.max_messages, 1, 10)
        if limit is None:
            return errors.max_messages_out_of_range(op.max_messages).instantiate()
        timeout = in_range(attributes["VisibilityTimeout"] if op.visibility_timeout is None
                           else op.visibility_timeout, 0, CEILING)
        if timeout is None:
            return errors.out_of_range("VisibilityTimeout", op.visibility_timeout, "sqs").instantiate()
        wait = in_range(attributes["ReceiveMessageWaitTimeSeconds"] if op.wait_time_seconds is None
                        else op.wait_time_seconds, 0, 20)
        if wait is None:
            return errors.wait_out_of_range(op.wait_time_seconds).instantiate()
        # CHOICE: attempt_id (ReceiveRequestAttemptId) is FIFO-only and ignored here, as SQS ignores it.
        redrive = parse_redrive(attributes["RedrivePolicy"]) if attributes.get("RedrivePolicy") else None
        retention = int(attributes["MessageRetentionPeriod"])
        end = self.clock.now() + wait
        while True:
            seen = self.clock.now()
            found, next_at, raced = self._scan(q, limit, timeout, redrive, retention)
            # Long polling returns as soon as any message is there; it does not wait to fill MaxNumberOfMessages.
            # CHOICE: a short poll is not sampled: it returns every visible message up to MaxNumberOfMessages.
            if found or wait == 0:
                return ReceiveOk(tuple(found))
            now = self.clock.now()
            if now >= end:
                return ReceiveOk(())
            if raced:
                if not self._keep_waiting_after_race():
                    return ReceiveOk(())
                continue  # another consumer took what we saw; look again at once
            # Nothing visible: wait, on the virtual clock, for the next message to become visible or the wait to end.
            target = end if next_at is None else min(next_at, end)
            self._advance_clock(target, seen)

    def _keep_waiting_after_race(self) -> bool:
        """Whether a long poll that lost a message to another consumer keeps waiting (it must: its wait is not over)."""
        return True

    def _scan(self, q: QueueDir, limit: int, timeout: int, redrive: Redrive | None,
              retention: int) -> tuple[list[ReceivedMessage], float | None, bool]:
        """Claim up to `limit` visible messages, oldest first. Also answers the earliest time a hidden message
        becomes visible, and whether a message seen visible was taken by another client before we could claim it."""
        found: list[ReceivedMessage] = []
        next_at: float | None = None
        raced = False
        for stem in q.listing():
            if len(found) >= limit:
                break
            # A read without the lock: a snapshot (files are replaced by rename), good enough to skip what is
            # hidden. The claim reads it again under the lock before deciding.
            record = self._load(q, stem)
            if record is None:
                continue
            now = self.clock.now()
            if now >= record.sent_at + retention:
                with self._locked(q.lock_path(stem)):
                    self._remove(q, stem)  # past its retention period, hidden or not
                continue
            if record.visible_at > now:
                next_at = record.visible_at if next_at is None else min(next_at, record.visible_at)
                continue
            claimed = self._claim(q, stem, timeout, redrive)
            if isinstance(claimed, ReceivedMessage):
                found.append(claimed)
            elif claimed is Claim.LOST:
                raced = True
        return found, next_at, raced

    def _claim(self, q: QueueDir, stem: str, timeout: int, redrive: Redrive | None) -> ReceivedMessage | Claim:
        with self._locked(q.lock_path(stem)):
            return self._claim_in_place(q, stem, timeout, redrive)

    def _claim_in_place(self, q: QueueDir, stem: str, timeout: int,
                        redrive: Redrive | None) -> ReceivedMessage | Claim:
        """Read the message again, and if it is still visible, make it this receive's: new handle, deadline and
        receive count. The caller holds the message's lock (the variants show what happens when it does not)."""
        record = self._load(q, stem)
        now = self.clock.now()
        if record is None or record.visible_at > now:
            return Claim.LOST
        if redrive is not None and record.receive_count >= redrive.max_receive_count and \
                self._dead_letter(q, stem, record, redrive, now):
            return Claim.GONE
        self._mark_received(q, stem, record, now, timeout)
        self._store(q, stem, record)
        return self._as_received(record)

    def _mark_received(self, q: QueueDir, stem: str, record: Record, now: float, timeout: int,
                       count: bool = True) -> None:
        if count:
            record.receive_count += 1  # every receive counts, VisibilityTimeout=0 ones included
            if record.first_receive_at is None:
                record.first_receive_at = now
        record.received_at = now
        record.visible_at = now + timeout
        serial = record.receive_count if count else record.receive_count + 1  # the count this receive produces
        record.receipt_handle = self._spool.handles.issue(q.name, stem, serial, now)

    @staticmethod
    def _as_received(record: Record) -> ReceivedMessage:
        first = record.first_receive_at
        return ReceivedMessage(record.message_id, record.body, record.receipt_handle, record.receive_count,
                               None if first is None else round(first * 1000))

    def _dead_letter(self, q: QueueDir, stem: str, record: Record, redrive: Redrive, now: float) -> bool:
        """Move a message that has used up its receives to the dead-letter queue, keeping its receive count.
        The copy is in place (by rename) before the original goes: a crash between them duplicates, never loses."""
        target = self._queue(redrive.target)
        if target is None:
            return False  # CHOICE: with its dead-letter queue gone, a message is delivered as if there were no policy
        # CHOICE: the moved message is visible in the dead-letter queue at once; it keeps its send time, receive
        # count and first-receive time, and gains DeadLetterQueueSourceArn.
        moved = Record(record.message_id, record.body, record.sent_at, now, record.receive_count,
                       record.first_receive_at, None, None,
                       record.attributes | {"DeadLetterQueueSourceArn": arn(q.name)})
        self._store(target, stem, moved)
        self._remove(q, stem)
        return True

    # --- change and delete ----------------------------------------------------------------------------------------

    def _receipt(self, q: QueueDir, handle: Raw) -> Receipt | None:
        receipt = self._spool.handles.parse(handle)
        # CHOICE: a handle of another queue is as invalid here as a mangled one.
        return receipt if receipt is not None and receipt.queue == q.name else None

    def _change_one(self, op: ChangeMessageVisibility) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        return self._change_entry(q, op.receipt_handle, op.visibility_timeout)

    def _change_entry(self, q: QueueDir, handle: Raw, raw_timeout: Raw) -> Response:
        # CHOICE: the timeout's range is checked before the handle.
        timeout = in_range(raw_timeout, 0, CEILING)
        if timeout is None:
            return errors.out_of_range("VisibilityTimeout", raw_timeout, "sqs").instantiate()
        receipt = self._receipt(q, handle)
        if receipt is None:
            # CHOICE: no text is recorded for a change's malformed handle; ours is the one model/errors.py shows.
            return errors.malformed_handle(str(handle), with_text=False, dialect="sqs")[0].instantiate()
        return self._change(q, receipt, str(handle), timeout, raw_timeout)

    def _change(self, q: QueueDir, receipt: Receipt, handle: str, timeout: int, raw_timeout: Raw) -> Response:
        with self._locked(q.lock_path(receipt.stem)):
            record = self._load(q, receipt.stem)
            if record is None:
                return self._not_available(handle)
            deadline = self._new_deadline(record, timeout, raw_timeout)
            if isinstance(deadline, Error):
                return deadline
            record.visible_at = deadline
            self._store(q, receipt.stem, record)
        return ChangeOk()

    def _new_deadline(self, record: Record, timeout: int, raw_timeout: Raw) -> float | Error:
        """Non-additive: the new deadline is now + timeout, whatever the old one was, within 12 hours of the
        receive. CHOICE: a standard queue's handle names the message, not only its receipt: a change through an
        expired handle, or one from before a later receive, takes effect (EVIDENCE: CMV stale handle, VAL) and
        the ceiling counts from the message's latest receive."""
        now = self.clock.now()
        received_at = record.received_at if record.received_at is not None else now
        if now + timeout - received_at > CEILING + _EPSILON:
            return errors.beyond_ceiling(raw_timeout).instantiate()
        return now + timeout

    @staticmethod
    def _not_available(handle: str) -> Error:
        return Error(errors.INVALID_PARAMETER_VALUE, f"Value {handle} for parameter ReceiptHandle is invalid. Reason: "
                     "Message does not exist or is not available for visibility timeout change.")

    def _change_batch(self, op: ChangeMessageVisibilityBatch) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        # CHOICE: the queue is checked before the batch's shape.
        refused = check_batch(op.entries, "ChangeMessageVisibilityBatch")
        if refused:
            return refused
        # CHOICE: entries are applied one by one, in order, each under its own lock: a batch is not atomic.
        return _batch_result([(e.id, self._change_entry(q, e.receipt_handle, e.visibility_timeout))
                              for e in op.entries])

    def _delete_one(self, op: DeleteMessage) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        return self._delete_entry(q, op.receipt_handle)

    def _delete_entry(self, q: QueueDir, handle: Raw) -> Response:
        receipt = self._receipt(q, handle)
        if receipt is None:
            return errors.malformed_handle(str(handle), with_text=True, dialect="sqs")[0].instantiate()
        return self._delete(q, receipt)

    def _delete(self, q: QueueDir, receipt: Receipt) -> Response:
        """CHOICE: any handle a receive issued for the message deletes it, expired or from before a later receive
        (SQS: "the request will succeed, but the message might not be deleted"; an expired one deletes, REC); a
        message already gone is no error (deleting twice succeeds, VAL). Handles never expire here."""
        with self._locked(q.lock_path(receipt.stem)):
            self._remove(q, receipt.stem)
        return Ok()

    def _delete_batch(self, op: DeleteMessageBatch) -> Response:
        q = self._queue(op.queue)
        if q is None:
            return no_queue()
        refused = check_batch(op.entries, "DeleteMessageBatch")
        if refused:
            return refused
        return _batch_result([(e.id, self._delete_entry(q, e.receipt_handle)) for e in op.entries])


def _batch_result(results: list[tuple[str, Response]]) -> BatchOk:
    successful = tuple(entry_id for entry_id, response in results if not isinstance(response, Error))
    failed = tuple(EntryFailure(entry_id, response.code, response.message, True)
                   for entry_id, response in results if isinstance(response, Error))
    return BatchOk(successful, failed)
