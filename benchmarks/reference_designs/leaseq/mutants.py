"""Plausible bugs of the leaseq design, each one exact text edit of one method of `LeaseQueueTarget`.

Each mutant is the original method's source with one edit, recompiled in the design's module namespace; an edit must
apply exactly once, so a mutant cannot silently become the original when the design changes. Names starting with
`fifo-`, `attempt-` or `dedup-` are bugs only a FIFO queue can show; every other one shows on a standard queue.

Written from how such code goes wrong, before and without running any conformance tool, and not tuned afterwards:
whether a suite notices each is what is measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.reference_designs.leaseq import target as target_module
from benchmarks.reference_designs.leaseq.target import LeaseQueueTarget as T
from benchmarks.reference_designs.mutation import Mutant, method_edited, mutant


def _method(method: Callable[..., Any], old: str, new: str) -> dict[str, Any]:
    return method_edited(method, old, new, target_module)


def _mutant(name: str, bug: str, method: Callable[..., Any], old: str, new: str) -> Mutant:
    return mutant(T, name, bug, _method(method, old, new), __name__)


MUTANTS: list[Mutant] = [
    # --- visibility: leases and their expiry ---
    _mutant("lease-expiry-late",
            "A lease is reclaimed only once the clock is past its expiry, so a message is still hidden at the very "
            "second its visibility timeout ends.",
            T._reclaim,
            "while heap and heap[0][0] <= now:",
            "while heap and heap[0][0] < now:"),
    _mutant("receive-zero-override-ignored",
            "ReceiveMessage's VisibilityTimeout override is read with `or`, so an override of 0 falls back to the "
            "queue's timeout and the message stays hidden.",
            T._receive_message,
            'timeout = queue.attrs["VisibilityTimeout"] if timeout is None else timeout',
            'timeout = timeout or queue.attrs["VisibilityTimeout"]'),
    _mutant("first-receive-overwritten",
            "The first-receive timestamp is written on every receive instead of only the first.",
            T._lease_out,
            "if msg.first_receive_at is None:\n        msg.first_receive_at = now",
            "msg.first_receive_at = now"),
    # --- visibility changes ---
    _mutant("change-additive",
            "ChangeMessageVisibility extends the current lease by the new timeout instead of counting it from the "
            "call.",
            T._change_one,
            "self._grant(queue, msg, receipt, now + timeout)",
            "self._grant(queue, msg, receipt, (msg.lease.expires_at if msg.lease else now) + timeout)"),
    _mutant("change-ceiling-reset",
            "Every accepted visibility change renews the lease's 12-hour ceiling from the change, so a heartbeat can "
            "keep a message hidden past 12 hours after its receive.",
            T._change_one,
            "receipt.changed = True",
            "receipt.changed = True\n    receipt.ceiling = now + self.MAX_VISIBILITY"),
    _mutant("change-ceiling-from-send",
            "The 12-hour ceiling is counted from when the message was sent rather than from the receive, so time "
            "spent waiting in the queue eats into it.",
            T._lease_out,
            "ceiling=requested_at + self.MAX_VISIBILITY",
            "ceiling=msg.sent_at + self.MAX_VISIBILITY"),
    _mutant("change-deleted-accepted",
            "ChangeMessageVisibility on a message that was deleted answers success instead of InvalidParameterValue.",
            T._change_one,
            "return self._gone(handle)",
            "return Ok()"),
    # --- deletes ---
    _mutant("delete-expired-refused",
            "The FIFO rule that a receipt deletes only while its own lease holds is applied to standard queues too, "
            "so deleting with an expired or superseded standard handle is refused.",
            T._delete_one,
            "if queue.fifo and (msg.lease is None or msg.lease.receipt is not receipt):",
            "if msg.lease is None or msg.lease.receipt is not receipt:"),
    # --- receives and long polls ---
    _mutant("receive-max-eleven",
            "MaxNumberOfMessages is checked against an upper bound one too high, so 11 is accepted.",
            T._receive_message,
            '"MaxNumberOfMessages", 1, self.MAX_BATCH,',
            '"MaxNumberOfMessages", 1, self.MAX_BATCH + 1,'),
    _mutant("long-poll-queue-wait-ignored",
            "A receive without WaitTimeSeconds short-polls instead of using the queue's "
            "ReceiveMessageWaitTimeSeconds.",
            T._receive_message,
            'wait = queue.attrs["ReceiveMessageWaitTimeSeconds"] if wait is None else wait',
            "wait = 0 if wait is None else wait"),
    _mutant("long-poll-deadline-exclusive",
            "A long poll gives up without looking again when the next message becomes receivable exactly at the end "
            "of the wait.",
            T._receive_message,
            "if wake is None or wake > deadline:",
            "if wake is None or wake >= deadline:"),
    # --- delays ---
    _mutant("delay-queue-default-ignored",
            "A message sent without DelaySeconds is visible at once instead of taking the queue's DelaySeconds.",
            T._enqueue,
            'delay = queue.attrs["DelaySeconds"] if delay is None else delay',
            "delay = 0 if delay is None else delay"),
    _mutant("queue-delay-range-copied",
            "The queue attribute DelaySeconds is range-checked with VisibilityTimeout's maximum (43200) instead of "
            "900.",
            T._attribute_ranges,
            '"DelaySeconds": (0, self.MAX_DELAY, 0),',
            '"DelaySeconds": (0, self.MAX_VISIBILITY, 0),'),
    # --- batches ---
    _mutant("batch-delete-stops-at-first-failure",
            "DeleteMessageBatch stops at the first failing entry, leaving the later entries neither done nor "
            "reported.",
            T._delete_message_batch,
            "continue",
            "break"),
    _mutant("batch-ids-not-distinct",
            "The batch check never records the ids it has seen, so repeated entry ids are not refused.",
            T._check_batch,
            "seen.add(entry.id)",
            "pass"),
    # --- attributes ---
    _mutant("attributes-expired-not-reclaimed",
            "GetQueueAttributes counts without reclaiming expired leases first, so timed-out messages still count "
            "as not visible.",
            T._get_queue_attributes,
            "self._reclaim(queue, now)\n    visible",
            "visible"),
    # --- redrive ---
    _mutant("redrive-one-early",
            "A message is moved to the dead-letter queue when its receive count reaches maxReceiveCount - 1, one "
            "receive too early.",
            T._take,
            "msg.receive_count >= policy.max_receive_count",
            "msg.receive_count + 1 >= policy.max_receive_count"),
    _mutant("redrive-resets-count",
            "A message moved to the dead-letter queue starts again at receive count 0 instead of keeping its count.",
            T._dead_letter,
            "receive_count=msg.receive_count",
            "receive_count=0"),
    # --- purge ---
    _mutant("purge-keeps-inflight",
            "PurgeQueue removes only the messages not in flight; received ones survive it.",
            T._purge_queue,
            "queue.messages.clear()",
            "queue.messages = {i: m for i, m in queue.messages.items() if m.lease is not None}"),
    _mutant("purge-no-rate-limit",
            "The time of a purge is never recorded, so the 60-second limit between purges is never enforced.",
            T._purge_queue,
            "queue.purged_at = now",
            "pass"),
    # --- FIFO: groups, order, deletes ---
    _mutant("fifo-inflight-skipped",
            "An in-flight FIFO message is skipped but does not lock the rest of its group, so later messages of the "
            "group are handed out while it is being processed.",
            T._candidates,
            "blocked.add(group)  # a lease locks the rest of its group",
            "pass  # a lease locks the rest of its group"),
    _mutant("fifo-requeue-at-tail",
            "A message whose lease ends is put back at the tail of the queue, so it comes back after the messages "
            "of its group sent later.",
            T._release,
            "msg.lease = None",
            "msg.lease = None\n    queue.messages[msg.id] = queue.messages.pop(msg.id)"),
    _mutant("fifo-delete-expired-accepted",
            "A FIFO delete refuses only a handle superseded by a later receive, and accepts one whose lease has "
            "merely expired.",
            T._delete_one,
            "(msg.lease is None or msg.lease.receipt is not receipt)",
            "(msg.lease is not None and msg.lease.receipt is not receipt)"),
    # --- FIFO: deduplication and receive attempts ---
    _mutant("dedup-window-from-last-send",
            "A duplicate send refreshes the deduplication record, so the 5-minute window is counted from the last "
            "duplicate instead of the first send.",
            T._send_message,
            "return SendOk(record.message_id)",
            "record.sent_at = now\n        return SendOk(record.message_id)"),
    _mutant("dedup-forgotten-on-delete",
            "Deleting a FIFO message also drops its deduplication record, so a resend within 5 minutes of the first "
            "is enqueued again.",
            T._delete_one,
            "del queue.messages[msg.id]",
            "del queue.messages[msg.id]\n    queue.dedup.pop(msg.dedup_key or '', None)"),
    _mutant("attempt-id-wrong-key",
            "A retried ReceiveRequestAttemptId is looked up under the queue's name instead of the attempt id, so "
            "retries are never recognised and receive new messages.",
            T._receive_message,
            "prior = queue.attempts.get(attempt_id)",
            "prior = queue.attempts.get(op.queue)"),
]
