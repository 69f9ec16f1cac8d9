"""Operations the model understands and the normalised responses it expects or observes.

Arguments are kept raw (`int | str | None`) on purpose: out-of-range and ill-typed values are part of what the
suite sends, and validating them is the model's job. Queues are addressed by name, messages by the model's own
ids; adapters and the engine translate the target's ids and handles into these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Raw = Any  # an argument as sent: normally int/str, but anything a caller may try


# --- operations --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CreateQueue:
    """`attributes` as SQS names them, raw; a RedrivePolicy names its dead-letter queue by name, as a dict:
    {"deadLetterTargetQueue": "dlq", "maxReceiveCount": 3} (an endpoint adapter sends deadLetterTargetArn)."""

    queue: str
    attributes: dict[str, Raw] = field(default_factory=dict)


@dataclass(frozen=True)
class SetQueueAttributes:
    queue: str
    attributes: dict[str, Raw]


@dataclass(frozen=True)
class GetQueueAttributes:
    queue: str


@dataclass(frozen=True)
class SendMessage:
    queue: str
    body: str
    delay_seconds: Raw = None
    group_id: str | None = None
    dedup_id: str | None = None


@dataclass(frozen=True)
class ReceiveMessage:
    queue: str
    max_messages: Raw = None
    visibility_timeout: Raw = None
    wait_time_seconds: Raw = None
    attempt_id: str | None = None


@dataclass(frozen=True)
class ChangeMessageVisibility:
    queue: str
    receipt_handle: str
    visibility_timeout: Raw


@dataclass(frozen=True)
class ChangeEntry:
    id: str
    receipt_handle: str
    visibility_timeout: Raw


@dataclass(frozen=True)
class ChangeMessageVisibilityBatch:
    queue: str
    entries: tuple[ChangeEntry, ...]


@dataclass(frozen=True)
class DeleteMessage:
    queue: str
    receipt_handle: str


@dataclass(frozen=True)
class DeleteEntry:
    id: str
    receipt_handle: str


@dataclass(frozen=True)
class DeleteMessageBatch:
    queue: str
    entries: tuple[DeleteEntry, ...]


@dataclass(frozen=True)
class PurgeQueue:
    queue: str


@dataclass(frozen=True)
class PeekMessage:
    queue: str
    max_messages: int = 1


Operation = (
    CreateQueue | SetQueueAttributes | GetQueueAttributes | SendMessage | ReceiveMessage | ChangeMessageVisibility
    | ChangeMessageVisibilityBatch | DeleteMessage | DeleteMessageBatch | PurgeQueue | PeekMessage
)


# --- responses ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Error:
    """An error as a target answered it (or as the model adapter answers it)."""

    code: str
    message: str = ""
    status: int = 400


@dataclass(frozen=True)
class ErrorSpec:
    """An error the model permits: its code, and the text where the evidence records it (a regex)."""

    code: str
    pattern: str | None = None
    status: int = 400
    example: str = ""

    def matches(self, error: Error) -> bool:
        if error.code != self.code:
            return False
        return self.pattern is None or re.fullmatch(self.pattern, error.message, re.DOTALL) is not None

    def instantiate(self) -> Error:
        return Error(self.code, self.example or self.code, self.status)


@dataclass(frozen=True)
class Unknown:
    """No answer came back (a timeout, a dropped connection, a server error): the operation may or may not have
    taken effect, as Jepsen's ':info' operations."""

    reason: str = ""


@dataclass(frozen=True)
class Ok:
    """Success with nothing to report (delete, purge, set attributes, create)."""


@dataclass(frozen=True)
class SendOk:
    message_id: str | None


@dataclass(frozen=True)
class ReceivedMessage:
    message_id: str | None
    body: str
    receipt_handle: str | None
    receive_count: int | None = None
    first_receive_ms: int | None = None


@dataclass(frozen=True)
class ReceiveOk:
    messages: tuple[ReceivedMessage, ...]


@dataclass(frozen=True)
class PeekOk:
    messages: tuple[ReceivedMessage, ...]


@dataclass(frozen=True)
class ChangeOk:
    """A change accepted. SMQ also returns a new receipt handle and NextVisibleTime in ms."""

    receipt_handle: str | None = None
    next_visible_ms: int | None = None


@dataclass(frozen=True)
class EntryFailure:
    id: str
    code: str
    message: str = ""
    sender_fault: bool = True


@dataclass(frozen=True)
class BatchOk:
    successful: tuple[str, ...]
    failed: tuple[EntryFailure, ...] = ()


@dataclass(frozen=True)
class AttributesOk:
    attributes: dict[str, str]


Response = Error | Unknown | Ok | SendOk | ReceiveOk | PeekOk | ChangeOk | BatchOk | AttributesOk
