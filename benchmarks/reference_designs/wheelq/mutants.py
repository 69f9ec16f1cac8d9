"""Plausible bugs of the wheelq design, each one change to one method of `WheelQueueTarget`.

Most mutants are the original method's source with one exact text edit, recompiled in the design's module
namespace; an edit must apply exactly once, so a mutant cannot silently become the original when the design
changes. One (create-visibility-unchecked) is a hand-written override, as a team's separate create path would be.

Written from how such code goes wrong, before and without running any conformance tool: whether a suite notices
each is what is measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.reference_designs.mutation import Mutant, method_edited, mutant
from benchmarks.reference_designs.wheelq import target as target_module
from benchmarks.reference_designs.wheelq.target import WheelQueueTarget as T
from benchmarks.reference_designs.wheelq.target import as_int
from sqs_conformance.model.values import CreateQueue, Ok, Response


def _method(method: Callable[..., Any], old: str, new: str) -> dict[str, Any]:
    return method_edited(method, old, new, target_module)


def _mutant(name: str, bug: str, overrides: dict[str, Any]) -> Mutant:
    return mutant(T, name, bug, overrides, __name__)


class _CreateVisibilityUnchecked(T):
    """CreateQueue takes VisibilityTimeout on a path of its own that never range-checks it; SetQueueAttributes
    still goes through the checked parser."""

    def _create_queue(self, op: CreateQueue) -> Response:
        attributes = dict(op.attributes or {})
        raw = attributes.pop("VisibilityTimeout", None)
        response = super()._create_queue(CreateQueue(op.queue, attributes))
        if raw is not None and isinstance(response, Ok):
            self._queues[op.queue].settings["VisibilityTimeout"] = as_int(raw) or 0
        return response


MUTANTS: list[Mutant] = [
    # --- receive and visibility edges ---------------------------------------------------------------------
    _mutant("deadline-exclusive",
            "The timer wheel fires an entry only once its deadline is strictly past, so a message is not receivable "
            "at the very instant its delay or visibility timeout ends (and a timeout of 0 hides it until time moves).",
            {"WHEEL": type("ExclusiveWheel", (target_module.TimerWheel,),
                           _method(target_module.TimerWheel.due, "entry[0] <= now else", "entry[0] < now else"))}),
    _mutant("timeout-from-request",
            "A long poll counts the returned messages' visibility timeout from when the request arrived, not from "
            "when the message was handed out, so a message taken late in a wait comes back early.",
            _method(T._take, "self._hide(q, msg, now + timeout)", "self._hide(q, msg, asked_at + timeout)")),
    _mutant("stale-timer-releases",
            "Re-hiding a message does not bump its stamp, so the wheel entry of an earlier deadline still releases "
            "it: an extension by ChangeMessageVisibility is cut short at the receive's original deadline.",
            _method(T._hide, "msg.stamp += 1", "pass")),
    _mutant("handle-per-message",
            "The receipt handle is derived from the message id, so every receive of a message returns the same "
            "handle and an old handle acts as the newest receipt.",
            _method(T._take, "token = self._token()", 'token = "h-" + msg.message_id')),
    # --- change visibility ----------------------------------------------------------------------------------
    _mutant("change-additive",
            "ChangeMessageVisibility adds the new timeout to the current deadline instead of counting it from now.",
            _method(T._change, "self._hide(q, msg, now + timeout)", "self._hide(q, msg, msg.visible_at + timeout)")),
    _mutant("ceiling-reset-by-change",
            "Each accepted change restarts the 12-hour ceiling from the change, so repeated extensions can keep a "
            "message hidden past 12 hours after its receive.",
            _method(T._change, "receipt.changed = True", "receipt.changed = True; receipt.asked_at = now")),
    _mutant("ceiling-clips",
            "A change beyond the 12-hour ceiling is clipped to the ceiling and accepted instead of refused.",
            _method(T._change, "raise refuse(errors.beyond_ceiling(raw_timeout))",
                    "timeout = int(receipt.asked_at + MAX_VISIBILITY - now)")),
    _mutant("terminate-keeps",
            "ChangeMessageVisibility with 0 is treated as 'no new timeout' and leaves the deadline where it was, "
            "instead of making the message visible at once.",
            _method(T._change, "self._hide(q, msg, now + timeout)", "if timeout: self._hide(q, msg, now + timeout)")),
    _mutant("fifo-delete-expired-accepted",
            "On a FIFO queue a DeleteMessage through a handle whose deadline has passed is accepted (and deletes), as "
            "on a standard queue, instead of being refused as expired.",
            _method(T._delete, "if self._expired(q, receipt):", "if not q.fifo and self._expired(q, receipt):")),
    # --- delays ---------------------------------------------------------------------------------------------
    _mutant("terminate-redelays",
            "A change to 0 hides the message for the queue's DelaySeconds again, as if it were newly sent, instead of "
            "making it visible at once.",
            _method(T._change, "self._hide(q, msg, now + timeout)", "self._hide(q, msg, now + (timeout or q.delay))")),
    _mutant("zero-delay-ignored",
            "A per-message DelaySeconds of 0 is taken as 'not given', so the queue's delay applies to it.",
            _method(T._send, "delay = q.delay if op.delay_seconds is None else",
                    "delay = q.delay if not op.delay_seconds else")),
    # --- counts ---------------------------------------------------------------------------------------------
    _mutant("lapsed-still-inflight",
            "GetQueueAttributes does not release due deadlines first, so a message whose timeout lapsed (or whose "
            "delay ended) keeps its old count until another operation touches the queue.",
            _method(T._get_attributes, "self._release_due(q)", "pass")),
    _mutant("delayed-counted-visible",
            "ApproximateNumberOfMessages counts delayed messages as well as receivable ones.",
            _method(T._get_attributes, "str(counts[READY])", "str(counts[READY] + counts[DELAYED])")),
    # --- batches --------------------------------------------------------------------------------------------
    _mutant("batch-dup-ids-by-handle",
            "Batch id distinctness is checked on (id, receipt handle) pairs, so repeated ids with different handles "
            "are not refused.",
            _method(T._batch, "len({e.id for e in entries})", "len({(e.id, e.receipt_handle) for e in entries})")),
    _mutant("batch-abort-on-failure",
            "The first failing batch entry stops the batch: later entries are neither applied nor reported.",
            _method(T._batch, "            continue", "            break")),
    # --- long polls -----------------------------------------------------------------------------------------
    _mutant("poll-full-wait",
            "A long poll that finds messages still returns only at the end of its WaitTimeSeconds.",
            _method(T._poll, "return taken", "self.clock.advance_to(end); return taken")),
    _mutant("poll-no-wake",
            "A long poll sleeps its whole wait and looks once more at the end, instead of waking when a message "
            "becomes visible during the wait.",
            _method(T._poll, "self.clock.advance_to(due if due is not None and self.now() < due < end else end)",
                    "self.clock.advance_to(end)")),
    _mutant("fifo-head-of-line",
            "The FIFO scan stops at the first message it cannot take, so a locked (or delayed) group hides every "
            "later group's head from the receive.",
            _method(T._candidates, "if msg.state != READY:\n                break",
                    "if msg.state != READY:\n                return out")),
    # --- FIFO -----------------------------------------------------------------------------------------------
    _mutant("fifo-skip-inflight",
            "The FIFO scan skips a group's hidden messages instead of stopping at them, so the group lock is gone: "
            "later messages of a group are returned while an earlier one is in flight.",
            _method(T._candidates, "if msg.state != READY:\n                break",
                    "if msg.state != READY:\n                continue")),
    _mutant("fifo-requeue-at-tail",
            "On a FIFO queue a message whose visibility timeout lapsed is moved to the back of its group, so the group "
            "does not come back in its original order.",
            _method(T._make_ready, "        return\n",
                    "        if msg.receive_count:\n"
                    "            q.groups[msg.group or ''].remove(msg)\n"
                    "            q.groups[msg.group or ''].append(msg)\n"
                    "        return\n")),
    _mutant("attempt-replay-fresh",
            "The FIFO receive never records its ReceiveRequestAttemptId, so a retry gets fresh messages instead of "
            "the same messages and handles.",
            _method(T._receive, "q.attempts[attempt_id] = Attempt(", "Attempt(")),
    _mutant("dedup-window-sliding",
            "A deduplicated FIFO send restarts the 5-minute window, so a steady stream of retries keeps a "
            "deduplication id blocked forever.",
            _method(T._send, "return SendOk(seen[1])", "q.dedup[dedup] = (now, seen[1]); return SendOk(seen[1])")),
    # --- redrive --------------------------------------------------------------------------------------------
    _mutant("redrive-one-early",
            "The redrive test is off by one: a message moves to the dead-letter queue on its maxReceiveCount-th "
            "receive instead of the one after.",
            _method(T._redrive, "msg.receive_count + 1 <= max_receive_count",
                    "msg.receive_count + 1 < max_receive_count")),
    _mutant("dlq-count-reset",
            "A message moved to the dead-letter queue starts there with a receive count of 0 (and no first receive).",
            _method(T._redrive, "receive_count=msg.receive_count, first_receive=msg.first_receive",
                    "receive_count=0, first_receive=None")),
    # --- create-time validation and purge -------------------------------------------------------------------
    Mutant("create-visibility-unchecked",
           "CreateQueue accepts an out-of-range VisibilityTimeout (SetQueueAttributes still refuses it).",
           type("Mutant_create_visibility_unchecked", (_CreateVisibilityUnchecked,), {"__module__": __name__})),
    _mutant("purge-keeps-inflight",
            "PurgeQueue removes only the messages not in flight; received messages survive and come back later.",
            _method(T._purge, "for msg in list(q.messages.values()):",
                    "for msg in [m for m in q.messages.values() if m.state != INFLIGHT]:")),
    _mutant("purge-no-cooldown",
            "The time of a purge is never recorded, so the 60-second interval is never enforced: purges right after "
            "each other are all accepted.",
            _method(T._purge, "q.last_purge = now", "pass")),
]
