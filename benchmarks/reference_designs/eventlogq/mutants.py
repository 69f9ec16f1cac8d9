"""Realistic bugs of the event-log design, one small change each, to measure what a conformance suite catches.

Each mutant is a subclass of the correct target (or of its projection) that overrides one method with a copy
differing in one line or expression. Every bug changes behaviour the documents pin down; none was tuned to the
suite.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.reference_designs.eventlogq import validation as v
from benchmarks.reference_designs.eventlogq.events import Deleted, Purged, Received, Redriven, VisibilityChanged
from benchmarks.reference_designs.eventlogq.projection import (
    DEFAULT_ATTRIBUTES, MessageView, Projection, Receipt, State,
)
from benchmarks.reference_designs.eventlogq.target import EventLogQueueTarget
from sqs_conformance.model import errors
from sqs_conformance.model.values import (
    BatchOk, EntryFailure, Error, ReceivedMessage, ReceiveMessage, Response, SendMessage,
)


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    target: type


def _with_projection(projection: type[Projection]) -> type[EventLogQueueTarget]:
    return type(f"Target{projection.__name__}", (EventLogQueueTarget,), {"projection_class": projection})


# --- bugs in the fold and in what is derived from it ----------------------------------------------------------

class ReversedDeadlineFold(Projection):
    def deadline(self, m: MessageView) -> float:
        deadline = 0.0
        for e in reversed(m.history):  # bug: folds newest first, so the oldest deadline is the one left standing
            if isinstance(e, (Received, VisibilityChanged)):
                deadline = e.visible_until
            elif isinstance(e, Redriven):
                deadline = e.at
        return deadline


class ChangesOnlyExtend(Projection):
    def deadline(self, m: MessageView) -> float:
        deadline = 0.0
        for e in m.history:
            if isinstance(e, Received):
                deadline = e.visible_until
            elif isinstance(e, VisibilityChanged):
                deadline = max(deadline, e.visible_until)  # bug: "deadlines only move forward"
            elif isinstance(e, Redriven):
                deadline = e.at
        return deadline


class PurgeSparesInFlight(Projection):
    def on_purged(self, e: Purged) -> None:
        queue = self.queues[e.queue]
        queue.purges.append(e.at)
        for message_id in queue.members:
            if self.deadline(self.messages[message_id]) <= e.at:  # bug: only messages not in flight are purged
                self.messages[message_id].history.append(e)


class GoneIgnoresPurged(Projection):
    def is_gone(self, m: MessageView) -> bool:
        return any(isinstance(e, Deleted) for e in m.history)  # bug: the Purged kind was left out


class PurgeWindowFromFirst(Projection):
    def last_purge_at(self, queue: str) -> float | None:
        purges = self.queues[queue].purges
        return purges[0] if purges else None  # bug: the first purge, not the last


class CountsChangesAsReceives(Projection):
    def receive_count(self, m: MessageView) -> int:
        return len([e for e in m.history if isinstance(e, (Received, VisibilityChanged))])  # bug: counts changes


class FirstReceiveIsLatest(Projection):
    def first_receive_at(self, m: MessageView) -> float:
        return self.receives(m)[-1].at  # bug: the latest receive


class FirstReceiveIsSend(Projection):
    def first_receive_at(self, m: MessageView) -> float:
        return m.sent.at  # bug: the Sent event's time


class AttributesSetReplaces(Projection):
    def on_attributes_set(self, e) -> None:
        queue = self.queues[e.queue]
        queue.attributes = {**DEFAULT_ATTRIBUTES, **dict(e.attributes)}  # bug: unnamed attributes revert to defaults


class RedrivenMessageLost(Projection):
    def on_redriven(self, e: Redriven) -> None:
        self.messages[e.message_id].history.append(e)
        self.queues[e.queue].members.remove(e.message_id)  # bug: never filed under the dead-letter queue


class LongPollIgnoresDelays(Projection):
    def available_at(self, m: MessageView) -> float | None:
        if self.is_gone(m):
            return None
        return self.deadline(m)  # bug: forgets that a delay's end also makes a message receivable


# --- bugs in the commands -------------------------------------------------------------------------------------

class AdditiveExtend(EventLogQueueTarget):
    def _new_deadline(self, view: Projection, m: MessageView, now: float, timeout: int) -> float:
        return view.deadline(m) + timeout  # bug: extends from the previous deadline instead of from the call


class TerminateMeansDefault(EventLogQueueTarget):
    def _new_deadline(self, view: Projection, m: MessageView, now: float, timeout: int) -> float:
        return now + (timeout or view.queues[view.queue_of(m)].attributes["VisibilityTimeout"])  # bug: 0 is falsy


class CeilingFromSent(EventLogQueueTarget):
    def _ceiling_start(self, view: Projection, m: MessageView) -> float:
        return m.sent.at  # bug: the 12 hours count from the Sent event, so time spent waiting counts


class CeilingIgnoresElapsed(EventLogQueueTarget):
    def _ceiling_start(self, view: Projection, m: MessageView) -> float:
        return self._now()  # bug: measured from the call, so only the requested value is checked


class ChangeResetsCeiling(EventLogQueueTarget):
    def _ceiling_start(self, view: Projection, m: MessageView) -> float:
        # bug: counts from the last deadline-setting event, so every change restarts the 12 hours
        return [e for e in m.history if isinstance(e, (Received, VisibilityChanged))][-1].at


class RedriveOneLate(EventLogQueueTarget):
    def _should_redrive(self, receive_count: int, max_receive_count: int) -> bool:
        return receive_count > max_receive_count  # bug: one receive too many before the move


class RedriveOneEarly(EventLogQueueTarget):
    def _should_redrive(self, receive_count: int, max_receive_count: int) -> bool:
        return receive_count + 1 >= max_receive_count  # bug: counts the receive being attempted


class StaleChangeRefused(EventLogQueueTarget):
    def _reaches(self, view: Projection, m: MessageView, receipt: Receipt) -> bool:
        fresh = view.receives(m)[-1].handle == receipt.handle
        return not view.is_gone(m) and view.queue_of(m) == receipt.queue and fresh  # bug: only the latest handle


class ChangeOnDeletedAccepted(EventLogQueueTarget):
    def _reaches(self, view: Projection, m: MessageView, receipt: Receipt) -> bool:
        return view.queue_of(m) == receipt.queue  # bug: forgets that a Deleted event ends the message


class DeleteOnlyInFlight(EventLogQueueTarget):
    def _deletes(self, view: Projection, m: MessageView, handle: str, now: float) -> bool:
        return not view.is_gone(m) and now < view.deadline(m)  # bug: a delete after the deadline does nothing


class ReceiveOverrideIgnored(EventLogQueueTarget):
    def _receive_timeout(self, op: ReceiveMessage, attributes: dict[str, object]) -> int | None:
        if op.visibility_timeout is None:
            return attributes["VisibilityTimeout"]
        valid = v.in_range(op.visibility_timeout, 0, v.VISIBILITY_MAX)
        return None if valid is None else attributes["VisibilityTimeout"]  # bug: validated, then the queue's used


class ZeroOverrideIsDefault(EventLogQueueTarget):
    def _receive_timeout(self, op: ReceiveMessage, attributes: dict[str, object]) -> int | None:
        if not op.visibility_timeout:  # bug: 0 is falsy, so VisibilityTimeout=0 falls back to the queue's
            return attributes["VisibilityTimeout"]
        return v.in_range(op.visibility_timeout, 0, v.VISIBILITY_MAX)


class ReceiveTimeoutMaxExclusive(EventLogQueueTarget):
    def _receive_timeout(self, op: ReceiveMessage, attributes: dict[str, object]) -> int | None:
        if op.visibility_timeout is None:
            return attributes["VisibilityTimeout"]
        return v.in_range(op.visibility_timeout, 0, v.VISIBILITY_MAX - 1)  # bug: 43200 itself refused


class MessageDelayIgnored(EventLogQueueTarget):
    def _send_delay(self, op: SendMessage, attributes: dict[str, object]) -> int | None:
        if op.delay_seconds is None:
            return attributes["DelaySeconds"]
        valid = v.in_range(op.delay_seconds, 0, v.DELAY_MAX)
        return None if valid is None else attributes["DelaySeconds"]  # bug: validated, then the queue's used


class QueueWaitIgnored(EventLogQueueTarget):
    def _wait(self, op: ReceiveMessage, attributes: dict[str, object]) -> int | None:
        if op.wait_time_seconds is None:
            return 0  # bug: the queue's ReceiveMessageWaitTimeSeconds is never read
        return v.in_range(op.wait_time_seconds, 0, v.WAIT_MAX)


class LongPollSleepsFullWait(EventLogQueueTarget):
    def _poll(self, queue: str, maximum: int, timeout: int, wait: int) -> tuple[ReceivedMessage, ...]:
        end = self._now() + wait
        while True:
            taken = self._take(queue, maximum, timeout)
            if taken or wait == 0:
                return taken
            upcoming = self._next_available(queue)
            if upcoming is None or upcoming > end:
                self.clock.advance_to(end)
                return ()
            self.clock.advance_to(end)  # bug: sleeps out the whole wait instead of waking when a message is due


class DelayedCountedInFlight(EventLogQueueTarget):
    def _counted_state(self, view: Projection, m: MessageView, now: float) -> State:
        state = view.state(m, now)
        return State.IN_FLIGHT if state is State.DELAYED else state  # bug: delayed reported as not visible


class HandlePerMessage(EventLogQueueTarget):
    def _new_handle(self, m: MessageView) -> str:
        return f"elq-h-{m.sent.message_id}"  # bug: one handle per message, reused by every receive


class BatchLimitOffByOne(EventLogQueueTarget):
    def _check_batch(self, entry_ids: list[str]) -> Error | None:
        if len(entry_ids) >= v.BATCH_MAX:  # bug: `>=` where `>` was meant, so 10 entries are refused
            return errors.too_many_entries(len(entry_ids)).instantiate()
        return v.check_batch(entry_ids)


class BatchStopsAtFirstFailure(EventLogQueueTarget):
    def _batch(self, entry_ids, actions) -> Response:
        refused = self._check_batch(entry_ids)
        if refused is not None:
            return refused
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry_id, action in zip(entry_ids, actions, strict=True):
            error = action()
            if error is None:
                successful.append(entry_id)
            else:
                failed.append(EntryFailure(entry_id, error.code, error.message, True))
                break  # bug: the entries after a failed one are never performed nor reported
        return BatchOk(tuple(successful), tuple(failed))


class _TakeCopy(EventLogQueueTarget):
    """The correct `_take`, with the two lines the mutants below change pulled out."""

    def _full(self, chosen: list[str], maximum: int) -> bool:
        return len(chosen) == maximum

    def _deadline_from(self, now: float, timeout: int) -> float:
        return now + timeout

    def _take(self, queue: str, maximum: int, timeout: int) -> tuple[ReceivedMessage, ...]:
        view, now = self._view(), self._now()
        policy = view.queues[queue].attributes["RedrivePolicy"]
        chosen: list[str] = []
        for m in view.members(queue):
            if self._full(chosen, maximum):
                break
            if view.state(m, now) is not State.VISIBLE:
                continue
            message_id = m.sent.message_id
            if policy is not None and self._should_redrive(view.receive_count(m), policy[1]):
                self._append(Redriven(queue, message_id, policy[0], now))
                continue
            handle = self._new_handle(m)
            self._append(Received(queue, message_id, handle, now, self._deadline_from(now, timeout)))
            chosen.append(message_id)
        view = self._view()
        return tuple(self._as_received(view, view.messages[i]) for i in chosen)


class OneMessageTooMany(_TakeCopy):
    def _full(self, chosen: list[str], maximum: int) -> bool:
        return len(chosen) > maximum  # bug: the loop stops one message after MaxNumberOfMessages


class DeadlineFromWholeSecond(_TakeCopy):
    def _deadline_from(self, now: float, timeout: int) -> float:
        return int(now) + timeout  # bug: the receive time truncated to whole seconds, so the timeout ends early


class SnapshotSurvivesReset(EventLogQueueTarget):
    def reset(self) -> None:
        self._log = []  # bug: the projection snapshot is kept, so the next case still sees the old queues


MUTANTS: list[Mutant] = [
    Mutant("deadline_fold_reversed", "The deadline fold walks the history newest-first, so a message's first "
           "deadline wins over later changes and receives.", _with_projection(ReversedDeadlineFold)),
    Mutant("changes_only_extend", "The fold keeps the later of the old deadline and a VisibilityChanged one, so a "
           "change can never shorten or terminate a visibility timeout.", _with_projection(ChangesOnlyExtend)),
    Mutant("purge_spares_in_flight", "The Purged event is filed only under messages not in flight, so received "
           "messages survive a purge.", _with_projection(PurgeSparesInFlight)),
    Mutant("gone_ignores_purged", "The is-gone projection looks for Deleted events only, so a purge removes "
           "nothing.", _with_projection(GoneIgnoresPurged)),
    Mutant("purge_window_from_first", "The 60-second purge window is measured from the queue's first purge, not "
           "its last.", _with_projection(PurgeWindowFromFirst)),
    Mutant("counts_changes_as_receives", "The receive count counts VisibilityChanged events as well as Received "
           "ones.", _with_projection(CountsChangesAsReceives)),
    Mutant("first_receive_is_latest", "ApproximateFirstReceiveTimestamp is taken from the latest Received event.",
           _with_projection(FirstReceiveIsLatest)),
    Mutant("first_receive_is_send", "ApproximateFirstReceiveTimestamp is taken from the Sent event.",
           _with_projection(FirstReceiveIsSend)),
    Mutant("attributes_set_replaces", "The AttributesSet fold replaces the queue's attributes, so attributes the "
           "call did not name revert to their defaults.", _with_projection(AttributesSetReplaces)),
    Mutant("redriven_message_lost", "The Redriven fold takes the message out of the source queue but never files "
           "it under the dead-letter queue.", _with_projection(RedrivenMessageLost)),
    Mutant("long_poll_ignores_delays", "The long poll's next-availability projection ignores delays, so a long "
           "poll does not wake for a delayed message coming due.", _with_projection(LongPollIgnoresDelays)),
    Mutant("additive_extend", "ChangeMessageVisibility sets the deadline to the previous deadline plus the value "
           "instead of the call time plus the value.", AdditiveExtend),
    Mutant("terminate_means_default", "ChangeMessageVisibility treats VisibilityTimeout=0 as falsy and applies "
           "the queue's timeout instead of terminating.", TerminateMeansDefault),
    Mutant("ceiling_from_sent", "The 12-hour ceiling is measured from the Sent event instead of the receive.",
           CeilingFromSent),
    Mutant("ceiling_ignores_elapsed", "The 12-hour ceiling is measured from the change call, so extensions are "
           "never refused.", CeilingIgnoresElapsed),
    Mutant("change_resets_ceiling", "The 12-hour ceiling is measured from the latest receive or change, so each "
           "extension restarts it.", ChangeResetsCeiling),
    Mutant("redrive_one_late", "A message moves to the dead-letter queue one receive after maxReceiveCount is "
           "exceeded.", RedriveOneLate),
    Mutant("redrive_one_early", "A message moves to the dead-letter queue one receive before maxReceiveCount is "
           "reached.", RedriveOneEarly),
    Mutant("stale_change_refused", "ChangeMessageVisibility through the handle of an earlier receipt is refused "
           "as not available.", StaleChangeRefused),
    Mutant("change_on_deleted_accepted", "ChangeMessageVisibility on a deleted message succeeds because the check "
           "forgets Deleted events.", ChangeOnDeletedAccepted),
    Mutant("delete_only_in_flight", "DeleteMessage through a handle whose deadline has passed succeeds but "
           "appends no Deleted event.", DeleteOnlyInFlight),
    Mutant("receive_override_ignored", "ReceiveMessage validates its VisibilityTimeout override, then hides the "
           "messages for the queue's timeout.", ReceiveOverrideIgnored),
    Mutant("zero_override_is_default", "ReceiveMessage with VisibilityTimeout=0 uses the queue's timeout because "
           "0 is falsy.", ZeroOverrideIsDefault),
    Mutant("receive_timeout_max_exclusive", "ReceiveMessage refuses VisibilityTimeout=43200, the documented "
           "maximum.", ReceiveTimeoutMaxExclusive),
    Mutant("message_delay_ignored", "SendMessage validates the message's DelaySeconds, then applies the queue's "
           "delay.", MessageDelayIgnored),
    Mutant("queue_wait_ignored", "ReceiveMessage without WaitTimeSeconds short-polls even when the queue's "
           "ReceiveMessageWaitTimeSeconds is set.", QueueWaitIgnored),
    Mutant("long_poll_sleeps_full_wait", "A long poll that finds nothing sleeps out its whole wait instead of "
           "returning when the first message becomes available.", LongPollSleepsFullWait),
    Mutant("delayed_counted_in_flight", "GetQueueAttributes reports delayed messages under "
           "ApproximateNumberOfMessagesNotVisible.", DelayedCountedInFlight),
    Mutant("handle_per_message", "Every receive of a message returns the same receipt handle.", HandlePerMessage),
    Mutant("batch_limit_off_by_one", "A batch of exactly 10 entries is refused as too many.", BatchLimitOffByOne),
    Mutant("batch_stops_at_first_failure", "A batch stops at its first failed entry; the rest are neither "
           "performed nor reported.", BatchStopsAtFirstFailure),
    Mutant("one_message_too_many", "ReceiveMessage returns one message more than MaxNumberOfMessages.",
           OneMessageTooMany),
    Mutant("deadline_from_whole_second", "A receive's deadline counts from the receive time truncated to whole "
           "seconds, so timeouts end early at fractional times.", DeadlineFromWholeSecond),
    Mutant("snapshot_survives_reset", "reset() empties the log but keeps the projection snapshot, so queues and "
           "messages of one case live on into the next.", SnapshotSurvivesReset),
]
