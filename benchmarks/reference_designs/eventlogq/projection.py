"""The projection: what the log says about queues and messages, folded event by event.

The fold only files events under the queue and message they concern; every state a request needs (is the
message gone, hidden, how often received, until when) is derived from the message's own event history when it is
asked for, so the log stays the single source of truth. The folded world is a snapshot: it is extended with the
events appended since it was last brought up to date, and thrown away with the log on reset.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

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

DEFAULT_ATTRIBUTES: dict[str, object] = {
    "VisibilityTimeout": 30,  # seeds 000-003: "default setting of 30 seconds"
    "DelaySeconds": 0,
    "ReceiveMessageWaitTimeSeconds": 0,
    "RedrivePolicy": None,  # (dead-letter queue name, maxReceiveCount) or None
}


class State(enum.Enum):
    DELAYED = "delayed"  # sent with a delay that has not yet run out, never received
    VISIBLE = "visible"
    IN_FLIGHT = "in flight"  # hidden by a receipt's deadline
    GONE = "gone"  # deleted or purged


@dataclass
class QueueView:
    name: str
    attributes: dict[str, object]
    members: list[str] = field(default_factory=list)  # ids of the messages filed here, in arrival order
    purges: list[float] = field(default_factory=list)


@dataclass
class MessageView:
    sent: Sent
    history: list[Event] = field(default_factory=list)  # every later event about this message, in log order


@dataclass(frozen=True)
class Receipt:
    """What a receipt handle points at."""

    handle: str
    queue: str
    message_id: str
    received_at: float


class Projection:
    def __init__(self) -> None:
        self.queues: dict[str, QueueView] = {}
        self.messages: dict[str, MessageView] = {}
        self.receipts: dict[str, Receipt] = {}
        self.position = 0  # how many events of the log this snapshot has folded

    # --- the fold ----------------------------------------------------------------------------------------

    def catch_up(self, log: list[Event]) -> None:
        for event in log[self.position:]:
            self.apply(event)
        self.position = len(log)

    def apply(self, event: Event) -> None:
        handler = {
            QueueCreated: self.on_queue_created,
            AttributesSet: self.on_attributes_set,
            Sent: self.on_sent,
            Received: self.on_received,
            VisibilityChanged: self.on_message_event,
            Deleted: self.on_message_event,
            Purged: self.on_purged,
            Redriven: self.on_redriven,
        }[type(event)]
        handler(event)

    def on_queue_created(self, e: QueueCreated) -> None:
        self.queues[e.queue] = QueueView(e.queue, {**DEFAULT_ATTRIBUTES, **dict(e.attributes)})

    def on_attributes_set(self, e: AttributesSet) -> None:
        queue = self.queues[e.queue]
        queue.attributes = {**queue.attributes, **dict(e.attributes)}  # a set names only what it changes

    def on_sent(self, e: Sent) -> None:
        self.messages[e.message_id] = MessageView(e)
        self.queues[e.queue].members.append(e.message_id)

    def on_received(self, e: Received) -> None:
        self.messages[e.message_id].history.append(e)
        self.receipts[e.handle] = Receipt(e.handle, e.queue, e.message_id, e.at)

    def on_message_event(self, e: VisibilityChanged | Deleted) -> None:
        self.messages[e.message_id].history.append(e)

    def on_purged(self, e: Purged) -> None:
        queue = self.queues[e.queue]
        queue.purges.append(e.at)
        # Every message filed here when the purge happened, in flight and delayed ones included (EVIDENCE: "PurgeQueue
        # also removes in-flight messages"); messages sent later are filed after this event and keep living.
        for message_id in queue.members:
            self.messages[message_id].history.append(e)

    def on_redriven(self, e: Redriven) -> None:
        self.messages[e.message_id].history.append(e)
        self.queues[e.queue].members.remove(e.message_id)
        self.queues[e.dead_letter_queue].members.append(e.message_id)

    # --- derivations from a message's history ------------------------------------------------------------

    def is_gone(self, m: MessageView) -> bool:
        return any(isinstance(e, (Deleted, Purged)) for e in m.history)

    def queue_of(self, m: MessageView) -> str:
        moves = [e for e in m.history if isinstance(e, Redriven)]
        return moves[-1].dead_letter_queue if moves else m.sent.queue

    def receives(self, m: MessageView) -> list[Received]:
        return [e for e in m.history if isinstance(e, Received)]

    def receive_count(self, m: MessageView) -> int:
        return len(self.receives(m))

    def first_receive_at(self, m: MessageView) -> float:
        return self.receives(m)[0].at

    def last_receive_at(self, m: MessageView) -> float:
        return self.receives(m)[-1].at

    def deadline(self, m: MessageView) -> float:
        """Until when the message is hidden by a receipt: the last deadline any event set wins, because a change
        replaces the deadline (non-additive, seeds 000, 002) and a new receive starts a new one (not sticky)."""
        deadline = 0.0
        for e in m.history:
            if isinstance(e, (Received, VisibilityChanged)):
                deadline = e.visible_until
            elif isinstance(e, Redriven):
                deadline = e.at  # a moved message is receivable in the dead-letter queue at once
        return deadline

    def state(self, m: MessageView, now: float) -> State:
        if self.is_gone(m):
            return State.GONE
        if not self.receives(m) and now < m.sent.visible_from:
            return State.DELAYED
        # A deadline has passed once the clock reaches it: a 30 s timeout set at t ends at t + 30.
        if now < self.deadline(m):
            return State.IN_FLIGHT
        return State.VISIBLE

    def available_at(self, m: MessageView) -> float | None:
        """When the message will next be receivable (None: never again)."""
        if self.is_gone(m):
            return None
        delay_end = m.sent.visible_from if not self.receives(m) else 0.0
        return max(delay_end, self.deadline(m))

    # --- queue-level reads -------------------------------------------------------------------------------

    def members(self, queue: str) -> list[MessageView]:
        return [self.messages[i] for i in self.queues[queue].members]

    def last_purge_at(self, queue: str) -> float | None:
        purges = self.queues[queue].purges
        return purges[-1] if purges else None
