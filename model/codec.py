"""Operations and responses as plain JSON data, tagged with their type: what traces, case files and the
in-house process protocol carry."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqs_conformance.model import values

_TYPES = {name: getattr(values, name) for name in (
    "CreateQueue", "SetQueueAttributes", "GetQueueAttributes", "SendMessage", "ReceiveMessage",
    "ChangeMessageVisibility", "ChangeEntry", "ChangeMessageVisibilityBatch", "DeleteMessage", "DeleteEntry",
    "DeleteMessageBatch", "PurgeQueue", "PeekMessage", "Error", "Ok", "SendOk", "ReceivedMessage", "ReceiveOk",
    "PeekOk", "ChangeOk", "EntryFailure", "BatchOk", "AttributesOk", "Unknown",
)}


def encode(value: Any) -> Any:
    """An operation or response as plain JSON data, tagged with its type."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def decode(data: Any) -> Any:
    if isinstance(data, dict) and "type" in data and data["type"] in _TYPES:
        cls = _TYPES[data["type"]]
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                raw = decode(data[f.name])
                kwargs[f.name] = tuple(raw) if isinstance(raw, list) else raw
        return cls(**kwargs)
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, dict):
        return {k: decode(v) for k, v in data.items()}
    return data
