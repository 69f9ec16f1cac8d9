"""The event-log queue as a conformance target: each request reads the projection, decides, appends events.

Requests never change state in place: a request validates against the folded log, appends the events that
record what it did, and builds its answer from the projection of the log that now includes them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

from sqs_conformance.adapters.base import Target, TargetError, Unsupported, VirtualClock
from benchmarks.reference_designs.eventlogq import validation as v
from benchmarks.reference_designs.eventlogq.events import (
    AttributesSet,
    Deleted,
    Event,
    Purged,
    QueueCreated,
    Received,
    Redriven,
    Sent,
    VisibilityChanged,
)
from benchmarks.reference_designs.eventlogq.projection import MessageView, Projection, Receipt, State
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

DIALECT = "sqs"
PURGE_INTERVAL = 60.0  # "Only one PurgeQueue operation is allowed every 60 seconds"


def _naming(error: Error, handle: str) -> Error:
    """The spelled-out error with the handle the request sent in place of the placeholder, as SQS words it."""
    return Error(error.code, error.message.replace("<handle>", str(handle)), error.status)


class EventLogQueueTarget(Target):
    name = "eventlogq"
    profiles = frozenset({"sqs-standard"})
    projection_class: type[Projection] = Projection

    def __init__(self, profile_name: str = "sqs-standard") -> None:
        if profile_name not in self.profiles:
            raise TargetError(f"eventlogq implements only {sorted(self.profiles)}, not {profile_name!r}")
        self.clock = VirtualClock()
        # Ids and handles come from counters that outlive reset, so no id of one case is reused in the next.
        self._ids = itertools.count(1)
        self._log: list[Event] = []
        self._projection = self.projection_class()

    def version(self) -> str:
        return "1"

    def reset(self) -> None:
        self._log = []
        self._projection = self.projection_class()

    # --- the log -----------------------------------------------------------------------------------------

    def _append(self, event: Event) -> None:
        self._log.append(event)

    def _view(self) -> Projection:
        self._projection.catch_up(self._log)
        return self._projection

    def _now(self) -> float:
        return self.clock.now()

    # --- dispatch ----------------------------------------------------------------------------------------

    def execute(self, op: Operation) -> Response:
        if isinstance(op, PeekMessage):
            raise Unsupported("SQS has no peek: a message is only read by receiving it")
        handlers: dict[type, Callable[..., Response]] = {
            CreateQueue: self._create_queue,
            SetQueueAttributes: self._set_attributes,
            GetQueueAttributes: self._get_attributes,
            SendMessage: self._send,
            ReceiveMessage: self._receive,
            ChangeMessageVisibility: self._change,
            ChangeMessageVisibilityBatch: self._change_batch,
            DeleteMessage: self._delete,
            DeleteMessageBatch: self._delete_batch,
            PurgeQueue: self._purge,
        }
        handler = handlers.get(type(op))
        if handler is None:
            raise Unsupported(f"eventlogq has no {type(op).__name__}")
        if not isinstance(op, CreateQueue) and op.queue not in self._view().queues:
            # model/errors.py has no spelling for this; SQS's query code is AWS.SimpleQueueService.NonExistentQueue.
            return Error("NonExistentQueue", "The specified queue does not exist for this wsdl version.", 400)
        return handler(op)

    # --- queues ------------------------------------------------------------------------------------------

    def _create_queue(self, op: CreateQueue) -> Response:
        parsed = v.parse_attributes(op.attributes)
        if isinstance(parsed, Error):
            return parsed
        if (refused := self._check_redrive_target(parsed)) is not None:
            return refused
        existing = self._view().queues.get(op.queue)
        if existing is not None:
            # Creating an existing queue is idempotent when the attributes named agree with the queue's; otherwise
            # SQS refuses (its spelling: QueueAlreadyExists, which model/errors.py does not list).
            if all(existing.attributes.get(k) == value for k, value in parsed.items()):
                return Ok()
            return Error("QueueAlreadyExists", "A queue already exists with the same name and a different value "
                         "for attribute(s)", 400)
        self._append(QueueCreated(op.queue, tuple(parsed.items()), self._now()))
        return Ok()

    def _check_redrive_target(self, parsed: dict[str, object]) -> Error | None:
        # SQS requires the dead-letter queue to exist when the policy is set; so does this queue.
        policy = parsed.get("RedrivePolicy")
        if policy is not None and policy[0] not in self._view().queues:
            return errors.attribute_out_of_range("RedrivePolicy", policy).instantiate()
        return None

    def _set_attributes(self, op: SetQueueAttributes) -> Response:
        parsed = v.parse_attributes(op.attributes)
        if isinstance(parsed, Error):
            return parsed
        if (refused := self._check_redrive_target(parsed)) is not None:
            return refused
        # Changed attributes apply to later sends and receives only: deadlines already set live in the Received
        # events and do not move (EVIDENCE: "treat as not moving"). Propagation is immediate here.
        self._append(AttributesSet(op.queue, tuple(parsed.items()), self._now()))
        return Ok()

    def _get_attributes(self, op: GetQueueAttributes) -> Response:
        view, now = self._view(), self._now()
        counts = {state: 0 for state in State}
        for m in view.members(op.queue):
            counts[self._counted_state(view, m, now)] += 1
        attributes = view.queues[op.queue].attributes
        answer = {
            "ApproximateNumberOfMessages": str(counts[State.VISIBLE]),
            "ApproximateNumberOfMessagesNotVisible": str(counts[State.IN_FLIGHT]),
            "ApproximateNumberOfMessagesDelayed": str(counts[State.DELAYED]),
            "VisibilityTimeout": str(attributes["VisibilityTimeout"]),
            "DelaySeconds": str(attributes["DelaySeconds"]),
            "ReceiveMessageWaitTimeSeconds": str(attributes["ReceiveMessageWaitTimeSeconds"]),
        }
        policy = attributes["RedrivePolicy"]
        if policy is not None:
            answer["RedrivePolicy"] = json.dumps({"deadLetterTargetQueue": policy[0], "maxReceiveCount": policy[1]})
        return AttributesOk(answer)

    def _counted_state(self, view: Projection, m: MessageView, now: float) -> State:
        return view.state(m, now)

    def _purge(self, op: PurgeQueue) -> Response:
        now = self._now()
        last = self._view().last_purge_at(op.queue)
        if last is not None and now - last < PURGE_INTERVAL:
            return errors.purge_in_progress().instantiate()
        # The purge takes effect at once on every message sent before it (the documents give no gradual purge).
        self._append(Purged(op.queue, now))
        return Ok()

    # --- send and receive --------------------------------------------------------------------------------

    def _send(self, op: SendMessage) -> Response:
        delay = self._send_delay(op, self._view().queues[op.queue].attributes)
        if delay is None:
            return errors.out_of_range("DelaySeconds", op.delay_seconds, DIALECT).instantiate()
        # group_id and dedup_id mean nothing to a standard queue; they are ignored.
        message_id = f"elq-m{next(self._ids)}"
        now = self._now()
        self._append(Sent(op.queue, message_id, op.body, now, now + delay))
        return SendOk(message_id)

    def _send_delay(self, op: SendMessage, attributes: dict[str, object]) -> int | None:
        """The message's own DelaySeconds, or the queue's when it gives none (None: out of range)."""
        if op.delay_seconds is None:
            return attributes["DelaySeconds"]
        return v.in_range(op.delay_seconds, 0, v.DELAY_MAX)

    def _receive(self, op: ReceiveMessage) -> Response:
        attributes = self._view().queues[op.queue].attributes
        # Parameter checks in this order: MaxNumberOfMessages, WaitTimeSeconds, then VisibilityTimeout.
        maximum = 1 if op.max_messages is None else v.in_range(op.max_messages, 1, v.BATCH_MAX)
        if maximum is None:
            return errors.max_messages_out_of_range(op.max_messages).instantiate()
        wait = self._wait(op, attributes)
        if wait is None:
            return errors.wait_out_of_range(op.wait_time_seconds).instantiate()
        timeout = self._receive_timeout(op, attributes)
        if timeout is None:
            return errors.out_of_range("VisibilityTimeout", op.visibility_timeout, DIALECT).instantiate()
        return ReceiveOk(self._poll(op.queue, maximum, timeout, wait))

    def _wait(self, op: ReceiveMessage, attributes: dict[str, object]) -> int | None:
        """The request's WaitTimeSeconds, or the queue's ReceiveMessageWaitTimeSeconds (None: out of range)."""
        if op.wait_time_seconds is None:
            return attributes["ReceiveMessageWaitTimeSeconds"]
        return v.in_range(op.wait_time_seconds, 0, v.WAIT_MAX)

    def _poll(self, queue: str, maximum: int, timeout: int, wait: int) -> tuple[ReceivedMessage, ...]:
        end = self._now() + wait
        while True:
            taken = self._take(queue, maximum, timeout)
            if taken or wait == 0:
                return taken
            # Long polling: sleep on the virtual clock until the first moment a message becomes receivable, and
            # return as soon as one is (EVIDENCE, short polling row); otherwise until the wait ends.
            upcoming = self._next_available(queue)
            if upcoming is None or upcoming > end:
                self.clock.advance_to(end)
                return ()
            self.clock.advance_to(upcoming)

    def _receive_timeout(self, op: ReceiveMessage, attributes: dict[str, object]) -> int | None:
        """The request's VisibilityTimeout override, or the queue's (the override is for these messages only)."""
        if op.visibility_timeout is None:
            return attributes["VisibilityTimeout"]
        return v.in_range(op.visibility_timeout, 0, v.VISIBILITY_MAX)

    def _take(self, queue: str, maximum: int, timeout: int) -> tuple[ReceivedMessage, ...]:
        view, now = self._view(), self._now()
        policy = view.queues[queue].attributes["RedrivePolicy"]
        chosen: list[str] = []
        for m in view.members(queue):  # arrival order; a standard queue promises none, this one keeps it
            if len(chosen) == maximum:
                break
            if view.state(m, now) is not State.VISIBLE:
                continue
            message_id = m.sent.message_id
            if policy is not None and self._should_redrive(view.receive_count(m), policy[1]):
                # The receive that would exceed maxReceiveCount moves the message instead of returning it. It keeps
                # its id and its receive history: the documents say nothing of resetting either.
                self._append(Redriven(queue, message_id, policy[0], now))
                continue
            self._append(Received(queue, message_id, self._new_handle(m), now, now + timeout))
            chosen.append(message_id)
        view = self._view()
        return tuple(self._as_received(view, view.messages[i]) for i in chosen)

    def _should_redrive(self, receive_count: int, max_receive_count: int) -> bool:
        return receive_count >= max_receive_count

    def _new_handle(self, m: MessageView) -> str:
        # A new handle for every receive (EVIDENCE, receipt handles), opaque, unique across cases.
        return f"elq-h{next(self._ids)}-{m.sent.message_id}"

    def _as_received(self, view: Projection, m: MessageView) -> ReceivedMessage:
        latest = view.receives(m)[-1]
        first_ms = round(view.first_receive_at(m) * 1000)
        return ReceivedMessage(m.sent.message_id, m.sent.body, latest.handle, view.receive_count(m), first_ms)

    def _next_available(self, queue: str) -> float | None:
        view, now = self._view(), self._now()
        upcoming = [t for m in view.members(queue) if (t := view.available_at(m)) is not None and t > now]
        return min(upcoming, default=None)

    # --- visibility changes ------------------------------------------------------------------------------

    def _change(self, op: ChangeMessageVisibility) -> Response:
        refused = self._change_one(op.queue, op.receipt_handle, op.visibility_timeout)
        return refused if refused is not None else ChangeOk()

    def _change_batch(self, op: ChangeMessageVisibilityBatch) -> Response:
        return self._batch(
            [e.id for e in op.entries],
            [lambda e=e: self._change_one(op.queue, e.receipt_handle, e.visibility_timeout) for e in op.entries],
        )

    def _change_one(self, queue: str, handle: str, raw_timeout: object) -> Error | None:
        # The value is checked before the handle: a range error needs no lookup. The documents give no order.
        timeout = v.in_range(raw_timeout, 0, v.VISIBILITY_MAX)
        if timeout is None:
            return errors.out_of_range("VisibilityTimeout", raw_timeout, DIALECT).instantiate()
        view, now = self._view(), self._now()
        receipt = view.receipts.get(handle) if isinstance(handle, str) else None
        if receipt is None or receipt.queue != queue:
            return errors.malformed_handle(str(handle), with_text=False, dialect=DIALECT)[0].instantiate()
        m = view.messages[receipt.message_id]
        if not self._reaches(view, m, receipt):
            return _naming(errors.not_available_for_change().instantiate(), handle)
        # The handle of an earlier receipt still reaches the message (EVIDENCE: a stale handle's change takes
        # effect), as does an expired one (EVIDENCE: HTTP 200; this queue hides the message again, as a 2008-era
        # lock would). The change acts on the message's current receipt, so the 12-hour ceiling counts from the
        # latest receive (seed 002: "12 hours from the time that Amazon SQS receives the ReceiveMessage request";
        # "Extending the visibility timeout does not reset the 12-hour maximum").
        if now + timeout > self._ceiling_start(view, m) + v.VISIBILITY_MAX:
            return errors.beyond_ceiling(raw_timeout).instantiate()
        # Non-additive: the new deadline counts from the call (seeds 000, 002).
        deadline = self._new_deadline(view, m, now, timeout)
        self._append(VisibilityChanged(queue, receipt.message_id, handle, now, deadline))
        return None

    def _reaches(self, view: Projection, m: MessageView, receipt: Receipt) -> bool:
        """Whether a change through this receipt's handle finds the message: while it is still in that queue."""
        return not view.is_gone(m) and view.queue_of(m) == receipt.queue

    def _ceiling_start(self, view: Projection, m: MessageView) -> float:
        return view.last_receive_at(m)

    def _new_deadline(self, view: Projection, m: MessageView, now: float, timeout: int) -> float:
        return now + timeout

    # --- deletes -----------------------------------------------------------------------------------------

    def _delete(self, op: DeleteMessage) -> Response:
        refused = self._delete_one(op.queue, op.receipt_handle)
        return refused if refused is not None else Ok()

    def _delete_batch(self, op: DeleteMessageBatch) -> Response:
        return self._batch(
            [e.id for e in op.entries],
            [lambda e=e: self._delete_one(op.queue, e.receipt_handle) for e in op.entries],
        )

    def _delete_one(self, queue: str, handle: str) -> Error | None:
        view, now = self._view(), self._now()
        receipt = view.receipts.get(handle) if isinstance(handle, str) else None
        if receipt is None or receipt.queue != queue:
            return errors.malformed_handle(str(handle), with_text=True, dialect=DIALECT)[0].instantiate()
        m = view.messages[receipt.message_id]
        # Deleting twice succeeds (EVIDENCE); so does a delete through an expired or stale handle, and it deletes
        # (EVIDENCE: the expired-handle delete deletes; the stale one may or may not, this queue chooses to).
        # Handles never expire here: the documents give no lifetime, and the one refusal on record (a handle about
        # 55,000 s old, an ISSUE row) gives no rule to place one by; an earlier 12-hour lifetime was a guess.
        # A message redriven away from this queue is no longer here to delete.
        if self._deletes(view, m, receipt.handle, now) and view.queue_of(m) == queue:
            self._append(Deleted(queue, receipt.message_id, handle, now))
        return None

    def _deletes(self, view: Projection, m: MessageView, handle: str, now: float) -> bool:
        """Whether a delete through this handle removes the message: whenever it is still there."""
        return not view.is_gone(m)

    # --- batches -----------------------------------------------------------------------------------------

    def _check_batch(self, entry_ids: list[str]) -> Error | None:
        return v.check_batch(entry_ids)

    def _batch(self, entry_ids: list[str], actions: list[Callable[[], Error | None]]) -> Response:
        refused = self._check_batch(entry_ids)
        if refused is not None:
            return refused
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry_id, action in zip(entry_ids, actions, strict=True):
            error = action()  # each entry is its own request, its events appended before the next is judged
            if error is None:
                successful.append(entry_id)
            else:
                failed.append(EntryFailure(entry_id, error.code, error.message, True))
        return BatchOk(tuple(successful), tuple(failed))
