"""An in-house queue on PostgreSQL, as a team would build one for many concurrent consumers (README.md).

Every message is a row of `messages` whose `visible_at` (seconds on the suite's virtual clock) is its deadline: a
message is receivable when `visible_at <= now`. A receive is one statement that picks visible rows with
`FOR UPDATE SKIP LOCKED`, sets their deadline, bumps their receive count and issues each a new receipt handle
(recorded in `receipts`); a change or a delete goes through a handle in one statement too. Time always comes from
`self.clock.now()`, never from the database's or the system's clock.

Sources: the seed documents (seeds 000-004) and the observations of real AWS in EVIDENCE.md. Where they are silent
or hedge, the choice made is marked CHOICE in a comment.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from sqs_conformance.adapters.base import Target, TargetError, Unsupported, VirtualClock
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

from .server import PostgresServer, start_postgres

URL_VARIABLE = "SQS_CONFORMANCE_POSTGRES_URL"

CEILING = 43200  # seeds 002/003: 12 hours from the receive, not reset by extending
ARN_PREFIX = "arn:aws:sqs:us-east-1:000000000000:"  # CHOICE: one fixed region and account for every ARN

SCHEMA = """
CREATE TABLE queues (
    id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    visibility_timeout integer NOT NULL,
    delay_seconds integer NOT NULL,
    wait_seconds integer NOT NULL,
    retention integer NOT NULL,
    max_size integer NOT NULL,
    dead_letter_queue integer REFERENCES queues(id) ON DELETE SET NULL,
    max_receive_count integer,
    redrive_policy text,
    created_at double precision NOT NULL,
    modified_at double precision NOT NULL,
    last_purge_at double precision
);
CREATE TABLE messages (
    id bigserial PRIMARY KEY,                 -- also the send order
    queue_id integer NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
    message_id text NOT NULL,
    body text NOT NULL,
    sent_at double precision NOT NULL,
    visible_at double precision NOT NULL,     -- the deadline: receivable when visible_at <= now
    receive_count integer NOT NULL DEFAULT 0,
    first_received_at double precision,
    received_at double precision,             -- the latest receive: the 12-hour ceiling's start
    receipt text,                             -- the handle of the latest receive
    source_queue_id integer                   -- set when the message was moved to a dead-letter queue
);
CREATE INDEX messages_due ON messages (queue_id, visible_at);
CREATE TABLE receipts (
    handle text PRIMARY KEY,
    queue_id integer NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
    message_row bigint NOT NULL,              -- no foreign key: a handle outlives its message (a second delete is Ok)
    received_at double precision NOT NULL     -- when the receive that issued it happened
);
"""

# Queue attributes: name -> (column, lowest, highest, default). Seeds 000-003 give VisibilityTimeout's (0..43200,
# default 30); the rest are the SQS API reference's ranges, which the seeds do not give (CHOICE: AWS's documented
# ranges and defaults).
INTEGER_ATTRIBUTES: dict[str, tuple[str, int, int, int]] = {
    "VisibilityTimeout": ("visibility_timeout", 0, CEILING, 30),
    "DelaySeconds": ("delay_seconds", 0, 900, 0),
    "ReceiveMessageWaitTimeSeconds": ("wait_seconds", 0, 20, 0),
    "MessageRetentionPeriod": ("retention", 60, 1_209_600, 345_600),
    "MaximumMessageSize": ("max_size", 1024, 262_144, 262_144),
}
READ_ONLY_ATTRIBUTES = frozenset({
    "QueueArn", "CreatedTimestamp", "LastModifiedTimestamp", "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"})

BATCH_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


def _as_int(value: Any) -> int | None:
    """An integer as sent (an int, or a string of digits); None for anything else (a bool, a float, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        return int(value)
    return None


def _in_range(value: Any, low: int, high: int) -> int | None:
    number = _as_int(value)
    return number if number is not None and low <= number <= high else None


def _queue_missing() -> Error:
    return Error("QueueDoesNotExist", "The specified queue does not exist.", 400)


def _spec_error(spec: errors.ErrorSpec, text: str | None = None) -> Error:
    return Error(spec.code, text or spec.example, spec.status)


def _not_available(handle: str) -> Error:
    return Error(errors.INVALID_PARAMETER_VALUE, f"Value {handle} for parameter ReceiptHandle is invalid. Reason: "
                 "Message does not exist or is not available for visibility timeout change.", 400)


def _invalid_handle(handle: str) -> Error:
    # EVIDENCE: DeleteMessage's text is recorded; ChangeMessageVisibility's is not (CHOICE: the same text for both).
    return Error(errors.RECEIPT_HANDLE_IS_INVALID,
                 f'The input receipt handle "{handle}" is not a valid receipt handle.', 404)


def _visibility_out_of_range(value: Any) -> Error:
    # EVIDENCE: the code is InvalidParameterValue; no text is recorded (CHOICE: no reason given, so that the text
    # names no other check).
    return Error(errors.INVALID_PARAMETER_VALUE, f"Value {value} for parameter VisibilityTimeout is invalid.", 400)


@dataclass(frozen=True)
class Queue:
    id: int
    visibility_timeout: int
    delay_seconds: int
    wait_seconds: int
    dead_letter_queue: int | None
    max_receive_count: int | None


class PostgresQueue(Target):
    """Amazon SQS's visibility timeout (standard queues) on PostgreSQL, on the suite's virtual clock."""

    name = "pgq"
    profiles = frozenset({"sqs-standard"})

    def __init__(self, profile_name: str = "sqs-standard") -> None:
        if profile_name not in self.profiles:
            raise TargetError(f"pgq speaks sqs-standard only, not {profile_name}")
        self.profile = profile_name
        self.clock = VirtualClock()
        self._server: PostgresServer | None = None
        url = os.environ.get(URL_VARIABLE)
        if not url:
            self._server = start_postgres()
            url = self._server.url
        self._url = url
        self._owner: PostgresQueue | None = None  # set on a shared connection: the target that owns the schema
        self._clock_lock = threading.Lock()  # one per owner, shared by its connections: see _advance_clock
        try:
            self.conn = psycopg.connect(url, autocommit=True)
        except psycopg.Error as error:
            self._stop_server()
            raise TargetError(f"cannot connect to PostgreSQL at {url}: {str(error).strip().splitlines()[0]}") from None
        # Its own schema, so that several targets can share one server.
        self.schema = f"pgq_{secrets.token_hex(6)}"
        with self.conn.transaction():
            self.conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self.schema)))
            self.conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
            self.conn.execute(SCHEMA)
        self._closed = False

    # --- the Target interface ------------------------------------------------------------------------------

    def version(self) -> str:
        return str(self.conn.info.server_version)

    def reset(self) -> None:
        """Forget every queue. On a shared connection it does nothing: only the owner resets the schema."""
        if self._owner is None:
            self.conn.execute("TRUNCATE receipts, messages, queues RESTART IDENTITY")

    def shared_connection(self) -> PostgresQueue:
        """Another client of these very queues, of this target's class (a variant's connections carry its race):
        a psycopg connection of its own to the same database, on the same schema, with the connection's isolation
        level, and the same clock object (which `reset()` never replaces). Every other piece of state is in the
        database, so nothing else needs sharing. Each thread uses its own connection. Its `close()` closes its
        connection only (never the schema or the server); its `reset()` does nothing."""
        owner = self._owner or self
        other = object.__new__(type(self))
        other.__dict__.update(owner.__dict__)
        other._owner = owner
        other._server = None
        other._closed = False
        try:
            other.conn = psycopg.connect(owner._url, autocommit=True)
        except psycopg.Error as error:
            raise TargetError(f"cannot connect to PostgreSQL: {str(error).strip().splitlines()[0]}") from None
        other.conn.isolation_level = owner.conn.isolation_level  # a variant may have set its own
        other.conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(owner.schema)))
        return other

    def _advance_clock(self, t: float) -> None:
        """A long poll moves the shared clock on. VirtualClock.advance_to reads, then writes: two connections'
        advances interleaved there could move it back, so the owner's connections take turns."""
        with self._clock_lock:
            self.clock.advance_to(t)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._owner is not None:  # a shared connection owns nothing but its connection
            self.conn.close()
            return
        try:
            if self._server is None:
                self.conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))
        except psycopg.Error:
            pass
        finally:
            self.conn.close()
            self._stop_server()

    def _stop_server(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def execute(self, op: Operation) -> Response:
        match op:
            case CreateQueue():
                return self._create_queue(op)
            case SetQueueAttributes():
                return self._set_attributes(op)
            case GetQueueAttributes():
                return self._get_attributes(op)
            case SendMessage():
                return self._send(op)
            case ReceiveMessage():
                return self._receive(op)
            case ChangeMessageVisibility():
                return self._change_one(op)
            case ChangeMessageVisibilityBatch():
                return self._change_batch(op)
            case DeleteMessage():
                return self._delete_one(op)
            case DeleteMessageBatch():
                return self._delete_batch(op)
            case PurgeQueue():
                return self._purge(op)
            case PeekMessage():
                raise Unsupported("SQS has no peek (seed 000's peek is the 2008-era API)")
        raise Unsupported(f"pgq has no {type(op).__name__}")

    # --- queues --------------------------------------------------------------------------------------------

    def _queue(self, name: str) -> Queue | None:
        row = self.conn.execute(
            "SELECT id, visibility_timeout, delay_seconds, wait_seconds, dead_letter_queue, max_receive_count "
            "FROM queues WHERE name = %s", (name,)).fetchone()
        return None if row is None else Queue(*row)

    def _attribute_values(self, attributes: dict[str, Any], queue_name: str) -> dict[str, Any] | Error:
        """The columns a set of queue attributes writes, or the error that refuses them."""
        values: dict[str, Any] = {}
        for name, raw in attributes.items():
            if name in ("FifoQueue", "ContentBasedDeduplication") and str(raw).lower() == "true":
                raise Unsupported("pgq has standard queues only")
            if name in ("FifoQueue", "ContentBasedDeduplication"):
                continue
            if name in INTEGER_ATTRIBUTES:
                column, low, high, _ = INTEGER_ATTRIBUTES[name]
                number = _in_range(raw, low, high)
                if number is None:  # EVIDENCE: InvalidAttributeValue on queue attributes; text unknown
                    return _spec_error(errors.attribute_out_of_range(name, raw))
                values[column] = number
            elif name == "RedrivePolicy":
                redrive = self._redrive_values(raw, queue_name)
                if isinstance(redrive, Error):
                    return redrive
                values.update(redrive)
            else:
                return Error("InvalidAttributeName", f"Unknown Attribute {name}.", 400)
        return values

    def _redrive_values(self, raw: Any, queue_name: str) -> dict[str, Any] | Error:
        if raw in ("", None, {}):  # CHOICE: an empty policy removes the redrive
            return {"dead_letter_queue": None, "max_receive_count": None, "redrive_policy": None}
        invalid = Error(errors.INVALID_PARAMETER_VALUE,
                        f"Value {raw} for parameter RedrivePolicy is invalid. Reason: Invalid value for "
                        "the parameter RedrivePolicy.", 400)
        try:
            policy = json.loads(raw) if isinstance(raw, str) else dict(raw)
        except (ValueError, TypeError):
            return invalid
        if not isinstance(policy, dict):
            return invalid
        count = _in_range(policy.get("maxReceiveCount"), 1, 1000)
        # The suite names the dead-letter queue by its own queue name (deadLetterTargetQueue); a client of SQS by
        # its ARN (deadLetterTargetArn). CHOICE: an ARN is read as its last part, whatever region and account.
        named = policy.get("deadLetterTargetQueue", policy.get("deadLetterTargetArn"))
        if count is None or not isinstance(named, str):
            return invalid
        dead_letter_name = named.rsplit(":", 1)[-1]
        target = self.conn.execute("SELECT id FROM queues WHERE name = %s", (dead_letter_name,)).fetchone()
        if target is None:
            return Error(errors.INVALID_PARAMETER_VALUE, f"Value {raw} for parameter RedrivePolicy is invalid. "
                         "Reason: Dead letter target does not exist.", 400)
        return {"dead_letter_queue": target[0], "max_receive_count": count,
                "redrive_policy": json.dumps({"deadLetterTargetArn": ARN_PREFIX + dead_letter_name,
                                              "maxReceiveCount": count}, separators=(",", ":"))}

    def _create_queue(self, op: CreateQueue) -> Response:
        if op.queue.endswith(".fifo"):
            raise Unsupported("pgq has standard queues only")
        values = self._attribute_values(dict(op.attributes), op.queue)
        if isinstance(values, Error):
            return values
        now = self.clock.now()
        existing = self._queue(op.queue)
        if existing is not None:
            # CHOICE (the API reference, not the seeds): creating an existing queue is Ok if every attribute given
            # matches, else QueueAlreadyExists.
            if values and self._differs(existing.id, values):
                return Error("QueueAlreadyExists", "A queue already exists with the same name and a different value "
                             "for attribute(s)", 400)
            return Ok()
        columns = {column: default for column, _, _, default in INTEGER_ATTRIBUTES.values()}
        columns.update(values)
        columns.update(name=op.queue, created_at=now, modified_at=now)
        self.conn.execute(sql.SQL("INSERT INTO queues ({}) VALUES ({}) ON CONFLICT (name) DO NOTHING").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.SQL(", ").join(sql.Placeholder() * len(columns))),
            tuple(columns.values()))
        return Ok()

    def _differs(self, queue_id: int, values: dict[str, Any]) -> bool:
        row = self.conn.execute(sql.SQL("SELECT {} FROM queues WHERE id = %s").format(
            sql.SQL(", ").join(map(sql.Identifier, values))), (queue_id,)).fetchone()
        return row is None or tuple(row) != tuple(values.values())

    def _set_attributes(self, op: SetQueueAttributes) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        for name in op.attributes:
            if name in READ_ONLY_ATTRIBUTES:
                return Error("InvalidAttributeName", f"Unknown Attribute {name}.", 400)
        values = self._attribute_values(dict(op.attributes), op.queue)
        if isinstance(values, Error):
            return values
        # EVIDENCE: a change applies to later receives and sends; in-flight deadlines do not move (CHOICE: at once,
        # without the up-to-60 s propagation AWS allows itself).
        values["modified_at"] = self.clock.now()
        self.conn.execute(sql.SQL("UPDATE queues SET {} WHERE id = %s").format(
            sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in values)),
            (*values.values(), queue.id))
        return Ok()

    def _get_attributes(self, op: GetQueueAttributes) -> Response:
        now = self.clock.now()
        row = self.conn.execute(
            """SELECT q.name, q.visibility_timeout, q.delay_seconds, q.wait_seconds, q.retention, q.max_size,
                      q.redrive_policy, q.created_at, q.modified_at,
                      count(m.id) FILTER (WHERE m.visible_at <= %(now)s),
                      count(m.id) FILTER (WHERE m.visible_at > %(now)s AND m.receive_count > 0),
                      count(m.id) FILTER (WHERE m.visible_at > %(now)s AND m.receive_count = 0)
               FROM queues q LEFT JOIN messages m ON m.queue_id = q.id AND m.sent_at + q.retention > %(now)s
               WHERE q.name = %(name)s GROUP BY q.id""", {"now": now, "name": op.queue}).fetchone()
        if row is None:
            return _queue_missing()
        (name, visibility, delay, wait, retention, max_size, redrive, created, modified, visible, in_flight,
         delayed) = row
        attributes = {
            "VisibilityTimeout": str(visibility), "DelaySeconds": str(delay),
            "ReceiveMessageWaitTimeSeconds": str(wait), "MessageRetentionPeriod": str(retention),
            "MaximumMessageSize": str(max_size), "QueueArn": ARN_PREFIX + name,
            "CreatedTimestamp": str(int(created)), "LastModifiedTimestamp": str(int(modified)),
            "ApproximateNumberOfMessages": str(visible), "ApproximateNumberOfMessagesNotVisible": str(in_flight),
            "ApproximateNumberOfMessagesDelayed": str(delayed),
        }
        if redrive is not None:
            attributes["RedrivePolicy"] = redrive
        return AttributesOk(attributes)

    def _purge(self, op: PurgeQueue) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        now = self.clock.now()
        with self.conn.transaction():
            # CHOICE (the API reference, not the seeds): one purge per 60 s, as AWS refuses a second one.
            purged = self.conn.execute(
                "UPDATE queues SET last_purge_at = %(now)s WHERE id = %(id)s "
                "AND (last_purge_at IS NULL OR last_purge_at + 60 <= %(now)s) RETURNING id",
                {"now": now, "id": queue.id}).fetchone()
            if purged is None:
                return _spec_error(errors.purge_in_progress())
            self._purge_messages(queue.id)
        return Ok()

    def _purge_messages(self, queue_id: int) -> None:
        """EVIDENCE: a purge removes in-flight messages too. One statement, inside the purge's transaction."""
        self.conn.execute("DELETE FROM messages WHERE queue_id = %s", (queue_id,))

    # --- messages ------------------------------------------------------------------------------------------

    def _send(self, op: SendMessage) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        # CHOICE: MessageGroupId and MessageDeduplicationId on a standard queue are ignored.
        delay = queue.delay_seconds
        if op.delay_seconds is not None:
            checked = _in_range(op.delay_seconds, 0, 900)  # EVIDENCE: DelaySeconds 0..900
            if checked is None:
                return _spec_error(errors.out_of_range("DelaySeconds", op.delay_seconds, "sqs"))
            delay = checked
        now = self.clock.now()
        # EVIDENCE: a delay hides a message before its first receive; it is not in flight (receive_count stays 0).
        row = self.conn.execute(
            "INSERT INTO messages (queue_id, message_id, body, sent_at, visible_at) "
            "VALUES (%s, gen_random_uuid()::text, %s, %s, %s) RETURNING message_id",
            (queue.id, op.body, now, now + delay)).fetchone()
        assert row is not None
        return SendOk(row[0])

    def _receive(self, op: ReceiveMessage) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        count = 1
        if op.max_messages is not None:
            checked = _in_range(op.max_messages, 1, 10)
            if checked is None:
                return _spec_error(errors.max_messages_out_of_range(op.max_messages))
            count = checked
        wait = queue.wait_seconds  # seed-less: the queue's ReceiveMessageWaitTimeSeconds when none is given
        if op.wait_time_seconds is not None:
            checked = _in_range(op.wait_time_seconds, 0, 20)
            if checked is None:
                return _spec_error(errors.wait_out_of_range(op.wait_time_seconds))
            wait = checked
        visibility = queue.visibility_timeout  # seeds 000-002: the override applies to this receive only
        if op.visibility_timeout is not None:
            checked = _in_range(op.visibility_timeout, 0, CEILING)
            if checked is None:
                return _visibility_out_of_range(op.visibility_timeout)
            visibility = checked
        # CHOICE: no in-flight quota (about 120,000 in AWS, OverLimit on short polls): a test queue never nears it.
        give_up = self.clock.now() + wait
        while True:
            now = self.clock.now()
            with self.conn.transaction():
                self._redrive(queue, now)
                rows = self._take(queue.id, now, count, visibility)
            if rows or wait == 0:
                break
            # Long polling on the suite's clock (EVIDENCE: it returns as soon as any message is available): move
            # the clock to the next deadline within the wait, or to the wait's end.
            due = self.conn.execute(
                "SELECT min(m.visible_at) FROM messages m JOIN queues q ON q.id = m.queue_id "
                "WHERE m.queue_id = %s AND m.visible_at > %s AND m.visible_at <= %s AND m.sent_at + q.retention > %s",
                (queue.id, now, give_up, now)).fetchone()
            if due is None or due[0] is None:
                self._advance_clock(give_up)
                break
            self._advance_clock(due[0])
        return ReceiveOk(tuple(
            ReceivedMessage(message_id, body, handle, receive_count, round(first_received_at * 1000))
            for message_id, body, handle, receive_count, first_received_at in rows))

    def _redrive(self, queue: Queue, now: float) -> None:
        """EVIDENCE: a message whose receive count would exceed maxReceiveCount moves to the dead-letter queue
        instead of being returned, keeping its receive count (the move adds nothing). CHOICE: it is visible there at
        once, keeps its send time (so the retention still counts from the original send), and its old handles
        stop working on it (they name the source queue)."""
        if queue.dead_letter_queue is None or queue.max_receive_count is None:
            return
        self.conn.execute(
            """WITH doomed AS (
                   SELECT m.id FROM messages m JOIN queues q ON q.id = m.queue_id
                   WHERE m.queue_id = %(queue)s AND m.visible_at <= %(now)s AND m.sent_at + q.retention > %(now)s
                     AND m.receive_count >= %(limit)s
                   FOR UPDATE OF m SKIP LOCKED)
               UPDATE messages m SET queue_id = %(dlq)s, source_queue_id = m.queue_id, visible_at = %(now)s,
                                     receipt = NULL
               FROM doomed WHERE m.id = doomed.id""",
            {"queue": queue.id, "now": now, "limit": queue.max_receive_count, "dlq": queue.dead_letter_queue})

    def _take(self, queue_id: int, now: float, count: int, visibility: int) -> list[tuple[Any, ...]]:
        """The receive: one statement picks up to `count` visible rows that no concurrent receive holds, sets their
        deadline and receive count, and issues each a new handle (EVIDENCE: a new handle per receive).
        CHOICE: the oldest sends first (a standard queue promises no order). A message is visible from its deadline
        on (`visible_at <= now`; the documents do not say whether at or after it)."""
        return self.conn.execute(
            """WITH picked AS (
                   SELECT m.id FROM messages m JOIN queues q ON q.id = m.queue_id
                   WHERE m.queue_id = %(queue)s AND m.visible_at <= %(now)s AND m.sent_at + q.retention > %(now)s
                   ORDER BY m.id LIMIT %(count)s
                   FOR UPDATE OF m SKIP LOCKED),
               taken AS (
                   UPDATE messages m SET visible_at = %(now)s + %(visibility)s, receive_count = m.receive_count + 1,
                                         first_received_at = coalesce(m.first_received_at, %(now)s),
                                         received_at = %(now)s,
                                         receipt = 'pgq-' || md5(gen_random_uuid()::text)
                   FROM picked WHERE m.id = picked.id
                   RETURNING m.id, m.message_id, m.body, m.receipt, m.receive_count, m.first_received_at),
               issued AS (
                   INSERT INTO receipts (handle, queue_id, message_row, received_at)
                   SELECT receipt, %(queue)s, id, %(now)s FROM taken)
               SELECT message_id, body, receipt, receive_count, first_received_at FROM taken ORDER BY id""",
            {"queue": queue_id, "now": now, "count": count, "visibility": visibility}).fetchall()

    # --- changes -------------------------------------------------------------------------------------------

    def _change_one(self, op: ChangeMessageVisibility) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        answer = self._change(queue.id, op.receipt_handle, op.visibility_timeout)
        return ChangeOk() if answer is None else answer

    def _change(self, queue_id: int, handle: str, raw_timeout: Any) -> Error | None:
        """Seeds 000/002: the deadline becomes call time + v, never the old deadline + v; v = 0 releases the
        message. The change belongs to this receipt only: the next receive uses the queue's timeout again."""
        timeout = _in_range(raw_timeout, 0, CEILING)
        if timeout is None:
            return _visibility_out_of_range(raw_timeout)
        now = self.clock.now()
        if self._apply_change(queue_id, handle, now, timeout):
            return None
        return self._why_no_change(queue_id, handle, now, timeout)

    def _apply_change(self, queue_id: int, handle: str, now: float, timeout: int) -> bool:
        """One statement: the handle's message, if it is still in this queue and the new deadline keeps within 12
        hours of the message's latest receive (seed 002: "12 hours from the time that Amazon SQS receives the
        ReceiveMessage request"; "extending ... does not reset the 12-hour maximum"), gets its new deadline.
        EVIDENCE: a handle of an earlier receive is accepted and takes effect (VAL): it changes the message's
        current visibility timeout, so the ceiling is that of the current one, which the latest receive started
        (not that of the receive which issued the old handle; the suite's VIS-CEILING-FROM-RECEIVE reads it so).
        CHOICE: an expired handle whose message was not received again is accepted too (EVIDENCE permits
        either): it hides the message again."""
        return self.conn.execute(
            """UPDATE messages m SET visible_at = %(now)s + %(timeout)s
               FROM receipts r
               WHERE r.handle = %(handle)s AND r.queue_id = %(queue)s AND m.id = r.message_row
                 AND m.queue_id = r.queue_id AND %(now)s + %(timeout)s <= m.received_at + %(ceiling)s
               RETURNING m.id""",
            {"now": now, "timeout": timeout, "handle": handle, "queue": queue_id, "ceiling": CEILING}
        ).fetchone() is not None

    def _why_no_change(self, queue_id: int, handle: str, now: float, timeout: int) -> Error:
        row = self.conn.execute(
            "SELECT m.received_at, m.id IS NOT NULL FROM receipts r "
            "LEFT JOIN messages m ON m.id = r.message_row AND m.queue_id = r.queue_id "
            "WHERE r.handle = %s AND r.queue_id = %s", (handle, queue_id)).fetchone()
        if row is None:
            # CHOICE: a handle this queue never issued (malformed, or another queue's) is not a valid handle.
            return _invalid_handle(handle)
        received_at, present = row
        if not present:  # deleted, purged, expired by retention or moved to the dead-letter queue
            return _not_available(handle)
        if now + timeout > received_at + CEILING:
            # EVIDENCE: AWS rejects, it does not clip.
            return _spec_error(errors.beyond_ceiling(timeout))
        return _not_available(handle)  # changed under us by a concurrent client: gone since the statement

    def _change_batch(self, op: ChangeMessageVisibilityBatch) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        refused = _batch_refusal([e.id for e in op.entries], "ChangeMessageVisibilityBatchRequestEntry")
        if refused is not None:
            return refused
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry in op.entries:  # CHOICE: entries in the order given, each on its own
            answer = self._change(queue.id, entry.receipt_handle, entry.visibility_timeout)
            if answer is None:
                successful.append(entry.id)
            else:
                failed.append(EntryFailure(entry.id, answer.code, answer.message, True))
        return BatchOk(tuple(successful), tuple(failed))

    # --- deletes -------------------------------------------------------------------------------------------

    def _delete_one(self, op: DeleteMessage) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        answer = self._delete(queue.id, op.receipt_handle)
        return Ok() if answer is None else answer

    def _delete(self, queue_id: int, handle: str) -> Error | None:
        """EVIDENCE: deleting twice succeeds; an expired handle whose message was not received again deletes it.
        CHOICE (EVIDENCE permits either, the API reference says "the request will succeed, but the message might
        not be deleted"): a handle of an earlier receive, the message since received again, succeeds without
        deleting, so that a slow consumer does not delete the message from under the one that now holds it."""
        if self._delete_current(queue_id, handle):
            return None
        known = self.conn.execute("SELECT 1 FROM receipts WHERE handle = %s AND queue_id = %s",
                                  (handle, queue_id)).fetchone()
        return None if known is not None else _invalid_handle(handle)

    def _delete_current(self, queue_id: int, handle: str) -> bool:
        """One statement: the message goes only while `handle` is still its latest receipt (under READ COMMITTED
        a concurrent receive that issued a new handle makes the row fail the recheck)."""
        return self.conn.execute(
            """DELETE FROM messages m USING receipts r
               WHERE r.handle = %(handle)s AND r.queue_id = %(queue)s AND m.id = r.message_row
                 AND m.queue_id = r.queue_id AND m.receipt = r.handle
               RETURNING m.id""", {"handle": handle, "queue": queue_id}).fetchone() is not None

    def _delete_batch(self, op: DeleteMessageBatch) -> Response:
        queue = self._queue(op.queue)
        if queue is None:
            return _queue_missing()
        refused = _batch_refusal([e.id for e in op.entries], "DeleteMessageBatchRequestEntry")
        if refused is not None:
            return refused
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry in op.entries:
            answer = self._delete(queue.id, entry.receipt_handle)
            if answer is None:
                successful.append(entry.id)
            else:
                failed.append(EntryFailure(entry.id, answer.code, answer.message, True))
        return BatchOk(tuple(successful), tuple(failed))


def _batch_refusal(ids: list[str], entry_name: str) -> Error | None:
    """EVIDENCE (batches): empty, more than 10, an id outside [A-Za-z0-9_-]{1,80}, ids not distinct.
    CHOICE: checked in that order."""
    if not ids:
        return Error(errors.EMPTY_BATCH, f"There should be at least one {entry_name} in the request.", 400)
    if len(ids) > 10:
        return _spec_error(errors.too_many_entries(len(ids)))
    if any(not isinstance(i, str) or BATCH_ENTRY_ID.fullmatch(i) is None for i in ids):
        return _spec_error(errors.invalid_batch_entry_id())
    if len(set(ids)) != len(ids):
        return _spec_error(errors.batch_ids_not_distinct())
    return None
