"""Plausible races in the PostgreSQL design, for the concurrency checks the suite will gain (issue 46).

Each variant differs from `PostgresQueue` only in how one operation reaches the database: it splits what the correct
design does in one statement (or under a row lock) into a read and a later write, under READ COMMITTED. For a single
client nothing can happen between the read and the write, so every variant answers exactly as the correct design
does, step for step: a single client cannot tell them apart, and the suite's single-client run conforms on each
(tests/inhouse/test_pgq.py checks that). Only two clients interleaving inside the window can show the bug.
"""

from __future__ import annotations

from typing import Any

from psycopg import IsolationLevel

from .target import CEILING, PostgresQueue

_ISSUE = """
    WITH taken AS (
        UPDATE messages m SET visible_at = %(now)s + %(visibility)s, receive_count = m.receive_count + 1,
                              first_received_at = coalesce(m.first_received_at, %(now)s), received_at = %(now)s,
                              receipt = 'pgq-' || md5(gen_random_uuid()::text)
        WHERE m.id = ANY(%(ids)s)
        RETURNING m.id, m.message_id, m.body, m.receipt, m.receive_count, m.first_received_at),
    issued AS (
        INSERT INTO receipts (handle, queue_id, message_row, received_at)
        SELECT receipt, %(queue)s, id, %(now)s FROM taken)
    SELECT message_id, body, receipt, receive_count, first_received_at FROM taken ORDER BY id"""

_VISIBLE = """
    SELECT m.id, m.visible_at FROM messages m JOIN queues q ON q.id = m.queue_id
    WHERE m.queue_id = %(queue)s AND m.visible_at <= %(now)s AND m.sent_at + q.retention > %(now)s
    ORDER BY m.id LIMIT %(count)s"""


class NoRowLocks(PostgresQueue):
    """Receive SELECTs visible rows without FOR UPDATE, then UPDATEs them: two consumers can take one message."""

    def _take(self, queue_id: int, now: float, count: int, visibility: int) -> list[tuple[Any, ...]]:
        ids = [row[0] for row in self.conn.execute(
            _VISIBLE, {"queue": queue_id, "now": now, "count": count}).fetchall()]
        if not ids:
            return []
        # The UPDATE does not recheck visible_at: a row another receive took meanwhile is taken again.
        return self.conn.execute(
            _ISSUE, {"ids": ids, "queue": queue_id, "now": now, "visibility": visibility}).fetchall()


class CheckThenUpdate(PostgresQueue):
    """READ COMMITTED receive that reads each message's deadline, checks it in Python, then writes it separately."""

    def __init__(self, profile_name: str = "sqs-standard") -> None:
        super().__init__(profile_name)
        self.conn.isolation_level = IsolationLevel.READ_COMMITTED  # each statement sees what committed before it

    def _take(self, queue_id: int, now: float, count: int, visibility: int) -> list[tuple[Any, ...]]:
        due: list[int] = []
        for row_id, _ in self.conn.execute(_VISIBLE, {"queue": queue_id, "now": now, "count": count}).fetchall():
            deadline = self.conn.execute("SELECT visible_at FROM messages WHERE id = %s", (row_id,)).fetchone()
            if deadline is not None and deadline[0] <= now:  # the check ...
                due.append(row_id)
        if not due:
            return []
        # ... and the write, in another statement: a concurrent receive between them has already moved the deadline.
        return self.conn.execute(
            _ISSUE, {"ids": due, "queue": queue_id, "now": now, "visibility": visibility}).fetchall()


class DeleteStaleHandle(PostgresQueue):
    """Delete checks the handle is current, then deletes by row id: a redelivery in between loses its message."""

    def _delete_current(self, queue_id: int, handle: str) -> bool:
        row = self.conn.execute(
            "SELECT m.id, m.receipt FROM messages m JOIN receipts r ON m.id = r.message_row "
            "WHERE r.handle = %s AND r.queue_id = %s AND m.queue_id = r.queue_id", (handle, queue_id)).fetchone()
        if row is None or row[1] != handle:
            return False
        self.conn.execute("DELETE FROM messages WHERE id = %s", (row[0],))  # no recheck of the receipt
        return True


class ChangeReadThenWrite(PostgresQueue):
    """Change reads the message and its ceiling, then writes by row id: a message gone meanwhile is changed anyway."""

    def _apply_change(self, queue_id: int, handle: str, now: float, timeout: int) -> bool:
        row = self.conn.execute(
            "SELECT m.id, m.received_at FROM messages m JOIN receipts r ON m.id = r.message_row "
            "WHERE r.handle = %s AND r.queue_id = %s AND m.queue_id = r.queue_id", (handle, queue_id)).fetchone()
        if row is None or now + timeout > row[1] + CEILING:
            return False
        self.conn.execute("UPDATE messages SET visible_at = %s WHERE id = %s", (now + timeout, row[0]))
        return True


class PurgeWithoutLock(PostgresQueue):
    """Purge reads the queue's row ids, then deletes by id: a message sent in between survives the purge."""

    def _purge_messages(self, queue_id: int) -> None:
        ids = [row[0] for row in self.conn.execute("SELECT id FROM messages WHERE queue_id = %s",
                                                   (queue_id,)).fetchall()]
        self.conn.execute("DELETE FROM messages WHERE id = ANY(%s)", (ids,))


VARIANTS = (NoRowLocks, CheckThenUpdate, DeleteStaleHandle, ChangeReadThenWrite, PurgeWithoutLock)
