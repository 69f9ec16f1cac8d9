"""Plausible bugs of the SQLite design, each one edit of a SQL statement or of one line of a method.

Every mutant is a subclass of `SqliteQueueTarget` that replaces one SQL constant or one method, the method being
the original's source with one exact text edit, recompiled. Both kinds of edit must apply exactly once, so a
mutant cannot silently become the original when the design changes.

Written from how such code goes wrong, not from the suite: whether the suite notices each is what is measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.reference_designs.mutation import Mutant, edit, method_edited, mutant
from benchmarks.reference_designs.sqliteq import target as target_module
from benchmarks.reference_designs.sqliteq.target import SqliteQueueTarget as T


def _sql(name: str, old: str, new: str) -> dict[str, Any]:
    """Swap one SQL constant of the design."""
    return {name: edit(getattr(T, name), old, new)}


def _method(method: Callable[..., Any], old: str, new: str) -> dict[str, Any]:
    return method_edited(method, old, new, target_module)


def _mutant(name: str, bug: str, overrides: dict[str, Any]) -> Mutant:
    return mutant(T, name, bug, overrides, __name__)


MUTANTS: list[Mutant] = [
    # --- when a message is receivable ------------------------------------------------------------------
    _mutant("visible-strict-lt",
            "A message is receivable only after its deadline, not at it (`visible_at < :now`), so an undelayed "
            "message cannot be received in the instant it is sent and a timed-out one comes back late.",
            _sql("SQL_VISIBLE", "visible_at <= :now", "visible_at < :now")),
    _mutant("clock-truncated",
            "The adapter truncates the clock to whole seconds, so deadlines start up to a second early.",
            _method(T.now, "return self.clock.now()", "return float(int(self.clock.now()))")),

    # --- ChangeMessageVisibility -----------------------------------------------------------------------
    _mutant("additive-extend",
            "A change adds the new timeout to the old deadline instead of counting it from the call.",
            _sql("SQL_CHANGE", "visible_at = :now + :timeout", "visible_at = visible_at + :timeout")),
    _mutant("ceiling-from-send",
            "The 12-hour ceiling is counted from the send, so time spent waiting before the receive counts.",
            _method(T._ceiling_base, 'receipt["received_at"]', 'receipt["sent_at"]')),
    _mutant("ceiling-from-first-receive",
            "The 12-hour ceiling is counted from the message's first receive rather than the receive that "
            "produced the receipt, so a message received again long after its first receive cannot be extended.",
            _method(T._ceiling_base, 'receipt["received_at"]', 'receipt["first_receive_at"]')),
    _mutant("ceiling-reset-by-change",
            "Each change also moves the ceiling's base to the call, so extending resets the 12-hour maximum.",
            _sql("SQL_CHANGE", "SET visible_at", "SET received_at = :now, visible_at")),
    _mutant("change-skips-range-check",
            "The change relies on the ceiling check alone, so a negative timeout is accepted (and releases the "
            "message) instead of being refused as out of range.",
            _method(T._change, "timeout = _visibility(raw_timeout)", "timeout = int(raw_timeout)")),
    _mutant("change-on-deleted-accepted",
            "A change through the handle of a deleted message succeeds silently instead of being refused.",
            _method(T._change, "raise v.refuse(errors.not_available_for_change())", "return")),
    _mutant("stale-handle-refused",
            "A handle is honoured only while it is the message's latest, so a change through an earlier "
            "receive's handle is refused as if the message were gone.",
            _sql("SQL_FIND_RECEIPT", "AND m.queue = r.queue", "AND m.queue = r.queue AND m.receipt_handle = r.handle")),
    _mutant("receipts-inner-join",
            "The receipt lookup inner-joins the message, so a deleted message's handle looks malformed: a second "
            "delete fails with ReceiptHandleIsInvalid and a change gets the wrong error.",
            _sql("SQL_FIND_RECEIPT", "LEFT JOIN", "JOIN")),

    # --- ReceiveMessage --------------------------------------------------------------------------------
    _mutant("override-written-to-queue",
            "A receive's VisibilityTimeout override is saved as the queue's timeout, so later receives use it.",
            _method(T._receive, "return ReceiveOk(", 'self._sql("UPDATE queues SET visibility_timeout = :t WHERE '
                    'name = :queue", t=timeout, queue=op.queue)\n    return ReceiveOk(')),
    _mutant("override-ignored",
            "A receive's VisibilityTimeout override is validated but the queue's timeout hides the messages.",
            _method(T._receive, "return ReceiveOk(self._poll(q, limit, timeout, wait))",
                    'return ReceiveOk(self._poll(q, limit, q["visibility_timeout"], wait))')),
    _mutant("zero-override-falsy",
            "`if op.visibility_timeout` treats an override of 0 as absent, so VisibilityTimeout=0 hides the "
            "message for the queue's timeout.",
            _method(T._receive, "if op.visibility_timeout is None else _visibility(op.visibility_timeout)",
                    "if not op.visibility_timeout else _visibility(op.visibility_timeout)")),
    _mutant("count-not-bumped",
            "The receive forgets to increment the receive count (and redrive never fires).",
            _sql("SQL_MARK_RECEIVED", "receive_count = receive_count + 1, ", "")),
    _mutant("first-receive-overwritten",
            "ApproximateFirstReceiveTimestamp is overwritten on every receive instead of kept from the first.",
            _sql("SQL_MARK_RECEIVED", "COALESCE(first_receive_at, :now)", ":now")),
    _mutant("first-receive-in-seconds",
            "ApproximateFirstReceiveTimestamp is reported in whole seconds instead of milliseconds.",
            _method(T._take, '_ms(after["first_receive_at"])', 'int(after["first_receive_at"])')),
    _mutant("max-messages-off-by-one",
            "The receive stops one message too late, returning MaxNumberOfMessages + 1 when enough are visible.",
            _method(T._take, "if len(taken) == limit:", "if len(taken) > limit:")),
    _mutant("max-messages-accepts-zero",
            "MaxNumberOfMessages is range-checked from 0, so 0 is accepted (and returns nothing) instead of refused.",
            _method(T._receive, "v.in_range(op.max_messages, 1,", "v.in_range(op.max_messages, 0,")),

    # --- long polling ----------------------------------------------------------------------------------
    _mutant("longpoll-waits-full",
            "A long poll that finds nothing sleeps to the end of its wait even when a message falls due earlier.",
            _method(T._poll, "self.clock.advance_to(deadline if due is None or due > deadline else due)",
                    "self.clock.advance_to(deadline)")),
    _mutant("longpoll-never-waits",
            "The wait is ignored: a long poll that finds nothing returns empty at once.",
            _method(T._poll, "deadline = self.now() + wait", "deadline = self.now()")),
    _mutant("longpoll-ignores-queue-default",
            "A receive without WaitTimeSeconds short-polls, ignoring the queue's ReceiveMessageWaitTimeSeconds.",
            _method(T._receive, 'wait = q["wait_seconds"] if', "wait = 0 if")),

    # --- sending and counting --------------------------------------------------------------------------
    _mutant("queue-delay-ignored",
            "A send without DelaySeconds is visible at once, ignoring the queue's DelaySeconds.",
            _method(T._send, 'delay = q["delay_seconds"] if', "delay = 0 if")),
    _mutant("delay-range-copy-paste",
            "DelaySeconds is range-checked with the visibility limit, so 901..43200 is accepted.",
            _method(T._send, "_delay(op.delay_seconds)",
                    'v.request_param("DelaySeconds", v.MAX_VISIBILITY)(op.delay_seconds)')),
    _mutant("delayed-counted-not-visible",
            "ApproximateNumberOfMessagesNotVisible counts every hidden message, delayed ones included.",
            _sql("SQL_COUNTS", "SUM(visible_at > :now AND receive_count > 0)", "SUM(visible_at > :now)")),

    # --- batches, purge, redrive -----------------------------------------------------------------------
    _mutant("batch-stops-at-first-failure",
            "A batch stops at its first failing entry: the entries after it are neither applied nor reported.",
            _method(T._batch, "failed.append(EntryFailure(entry.id, refusal.error.code, refusal.error.message, True))",
                    "failed.append(EntryFailure(entry.id, refusal.error.code, refusal.error.message, True))\n"
                    "            break")),
    _mutant("purge-spares-in-flight",
            "The purge deletes only the visible messages, sparing those in flight (and delayed ones).",
            _sql("SQL_PURGE", "sent_at <= :now", "visible_at <= :now")),
    _mutant("purge-time-not-recorded",
            "The purge forgets to record its time, so a second purge within 60 s is accepted.",
            _method(T._purge, "self._sql(self.SQL_MARK_PURGED, queue=op.queue, now=now)", "pass")),
    _mutant("redrive-one-late",
            "Redrive compares the count before this receive with maxReceiveCount, so a message is delivered "
            "maxReceiveCount + 1 times before it moves.",
            _method(T._redrives, 'row["receive_count"] + 1 <= q["max_receive_count"]',
                    'row["receive_count"] <= q["max_receive_count"]')),
    _mutant("redrive-one-early",
            "Redrive moves the message when this receive would reach maxReceiveCount, not exceed it, so it is "
            "delivered only maxReceiveCount - 1 times.",
            _method(T._redrives, 'row["receive_count"] + 1 <= q["max_receive_count"]',
                    'row["receive_count"] + 1 < q["max_receive_count"]')),
]
