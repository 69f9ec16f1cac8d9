"""The tables. A message's whole visibility state is one column, `visible_at`: it is receivable when
`visible_at <= now`. Sending sets it to the send time plus the delay, a receive to the receive time plus the
timeout, a change to the call time plus the new timeout."""

from __future__ import annotations

import sqlite3

DDL = """
CREATE TABLE queues (
    name               TEXT PRIMARY KEY,
    visibility_timeout INTEGER NOT NULL,
    delay_seconds      INTEGER NOT NULL,
    wait_seconds       INTEGER NOT NULL,   -- ReceiveMessageWaitTimeSeconds
    dlq                TEXT,               -- RedrivePolicy.deadLetterTargetQueue (a queue name), or NULL
    max_receive_count  INTEGER,            -- RedrivePolicy.maxReceiveCount, or NULL
    last_purge_at      REAL                -- purge bookkeeping: one PurgeQueue per 60 s
);

CREATE TABLE messages (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,   -- also the order of arrival
    message_id       TEXT NOT NULL UNIQUE,
    queue            TEXT NOT NULL,
    body             TEXT NOT NULL,
    sent_at          REAL NOT NULL,
    visible_at       REAL NOT NULL,
    receive_count    INTEGER NOT NULL DEFAULT 0,
    first_receive_at REAL,                                -- ApproximateFirstReceiveTimestamp, in seconds
    received_at      REAL,                                -- the latest receive: the 12-hour ceiling counts from it
    receipt_handle   TEXT                                 -- the latest receive's handle
);
CREATE INDEX messages_due ON messages (queue, visible_at, id);

-- Every handle ever issued, so that a stale or a deleted message's handle is told apart from a malformed one.
-- Rows outlive their message on purpose: a handle of a deleted message is not malformed.
CREATE TABLE receipts (
    handle      TEXT PRIMARY KEY,
    message     INTEGER NOT NULL,     -- messages.id
    queue       TEXT NOT NULL,        -- the queue that issued it (a message redriven away no longer matches)
    received_at REAL NOT NULL
);
"""


def open_database() -> sqlite3.Connection:
    """A fresh private database. Autocommit: each statement is its own transaction; the target runs one
    operation at a time (its lock), so no interleaving can split a read from the update that follows it. The
    runner may call from a thread other than the one that opened the database, hence check_same_thread."""
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.executescript(DDL)
    return db
