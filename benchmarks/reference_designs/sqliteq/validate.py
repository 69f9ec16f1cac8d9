"""Parsing of raw request values and the batch envelope rules. Errors are raised as `Refusal(Error)`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from sqs_conformance.model import errors
from sqs_conformance.model.values import Error, ErrorSpec

MAX_VISIBILITY = 43200     # 12 hours: the range of VisibilityTimeout and the ceiling of a receipt
MAX_DELAY = 900            # DelaySeconds 0..900
MAX_WAIT = 20              # WaitTimeSeconds / ReceiveMessageWaitTimeSeconds 0..20
MAX_RECEIVE_COUNT = 1000   # RedrivePolicy.maxReceiveCount 1..1000 (AWS's documented range)
MAX_BATCH = 10

_BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
_INTEGER = re.compile(r"[+-]?\d+")


class Refusal(Exception):
    """An operation answered with an SQS error instead of a result."""

    def __init__(self, error: Error) -> None:
        super().__init__(error.code)
        self.error = error


def refuse(spec: ErrorSpec) -> Refusal:
    return Refusal(spec.instantiate())


def as_int(raw: Any) -> int | None:
    """An integer as SQS would accept it (an int, or a string of digits); None for anything else. bool is not
    an integer here, nor is 1.5: the wire has no such value, so treating them as invalid is the safe choice."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and _INTEGER.fullmatch(raw.strip()):
        return int(raw.strip())
    return None


def in_range(raw: Any, low: int, high: int, on_error: Callable[[Any], ErrorSpec]) -> int:
    value = as_int(raw)
    if value is None or not low <= value <= high:
        raise refuse(on_error(raw))
    return value


def request_param(name: str, high: int) -> Callable[[Any], int]:
    """A request parameter 0..high, refused with InvalidParameterValue (no recorded text)."""
    return lambda raw: in_range(raw, 0, high, lambda v: errors.out_of_range(name, v, "sqs"))


def attribute(name: str, raw: Any, low: int, high: int) -> int:
    """A queue attribute, refused with InvalidAttributeValue."""
    return in_range(raw, low, high, lambda v: errors.attribute_out_of_range(name, v))


def redrive_policy(raw: Any) -> tuple[str, int] | None:
    """{"deadLetterTargetQueue": name-or-arn, "maxReceiveCount": n} as a dict or its JSON; "" or None clears it."""
    if raw is None or raw == "" or raw == {}:
        return None
    policy = raw
    if isinstance(raw, str):
        try:
            policy = json.loads(raw)
        except ValueError:
            raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw)) from None
    if not isinstance(policy, dict):
        raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw))
    target = policy.get("deadLetterTargetQueue")
    if not isinstance(target, str) or not target:
        raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw))
    count = as_int(policy.get("maxReceiveCount"))
    if count is None or not 1 <= count <= MAX_RECEIVE_COUNT:
        raise refuse(errors.attribute_out_of_range("RedrivePolicy", raw))
    # AWS names the dead-letter queue by ARN; the suite by name. An ARN's last field is the queue name.
    return target.rsplit(":", 1)[-1], count


def batch_envelope(ids: list[str]) -> None:
    """The whole-request batch rules, in the order chosen here (the documents give none): empty, too many,
    an ill-formed id, then duplicate ids."""
    if not ids:
        raise refuse(errors.empty_batch())
    if len(ids) > MAX_BATCH:
        raise refuse(errors.too_many_entries(len(ids)))
    if any(not isinstance(i, str) or not _BATCH_ID.fullmatch(i) for i in ids):
        raise refuse(errors.invalid_batch_entry_id())
    if len(set(ids)) != len(ids):
        raise refuse(errors.batch_ids_not_distinct())
