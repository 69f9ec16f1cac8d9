"""Semantic mutants of the in-house example queue: each a plausible real bug, one override each. The suite's
power is measured by how many it kills, how fast and how short the case it shows (benchmarks/mutants.py).

This is the catalogue for the example queue; issue 6's reference design on a real store is to get its own.
"""

from __future__ import annotations

from examples.inhouse_queue import CEILING, InHouseQueue, _in_range
from sqs_conformance.model.values import ChangeOk, Error, Ok, ReceiveOk


class AdditiveExtend(InHouseQueue):
    """A change adds to the time left instead of setting the deadline."""

    def _change(self, op):
        message = self._addressed(self.queues[op.queue], op.receipt_handle)
        before = message.visible_at if message is not None else None
        answer = super()._change(op)
        if answer == ChangeOk() and before is not None and before > self.clock.now():
            message.visible_at = before + op.visibility_timeout
        return answer


class CeilingFromSend(InHouseQueue):
    """The 12-hour ceiling is counted from when the message was sent, not from the receive."""

    def _send(self, op):
        answer = super()._send(op)
        self._sent_at = getattr(self, "_sent_at", {})
        if hasattr(answer, "message_id"):
            self._sent_at[answer.message_id] = self.clock.now()
        return answer

    def _receive(self, op):
        answer = super()._receive(op)
        for m in getattr(answer, "messages", ()):
            self.queues[op.queue].messages[m.message_id].received_at = self._sent_at[m.message_id]
        return answer


class CeilingResetByChange(InHouseQueue):
    """Each accepted change restarts the 12-hour count."""

    def _change(self, op):
        answer = super()._change(op)
        if answer == ChangeOk():
            self._addressed(self.queues[op.queue], op.receipt_handle).received_at = self.clock.now()
        return answer


class StickyExtension(InHouseQueue):
    """A change's timeout is remembered and used again by the next receive of that message."""

    def _change(self, op):
        answer = super()._change(op)
        if answer == ChangeOk():
            message = self._addressed(self.queues[op.queue], op.receipt_handle)
            message.__dict__["sticky"] = op.visibility_timeout
        return answer

    def _receive(self, op):
        answer = super()._receive(op)
        for m in getattr(answer, "messages", ()):
            message = self.queues[op.queue].messages[m.message_id]
            if "sticky" in message.__dict__:
                message.visible_at = message.received_at + message.__dict__["sticky"]
        return answer


class TerminateIgnored(InHouseQueue):
    """ChangeMessageVisibility(0) is answered but does nothing."""

    def _change(self, op):
        if op.visibility_timeout == 0 and self._addressed(self.queues[op.queue], op.receipt_handle):
            return ChangeOk()
        return super()._change(op)


class VisibleOneSecondLate(InHouseQueue):
    """Off by one at the deadline: a received message comes back a second after its visibility timeout."""

    def _receive(self, op):
        answer = super()._receive(op)
        for m in getattr(answer, "messages", ()):
            self.queues[op.queue].messages[m.message_id].visible_at += 1
        return answer


class OverrideWrittenToQueue(InHouseQueue):
    """A receive's VisibilityTimeout becomes the queue's default for later receives."""

    def _receive(self, op):
        answer = super()._receive(op)
        if isinstance(answer, ReceiveOk) and op.visibility_timeout is not None:
            self.queues[op.queue].visibility_timeout = op.visibility_timeout
        return answer


class StaleHandleRejected(InHouseQueue):
    """Only the latest receive's handle addresses the message."""

    def _addressed(self, queue, handle):
        message = super()._addressed(queue, handle)
        if message is not None and handle != max(message.handles, key=lambda h: int(h.split("-")[1])):
            return None
        return message


class ReceiveCountNotIncremented(InHouseQueue):
    """ApproximateReceiveCount stays at 1."""

    def _receive(self, op):
        answer = super()._receive(op)
        for m in getattr(answer, "messages", ()):
            self.queues[op.queue].messages[m.message_id].receive_count = 0
        return answer


class TimeoutRangeOffByOne(InHouseQueue):
    """A VisibilityTimeout of 43201 on a receive is accepted."""

    def _receive(self, op):
        if op.visibility_timeout == CEILING + 1:
            op = type(op)(op.queue, op.max_messages, CEILING, op.wait_time_seconds, op.attempt_id)
        return super()._receive(op)


class DelayIgnored(InHouseQueue):
    """DelaySeconds is validated and then ignored."""

    def _send(self, op):
        answer = super()._send(op)
        if hasattr(answer, "message_id"):
            self.queues[op.queue].messages[answer.message_id].visible_at = self.clock.now()
        return answer


class FirstReceiveForgotten(InHouseQueue):
    """ApproximateFirstReceiveTimestamp is reset by every receive."""

    def _receive(self, op):
        for message in self.queues[op.queue].messages.values():
            message.first_receive = None
        return super()._receive(op)


class LongPollReturnsAtOnce(InHouseQueue):
    """A long poll on an empty queue returns empty at once instead of waiting for a message."""

    def _receive(self, op):
        if op.wait_time_seconds and _in_range(op.wait_time_seconds, 0, 20):
            op = type(op)(op.queue, op.max_messages, op.visibility_timeout, 0, op.attempt_id)
        return super()._receive(op)


class DeleteThroughStaleHandleIgnored(InHouseQueue):
    """A delete through an older handle answers OK and leaves the message."""

    def _delete(self, op):
        message = self._addressed(self.queues[op.queue], op.receipt_handle)
        latest = message is not None and op.receipt_handle == max(message.handles,
                                                                  key=lambda h: int(h.split("-")[1]))
        if message is not None and not latest:
            return Ok()
        return super()._delete(op)


class DeletedMessageChangeAccepted(InHouseQueue):
    """A change through the handle of a deleted message is accepted."""

    def _delete(self, op):
        self._deleted = getattr(self, "_deleted", set()) | {op.receipt_handle}
        return super()._delete(op)

    def _change(self, op):
        answer = super()._change(op)
        if isinstance(answer, Error) and op.receipt_handle in getattr(self, "_deleted", set()):
            return ChangeOk()
        return answer


MUTANTS: list[type[InHouseQueue]] = [
    AdditiveExtend, CeilingFromSend, CeilingResetByChange, StickyExtension, TerminateIgnored,
    VisibleOneSecondLate, OverrideWrittenToQueue, StaleHandleRejected, ReceiveCountNotIncremented,
    TimeoutRangeOffByOne, DelayIgnored, FirstReceiveForgotten, LongPollReturnsAtOnce,
    DeletedMessageChangeAccepted,
]

# Mutants that behave as the documents permit, so no suite can kill them: not counted in the score.
EQUIVALENT: dict[type[InHouseQueue], str] = {
    DeleteThroughStaleHandleIgnored: "DEL-STALE (hedged, boto3#2898): a delete through a stale handle succeeds "
                                     "but the message might not be deleted",
}
