"""Targets with a fault only several consumers can show, written here to test the concurrent engine end to end
(the race-prone designs under benchmarks/ measure its power; these only prove the plumbing)."""

from __future__ import annotations

from dataclasses import replace

from sqs_conformance.adapters.base import SharedView, Target
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.model.values import Operation, ReceiveMessage, Response


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
