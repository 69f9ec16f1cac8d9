"""An SQS standard queue built on SQLite, the way a team would: every state change is one SQL statement over a
`messages` table keyed by `visible_at`. The clock is the caller's (`self.clock`, virtual); nothing here reads the
system time.

Where the documents are silent or hedge, the choice made is noted where it is made. Sources: the SQS developer
guides (seeds 000-002), the third-party summary (seed 003) and EVIDENCE.md (what AWS was observed to do).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from sqs_conformance.adapters.base import Target, Unsupported, VirtualClock
from benchmarks.reference_designs.sqliteq import validate as v
from benchmarks.reference_designs.sqliteq.schema import open_database
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
    ReceivedMessage,
    ReceiveMessage,
    ReceiveOk,
    Response,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)

DEFAULT_VISIBILITY = 30   # "Each queue starts with a default setting of 30 seconds" (seeds 000-002)
PURGE_INTERVAL = 60.0     # "Only one PurgeQueue operation is allowed every 60 seconds" (model/errors.py text)

# Request parameters: range-checked, refused with InvalidParameterValue.
_visibility = v.request_param("VisibilityTimeout", v.MAX_VISIBILITY)
_delay = v.request_param("DelaySeconds", v.MAX_DELAY)


class SqliteQueueTarget(Target):
    name = "sqliteq"
    profiles = frozenset({"sqs-standard"})

    # --- the SQL, as class attributes so that one statement can be swapped (see mutants.py) ---------------
    SQL_QUEUE = "SELECT * FROM queues WHERE name = :queue"
    SQL_CREATE_QUEUE = (
        "INSERT INTO queues (name, visibility_timeout, delay_seconds, wait_seconds, dlq, max_receive_count) "
        "VALUES (:queue, :visibility_timeout, :delay_seconds, :wait_seconds, :dlq, :max_receive_count)"
    )
    SQL_SEND = (
        "INSERT INTO messages (message_id, queue, body, sent_at, visible_at) "
        "VALUES (:message_id, :queue, :body, :now, :now + :delay)"
    )
    # Arrival order among the visible ones: standard queues promise no order, this is just the natural one.
    SQL_VISIBLE = "SELECT * FROM messages WHERE queue = :queue AND visible_at <= :now ORDER BY id"
    # When a long poll that found nothing should look again: the next deadline of any message of the queue.
    SQL_NEXT_DUE = "SELECT MIN(visible_at) FROM messages WHERE queue = :queue AND visible_at > :now"
    SQL_MARK_RECEIVED = (
        "UPDATE messages SET receive_count = receive_count + 1, first_receive_at = COALESCE(first_receive_at, :now), "
        "received_at = :now, receipt_handle = :handle, visible_at = :now + :timeout WHERE id = :id"
    )
    SQL_ISSUE_RECEIPT = (
        "INSERT INTO receipts (handle, message, queue, received_at) VALUES (:handle, :id, :queue, :now)"
    )
    SQL_RECEIVED_ROW = "SELECT receive_count, first_receive_at FROM messages WHERE id = :id"
    # A redriven message moves to the dead-letter queue, visible there at once (the documents give it no delay)
    # and still the same message: its receive count and first receive carry over, since "ApproximateReceiveCount
    # rises on every receive" (EVIDENCE, 'receive count'). The moving receive itself returned nothing, so it
    # does not count. Its handles, issued by the source queue, no longer reach it (SQL_FIND_RECEIPT).
    SQL_REDRIVE = (
        "UPDATE messages SET queue = :dlq, visible_at = :now, received_at = NULL, receipt_handle = NULL "
        "WHERE id = :id"
    )
    # A handle's message, if it is still in the queue that issued the handle (m.id is NULL otherwise).
    SQL_FIND_RECEIPT = (
        "SELECT m.id AS id, m.received_at AS received_at, m.sent_at AS sent_at, "
        "m.first_receive_at AS first_receive_at, r.received_at AS issued_at "
        "FROM receipts r LEFT JOIN messages m ON m.id = r.message AND m.queue = r.queue "
        "WHERE r.handle = :handle AND r.queue = :queue"
    )
    # Non-additive: the new timeout counts from the call, not from the old deadline (seeds 000, 002).
    SQL_CHANGE = "UPDATE messages SET visible_at = :now + :timeout WHERE id = :id"
    SQL_DELETE = "DELETE FROM messages WHERE id = :id"
    # Every message of the queue, in flight and delayed ones included (EVIDENCE: purge removes in-flight ones).
    SQL_PURGE = "DELETE FROM messages WHERE queue = :queue AND sent_at <= :now"
    SQL_MARK_PURGED = "UPDATE queues SET last_purge_at = :now WHERE name = :queue"
    # Visible / in flight (received, hidden) / delayed (never received, hidden).
    SQL_COUNTS = (
        "SELECT COALESCE(SUM(visible_at <= :now), 0) AS visible, "
        "COALESCE(SUM(visible_at > :now AND receive_count > 0), 0) AS in_flight, "
        "COALESCE(SUM(visible_at > :now AND receive_count = 0), 0) AS delayed "
        "FROM messages WHERE queue = :queue"
    )

    def __init__(self, profile_name: str = "sqs-standard") -> None:
        if profile_name not in self.profiles:
            raise Unsupported(f"sqliteq implements only sqs-standard, not {profile_name}")
        self.clock = VirtualClock()
        self._serial = 0   # message ids and handles; never reset, so no id is ever reused by one target
        self.db: sqlite3.Connection = open_database()
        self._lock = threading.Lock()   # one operation at a time: a receive's SELECT and UPDATEs are one step
        self._handlers: dict[type, Callable[[Any], Response]] = {
            CreateQueue: self._create_queue,
            SetQueueAttributes: self._set_attributes,
            GetQueueAttributes: self._get_attributes,
            SendMessage: self._send,
            ReceiveMessage: self._receive,
            ChangeMessageVisibility: self._change_one,
            ChangeMessageVisibilityBatch: self._change_batch,
            DeleteMessage: self._delete_one,
            DeleteMessageBatch: self._delete_batch,
            PurgeQueue: self._purge,
        }

    # --- Target ----------------------------------------------------------------------------------------

    def version(self) -> str:
        return f"sqlite {sqlite3.sqlite_version}"

    def reset(self) -> None:
        with self._lock:
            self.db.close()
            self.db = open_database()

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def execute(self, op: Operation) -> Response:
        if isinstance(op, PeekMessage):
            raise Unsupported("SQS has no peek since the 2008 API")
        handler = self._handlers.get(type(op))
        if handler is None:
            raise Unsupported(f"sqliteq has no {type(op).__name__}")
        with self._lock:
            try:
                return handler(op)
            except v.Refusal as refusal:
                return refusal.error

    # --- helpers ---------------------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    def _sql(self, statement: str, **params: Any) -> sqlite3.Cursor:
        return self.db.execute(statement, params)

    def _next_id(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-{self._serial:08d}"

    def _queue(self, name: str) -> sqlite3.Row:
        row = self._sql(self.SQL_QUEUE, queue=name).fetchone()
        if row is None:
            # model/errors.py has no spelling for it; this is the JSON protocol's code for a missing queue.
            raise v.Refusal(Error("QueueDoesNotExist", "The specified queue does not exist.", 400))
        return row

    def _receipt(self, queue: str, handle: Any, *, with_text: bool) -> sqlite3.Row:
        """The receipt of a handle this queue issued; a handle it never issued is malformed."""
        row = None
        if isinstance(handle, str):
            row = self._sql(self.SQL_FIND_RECEIPT, queue=queue, handle=handle).fetchone()
        if row is None:
            raise v.refuse(errors.malformed_handle(str(handle), with_text=with_text, dialect="sqs")[0])
        return row

    # --- queues ----------------------------------------------------------------------------------------

    def _parse_attributes(self, attributes: dict[str, Any]) -> dict[str, Any]:
        """Validates every attribute before any is applied, so a refused request changes nothing.
        Attributes this design does not keep (MessageRetentionPeriod, Policy...) are accepted and ignored:
        the documents give no rule for them."""
        columns: dict[str, Any] = {}
        for name, raw in attributes.items():
            if name == "VisibilityTimeout":
                columns["visibility_timeout"] = v.attribute(name, raw, 0, v.MAX_VISIBILITY)
            elif name == "DelaySeconds":
                columns["delay_seconds"] = v.attribute(name, raw, 0, v.MAX_DELAY)
            elif name == "ReceiveMessageWaitTimeSeconds":
                columns["wait_seconds"] = v.attribute(name, raw, 0, v.MAX_WAIT)
            elif name == "RedrivePolicy":
                policy = v.redrive_policy(raw)
                columns["dlq"], columns["max_receive_count"] = policy if policy else (None, None)
        return columns

    def _create_queue(self, op: CreateQueue) -> Response:
        columns = self._parse_attributes(dict(op.attributes or {}))
        if self._sql(self.SQL_QUEUE, queue=op.queue).fetchone() is not None:
            # Creating an existing queue succeeds and leaves it as it is. (AWS refuses differing attributes
            # with QueueAlreadyExists, which model/errors.py does not spell; the documents say nothing.)
            return Ok()
        row = {"visibility_timeout": DEFAULT_VISIBILITY, "delay_seconds": 0, "wait_seconds": 0, "dlq": None,
               "max_receive_count": None, **columns}
        self._sql(self.SQL_CREATE_QUEUE, queue=op.queue, **row)
        return Ok()

    def _set_attributes(self, op: SetQueueAttributes) -> Response:
        self._queue(op.queue)
        # Only later receives and sends see the new values: in-flight deadlines and delays already set stay.
        for column, value in self._parse_attributes(dict(op.attributes or {})).items():
            self._sql(f"UPDATE queues SET {column} = :value WHERE name = :queue", value=value, queue=op.queue)
        return Ok()

    def _get_attributes(self, op: GetQueueAttributes) -> Response:
        q = self._queue(op.queue)
        counts = self._sql(self.SQL_COUNTS, queue=op.queue, now=self.now()).fetchone()
        attributes = {
            "ApproximateNumberOfMessages": str(counts["visible"]),
            "ApproximateNumberOfMessagesNotVisible": str(counts["in_flight"]),
            "ApproximateNumberOfMessagesDelayed": str(counts["delayed"]),
            "VisibilityTimeout": str(q["visibility_timeout"]),
            "DelaySeconds": str(q["delay_seconds"]),
            "ReceiveMessageWaitTimeSeconds": str(q["wait_seconds"]),
        }
        if q["dlq"] is not None:
            attributes["RedrivePolicy"] = (
                f'{{"deadLetterTargetQueue":"{q["dlq"]}","maxReceiveCount":{q["max_receive_count"]}}}'
            )
        return AttributesOk(attributes)

    def _purge(self, op: PurgeQueue) -> Response:
        q = self._queue(op.queue)
        now = self.now()
        # A purge exactly 60 s after the last one is allowed: "one every 60 seconds".
        if q["last_purge_at"] is not None and now - q["last_purge_at"] < PURGE_INTERVAL:
            raise v.refuse(errors.purge_in_progress())
        self._sql(self.SQL_PURGE, queue=op.queue, now=now)
        self._sql(self.SQL_MARK_PURGED, queue=op.queue, now=now)
        return Ok()

    # --- messages --------------------------------------------------------------------------------------

    def _send(self, op: SendMessage) -> Response:
        q = self._queue(op.queue)
        delay = q["delay_seconds"] if op.delay_seconds is None else _delay(op.delay_seconds)
        # group_id / dedup_id are FIFO parameters; a standard queue ignores them (the documents give no rule).
        message_id = self._next_id("m")
        self._sql(self.SQL_SEND, message_id=message_id, queue=op.queue, body=op.body, now=self.now(), delay=delay)
        return SendOk(message_id)

    def _receive(self, op: ReceiveMessage) -> Response:
        q = self._queue(op.queue)
        # Checked in this order; SQS checks WaitTimeSeconds before VisibilityTimeout (README). Where
        # MaxNumberOfMessages falls is not recorded: first is the choice here.
        limit = 1 if op.max_messages is None else v.in_range(op.max_messages, 1, v.MAX_BATCH,
                                                             errors.max_messages_out_of_range)
        wait = q["wait_seconds"] if op.wait_time_seconds is None else v.in_range(
            op.wait_time_seconds, 0, v.MAX_WAIT, errors.wait_out_of_range)
        # The override applies to this receive's messages only; the queue's value is not touched.
        timeout = q["visibility_timeout"] if op.visibility_timeout is None else _visibility(op.visibility_timeout)
        return ReceiveOk(self._poll(q, limit, timeout, wait))

    def _poll(self, q: sqlite3.Row, limit: int, timeout: int, wait: int) -> tuple[ReceivedMessage, ...]:
        """A long poll returns as soon as a message is due, else at the end of its wait (EVIDENCE: "long
        polling returns as soon as any message is available"). Nothing else can happen during the wait (the
        target is single-threaded), so the next moment worth looking at is the next `visible_at`."""
        deadline = self.now() + wait
        while True:
            taken = self._take(q, limit, timeout)
            if taken or self.now() >= deadline:
                return taken
            due = self._sql(self.SQL_NEXT_DUE, queue=q["name"], now=self.now()).fetchone()[0]
            self.clock.advance_to(deadline if due is None or due > deadline else due)

    def _take(self, q: sqlite3.Row, limit: int, timeout: int) -> tuple[ReceivedMessage, ...]:
        now = self.now()
        taken: list[ReceivedMessage] = []
        for row in self._sql(self.SQL_VISIBLE, queue=q["name"], now=now).fetchall():
            if len(taken) == limit:
                break
            if self._redrives(q, row):
                self._sql(self.SQL_REDRIVE, dlq=q["dlq"], now=now, id=row["id"])
                continue
            handle = self._next_id("rh")
            self._sql(self.SQL_MARK_RECEIVED, now=now, handle=handle, timeout=timeout, id=row["id"])
            self._sql(self.SQL_ISSUE_RECEIPT, handle=handle, id=row["id"], queue=q["name"], now=now)
            after = self._sql(self.SQL_RECEIVED_ROW, id=row["id"]).fetchone()
            taken.append(ReceivedMessage(row["message_id"], row["body"], handle, after["receive_count"],
                                         _ms(after["first_receive_at"])))
        return tuple(taken)

    def _redrives(self, q: sqlite3.Row, row: sqlite3.Row) -> bool:
        """EVIDENCE: "when the receive count would exceed maxReceiveCount, the message moves to the dead-letter
        queue instead of being returned". A policy naming a queue that does not exist (the documents are
        silent) redrives nothing: the message is delivered as if there were no policy."""
        if q["max_receive_count"] is None or row["receive_count"] + 1 <= q["max_receive_count"]:
            return False
        return self._sql(self.SQL_QUEUE, queue=q["dlq"]).fetchone() is not None

    # --- visibility changes ----------------------------------------------------------------------------

    def _change(self, queue: str, handle: Any, raw_timeout: Any) -> None:
        # The value is checked before the handle (README: checking the handle first is a divergence).
        timeout = _visibility(raw_timeout)
        receipt = self._receipt(queue, handle, with_text=False)
        if receipt["id"] is None:
            raise v.refuse(errors.not_available_for_change())
        now = self.now()
        # Rejected, not clipped (EVIDENCE).
        if now + timeout > self._ceiling_base(receipt) + v.MAX_VISIBILITY:
            raise v.refuse(errors.beyond_ceiling(raw_timeout))
        # A stale handle's change is accepted and takes effect (EVIDENCE, VAL). An expired handle's change on
        # a message not received again is accepted; whether it hides the message is unknown, and here it does
        # (as the 2008 guide's "lock" of a message not in flight).
        self._sql(self.SQL_CHANGE, now=now, timeout=timeout, id=receipt["id"])

    def _ceiling_base(self, receipt: sqlite3.Row) -> float:
        """Where the 12-hour ceiling counts from. "The maximum visibility timeout is 12 hours from the time that
        Amazon SQS receives the ReceiveMessage request. Extending the visibility timeout does not reset the
        12-hour maximum" (seed 002): the message's latest receive, not its send (time spent waiting before the
        receive does not count) and not a change. For a stale handle, the latest receive is the one whose
        visibility the change acts on."""
        return receipt["received_at"]

    def _change_one(self, op: ChangeMessageVisibility) -> Response:
        self._queue(op.queue)
        self._change(op.queue, op.receipt_handle, op.visibility_timeout)
        return ChangeOk()

    def _change_batch(self, op: ChangeMessageVisibilityBatch) -> Response:
        self._queue(op.queue)
        return self._batch(op.entries, lambda e: self._change(op.queue, e.receipt_handle, e.visibility_timeout))

    # --- deletes ---------------------------------------------------------------------------------------

    def _delete(self, queue: str, handle: Any) -> None:
        receipt = self._receipt(queue, handle, with_text=True)
        # Any handle this queue issued deletes its message: the current one, an expired one (EVIDENCE, REC) and
        # a stale one ("the request will succeed, but the message might not be deleted": deleting is allowed).
        # A message already deleted: success again (EVIDENCE: delete twice succeeds).
        if receipt["id"] is not None:
            self._sql(self.SQL_DELETE, id=receipt["id"])

    def _delete_one(self, op: DeleteMessage) -> Response:
        self._queue(op.queue)
        self._delete(op.queue, op.receipt_handle)
        return Ok()

    def _delete_batch(self, op: DeleteMessageBatch) -> Response:
        self._queue(op.queue)
        return self._batch(op.entries, lambda e: self._delete(op.queue, e.receipt_handle))

    def _batch(self, entries: Any, apply: Callable[[Any], None]) -> BatchOk:
        """Envelope rules refuse the whole request; past them every entry is tried, in order, and a failing
        entry goes to Failed (SenderFault) without stopping the others."""
        entries = tuple(entries or ())
        v.batch_envelope([e.id for e in entries])
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry in entries:
            try:
                apply(entry)
            except v.Refusal as refusal:
                failed.append(EntryFailure(entry.id, refusal.error.code, refusal.error.message, True))
            else:
                successful.append(entry.id)
        return BatchOk(tuple(successful), tuple(failed))


def _ms(seconds: float | None) -> int | None:
    """ApproximateFirstReceiveTimestamp: milliseconds on the caller's clock, rounded to the nearest."""
    return None if seconds is None else round(seconds * 1000)
