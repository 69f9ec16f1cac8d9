"""The immutable facts the log is made of. An event records what happened and when, never a derived state."""

from __future__ import annotations

from dataclasses import dataclass

Attributes = tuple[tuple[str, object], ...]  # (name, parsed value) pairs: a frozen dict


@dataclass(frozen=True)
class QueueCreated:
    queue: str
    attributes: Attributes
    at: float


@dataclass(frozen=True)
class AttributesSet:
    queue: str
    attributes: Attributes  # only the attributes this call named
    at: float


@dataclass(frozen=True)
class Sent:
    queue: str
    message_id: str
    body: str
    at: float
    visible_from: float  # the end of the message's delay (at + DelaySeconds)


@dataclass(frozen=True)
class Received:
    queue: str
    message_id: str
    handle: str
    at: float
    visible_until: float  # the deadline of this receipt as the receive set it


@dataclass(frozen=True)
class VisibilityChanged:
    queue: str
    message_id: str
    handle: str  # the handle the change was made through (possibly an older receipt's)
    at: float
    visible_until: float


@dataclass(frozen=True)
class Deleted:
    queue: str
    message_id: str
    handle: str
    at: float


@dataclass(frozen=True)
class Purged:
    queue: str
    at: float


@dataclass(frozen=True)
class Redriven:
    queue: str
    message_id: str
    dead_letter_queue: str
    at: float


Event = QueueCreated | AttributesSet | Sent | Received | VisibilityChanged | Deleted | Purged | Redriven
