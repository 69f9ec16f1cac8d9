"""Model state. Each message holds the *set* of states it may be in (usually one).

Messages are independent except inside a FIFO group, so uncertainty is kept per message rather than as a set
of whole worlds: a hedged outcome on one message never multiplies the states of the others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple, TypeVar


@dataclass(frozen=True, slots=True)
class Timing:
    """How precisely the checker knows when things happened.

    Exact (virtual clocks): an operation takes effect at one known instant. Windowed (real clocks): it takes
    effect somewhere between its invoke and its complete, and a target may show a deadline up to `tolerance`
    seconds either side of it (a distributed service's timers are not exact; nothing in the evidence bounds
    how far, so the bound is the user's setting), so an outcome inside that uncertainty is permitted either way.
    """

    windowed: bool = False
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        if self.tolerance < 0 or (self.tolerance and not self.windowed):
            raise ValueError("a tolerance needs windowed timing, and is never negative")

    @staticmethod
    def for_clock(kind: str, tolerance: float = 0.0) -> Timing:
        """A virtual clock is exact; a real one (or a shifted real one) gives windows, judged with the tolerance."""
        return EXACT if kind == "virtual" else Timing(windowed=True, tolerance=tolerance)


EXACT = Timing()


def millis(seconds: float) -> int:
    """A timestamp as services report it: whole milliseconds, truncated."""
    return math.floor(seconds * 1000 + 1e-6)


class Hidden(str, Enum):
    """Why a message is not receivable before its `visible_at`."""

    NONE = "none"
    DELAY = "delay"
    LOCK = "lock"  # sqs-2008: changed before it was ever received
    RECEIPT = "receipt"  # in flight


class Gone(str, Enum):
    NO = "no"
    DELETED = "deleted"
    PURGED = "purged"


# The members as plain names, which the model reads: on Python 3.11 every attribute of an Enum class goes through
# EnumType.__getattr__'s slot, a bound wrapper made and called each time, some fifteen times a global's cost (a
# tenth of a checker's step went there, most of it in a receive's look at each message).
HIDDEN_NONE, HIDDEN_DELAY, HIDDEN_LOCK, HIDDEN_RECEIPT = Hidden.NONE, Hidden.DELAY, Hidden.LOCK, Hidden.RECEIPT
GONE_NO, GONE_DELETED, GONE_PURGED = Gone.NO, Gone.DELETED, Gone.PURGED


class MessageState(NamedTuple):
    """One state a message may be in. A NamedTuple: immutable, hashable, and cheap to copy with a change."""

    queue: str
    visible_at: float
    hidden: Hidden = HIDDEN_NONE
    gone: Gone = GONE_NO
    receipt: str | None = None  # the handle of the current receipt
    received_at: float | None = None  # the ReceiveMessage that produced the current receipt (ceiling base)
    received_slack: float = 0.0  # under a real clock that receive took effect in [received_at, + this]
    changed_at: float | None = None  # last accepted change of this receipt (or lock)
    receive_count: int = 0
    first_receive_at: float | None = None
    was_locked: bool = False
    # The rules that set `visible_at`, most specific first: a divergence at this boundary breaks them.
    why: tuple[str, ...] = ()
    # Under a real clock the operation that set `visible_at` took effect somewhere in a window: the deadline
    # lies in [visible_at, visible_at + slack]. Always 0 under a virtual clock.
    slack: float = 0.0
    # Moved to a dead-letter queue: its receive count then, and when it was first received there. Whether a
    # redriven message's receive count and first-receive timestamp go on or start again is not recorded.
    redrive_base: int | None = None
    redrive_first_at: float | None = None
    gone_at: float | None = None  # when it was deleted or purged
    # Under a real clock, the first receive (and the first in the dead-letter queue) took effect in a window:
    # [first_receive_at, + this]. 0 once the target told the time (a receive's ApproximateFirstReceiveTimestamp).
    first_receive_slack: float = 0.0
    redrive_first_slack: float = 0.0

    @property
    def purged_in_flight(self) -> bool:
        return (self.gone is GONE_PURGED and self.hidden is HIDDEN_RECEIPT and self.gone_at is not None
                and self.visible_at > self.gone_at)

    def live_in(self, queue: str) -> bool:
        return self.queue == queue and self.gone is GONE_NO

    def in_flight(self, now: float) -> bool:
        return self.gone is GONE_NO and self.hidden is HIDDEN_RECEIPT and now < self.visible_at

    def may_be_due(self, late: float, tolerance: float = 0.0) -> bool:
        """Its deadline (or release) may have passed by `late`."""
        return late >= self.visible_at - tolerance

    def surely_due(self, early: float, tolerance: float = 0.0) -> bool:
        """Its deadline has surely passed by `early`. At the exact instant of a deadline a message may still be
        hidden; one that was never hidden is visible from that instant on."""
        edge = self.visible_at + self.slack + tolerance
        return early > edge or (self.hidden is HIDDEN_NONE and early >= edge)

    def waited_out(self) -> Hidden | None:
        """What hides it for a while that time alone ends: a delay, or a receipt whose timeout was more than 0. A
        timeout of 0 releases the message at once, which a queue may well do apart from a lapse (None then)."""
        if self.hidden is HIDDEN_DELAY:
            return HIDDEN_DELAY
        set_at = self.changed_at if self.changed_at is not None else self.received_at
        if self.hidden is HIDDEN_RECEIPT and set_at is not None and self.visible_at > set_at:
            return HIDDEN_RECEIPT
        return None

    def received(self, handle: str, at: float, late: float, visible_at: float, why: tuple[str, ...]) -> MessageState:
        """The state a receive taking effect in [at, late] leaves it in, in flight under `handle` until `visible_at`
        for the rules `why`: what `replaced` would make of the fields a receive changes, made in one step, every field
        in its place (a receive makes one for each message it returns; `tests/model/test_state.py` holds the two
        equal)."""
        slack = late - at
        first = self.first_receive_at is None
        redrive_first = self.redrive_first_at is None and self.redrive_base is not None
        return tuple.__new__(MessageState, (  # the fields in their order, as declared above
            self.queue, visible_at, HIDDEN_RECEIPT, self.gone, handle, at, slack, None, self.receive_count + 1,
            at if first else self.first_receive_at, False, why, slack, self.redrive_base,
            at if redrive_first else self.redrive_first_at, self.gone_at,
            slack if first else self.first_receive_slack, slack if redrive_first else self.redrive_first_slack))

    def changed(self, visible_at: float, at: float, late: float, why: tuple[str, ...], receipt: str | None
                ) -> MessageState:
        """The state an accepted ChangeMessageVisibility taking effect in [at, late] leaves it in: hidden under
        `receipt` until `visible_at`, for the rules `why`: as `received`, in one step (the few fields it sets by their
        positions)."""
        values = list(self)
        values[_VISIBLE_AT], values[_HIDDEN], values[_RECEIPT] = visible_at, HIDDEN_RECEIPT, receipt
        values[_CHANGED_AT], values[_WHY], values[_SLACK] = at, why, late - at
        return tuple.__new__(MessageState, values)

    def deleted(self, why: tuple[str, ...], at: float) -> MessageState:
        """The state a delete at `at` leaves it in, for the rules `why`; as `received`, one step."""
        values = list(self)
        values[_GONE], values[_WHY], values[_GONE_AT] = GONE_DELETED, why, at
        return tuple.__new__(MessageState, values)

    def evolve(self, **changes) -> MessageState:
        """A copy with these fields changed (`replaced`)."""
        return replaced(self, changes)


# The positions of the fields a change or delete sets (MessageState.changed, .deleted)
_VISIBLE_AT, _HIDDEN, _GONE, _RECEIPT, _CHANGED_AT, _WHY, _SLACK, _GONE_AT = map(
    MessageState._fields.index, ("visible_at", "hidden", "gone", "receipt", "changed_at", "why", "slack", "gone_at"))

_Record = TypeVar("_Record", bound=tuple)
_FIELD_INDEXES: dict[type, dict[str, int]] = {}  # per NamedTuple class, each field's position


def replaced(record: _Record, changes: dict[str, Any]) -> _Record:
    """A copy of a NamedTuple with these fields changed. What `_replace` does, without its pass over every field by
    name, and compiled where `_replace` is Python (a receive, change or delete makes one or more: `_replace` was a
    twentieth of a checker's step)."""
    kind = type(record)
    index = _FIELD_INDEXES.get(kind)
    if index is None:
        index = _FIELD_INDEXES[kind] = {name: i for i, name in enumerate(kind._fields)}  # type: ignore[attr-defined]
    values = list(record)
    for name, value in changes.items():
        values[index[name]] = value
    return tuple.__new__(kind, values)


@dataclass(slots=True)
class Message:
    id: str
    body: str
    seq: int
    sent_at: float
    group_id: str | None
    states: tuple[MessageState, ...]


class HandleInfo(NamedTuple):
    """What a receipt handle addresses. A NamedTuple, as MessageState: a receive makes one a message returned, and a
    frozen dataclass's __init__ costs several times as much."""

    message_id: str
    queue: str
    received_at: float  # the receive the handle's receipt came from


@dataclass(frozen=True, slots=True)
class Redrive:
    dead_letter_queue: str
    max_receive_count: int

    def moves(self, s: MessageState) -> bool:
        """REDRIVE-DLQ: received maxReceiveCount times, its next receive moves it instead of returning it."""
        return s.receive_count >= self.max_receive_count


@dataclass(frozen=True, slots=True)
class Setting:
    """A queue attribute and, for `propagation` seconds after a change, the value it had before."""

    value: object
    previous: object = None
    changed_at: float | None = None

    def values_at(self, now: float, propagation: float) -> tuple[object, ...]:
        if self.changed_at is None or now >= self.changed_at + propagation or self.previous == self.value:
            return (self.value,)
        return (self.value, self.previous)

    def set(self, value: object, now: float) -> Setting:
        return Setting(value, self.value, now)


@dataclass(slots=True)
class Attempt:
    """A FIFO receive remembered by its ReceiveRequestAttemptId."""

    at: float
    messages: tuple  # ReceivedMessage values as the model issued them
    states: dict[str, tuple[MessageState, ...]]  # each message's states right after that receive


@dataclass(slots=True)
class Queue:
    name: str
    fifo: bool
    settings: dict[str, Setting]
    content_based_dedup: bool = False
    # Every message that may still be live in this queue, in the order they joined it (an ordered set). Messages
    # surely gone leave it, so that a receive looks only at what the queue may hold.
    message_ids: dict[str, None] = field(default_factory=dict)
    # Whether they joined in send order, as sent messages do: one redriven here from another queue may not have.
    joined_in_send_order: bool = True
    dedup: dict[str, tuple[str, float]] = field(default_factory=dict)  # dedup id -> (message id, sent at)
    # dedup id -> when a send with it was last deduplicated: the window counts from the first send all the same,
    # but a queue that restarts it at each retry shows only once that window ends inside this one's
    deduplicated_at: dict[str, float] = field(default_factory=dict)
    attempts: dict[str, Attempt] = field(default_factory=dict)
    last_purge_at: float | None = None
    last_purge_until: float | None = None  # the last purge took effect in [last_purge_at, this] (a real clock)
    first_purge_at: float | None = None

    def setting(self, name: str, now: float, propagation: float) -> tuple[object, ...]:
        return self.settings[name].values_at(now, propagation)

    @property
    def redrive(self) -> Redrive | None:
        return self.settings["RedrivePolicy"].value  # type: ignore[return-value]


# --- changes an outcome makes to a queue: plain data, applied when the outcome is committed ------------------------

@dataclass(frozen=True, slots=True)
class NewQueue:
    queue: Queue

    def apply(self, queues: dict[str, Queue]) -> None:
        queues[self.queue.name] = self.queue


@dataclass(frozen=True, slots=True)
class NewSettings:
    """Queue attributes set at `at` (each keeps its earlier value for the propagation window)."""

    queue: str
    values: dict[str, object]
    at: float

    def apply(self, queues: dict[str, Queue]) -> None:
        settings = queues[self.queue].settings
        for name, value in self.values.items():
            settings[name] = settings[name].set(value, self.at)


@dataclass(frozen=True, slots=True)
class Deduplication:
    """A FIFO send remembered by its deduplication id."""

    queue: str
    dedup_id: str
    message_id: str
    at: float

    def apply(self, queues: dict[str, Queue]) -> None:
        queues[self.queue].dedup[self.dedup_id] = (self.message_id, self.at)


@dataclass(frozen=True, slots=True)
class Deduplicated:
    """A FIFO send answered with the message its deduplication id was first sent as."""

    queue: str
    dedup_id: str
    at: float

    def apply(self, queues: dict[str, Queue]) -> None:
        queues[self.queue].deduplicated_at[self.dedup_id] = self.at


@dataclass(frozen=True, slots=True)
class AttemptRemembered:
    queue: str
    attempt_id: str
    attempt: Attempt

    def apply(self, queues: dict[str, Queue]) -> None:
        queues[self.queue].attempts[self.attempt_id] = self.attempt


@dataclass(frozen=True, slots=True)
class Purged:
    queue: str
    at: float
    until: float  # it took effect somewhere in [at, until]

    def apply(self, queues: dict[str, Queue]) -> None:
        queue = queues[self.queue]
        queue.last_purge_at, queue.last_purge_until = self.at, self.until
        if queue.first_purge_at is None:
            queue.first_purge_at = self.at


QueueChange = NewQueue | NewSettings | Deduplication | Deduplicated | AttemptRemembered | Purged
