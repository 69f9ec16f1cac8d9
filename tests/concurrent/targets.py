"""Targets with a fault only several consumers can show, written here to test the concurrent engine end to end
(the race-prone designs under benchmarks/ measure its power; these only prove the plumbing)."""

from __future__ import annotations

import time
from dataclasses import replace

from sqs_conformance.adapters.base import SharedView, Target
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.model.values import DeleteMessage, Operation, ReceiveMessage, Response


class ForgetfulConsumers(ModelTarget):
    """Every connection after the first hides what it receives for 0 s, not the queue's VisibilityTimeout (a client
    library that caches queue attributes per connection, the later ones filled with a default): the first
    consumer alone never sees it; with two, the second hands out what the first holds."""

    def shared_connection(self) -> Target:
        return _Forgetful(self)


class _Forgetful(SharedView):
    def execute(self, op: Operation) -> Response:
        if isinstance(op, ReceiveMessage) and op.visibility_timeout is None:
            op = replace(op, visibility_timeout=0)
        return super().execute(op)


class CheckThenDeleteAcrossTheClock(ModelTarget):
    """A delete checks that its receipt is in flight, then removes the message in a second step that trusts the
    check and deletes through whichever receipt the message has by then (a store read, then written, 50 ms
    apart). A single client never sees it; among several, when the clock passes the deadline between the steps
    and another consumer receives the message meanwhile, the expired handle deletes what that consumer holds."""

    BETWEEN_THE_STEPS = 0.05  # real seconds

    def execute(self, op: Operation) -> Response:
        if not isinstance(op, DeleteMessage):
            return super().execute(op)
        with self._lock:
            checked_at = self.clock.now()
            in_flight = [r for r in self.model.receipts(op.queue, checked_at) if r.handle == op.receipt_handle]
        if not in_flight:
            return super().execute(op)
        time.sleep(self.BETWEEN_THE_STEPS)
        with self._lock:
            now = self.clock.now()
            current = [r.handle for r in self.model.receipts(op.queue, now) if r.message_id == in_flight[0].message_id]
        return super().execute(replace(op, receipt_handle=current[0]) if current else op)

    def shared_connection(self) -> Target:
        return SharedView(self)
