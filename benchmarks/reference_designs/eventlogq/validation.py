"""Reading raw request values: integers in range, queue attributes, batch entry lists. No queue state here."""

from __future__ import annotations

import json
import re

from sqs_conformance.model import errors
from sqs_conformance.model.values import Error

VISIBILITY_MAX = 43200  # 12 hours (seed 002: "The maximum is 12 hours"; EVIDENCE: integer 0..43200)
DELAY_MAX = 900  # EVIDENCE: "DelaySeconds 0..900"
WAIT_MAX = 20  # EVIDENCE: "WaitTimeSeconds 0..20"
BATCH_MAX = 10
MAX_RECEIVE_COUNT = (1, 1000)  # the documents give no range; AWS's API reference says 1..1000

ATTRIBUTE_RANGES = {
    "VisibilityTimeout": (0, VISIBILITY_MAX),
    "DelaySeconds": (0, DELAY_MAX),
    "ReceiveMessageWaitTimeSeconds": (0, WAIT_MAX),
}
# Real SQS attributes this queue has no use for: accepted and kept as given, since the documents say nothing of
# them and refusing them would refuse a valid request.
PASSIVE_ATTRIBUTES = frozenset({
    "MessageRetentionPeriod", "MaximumMessageSize", "Policy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled", "RedriveAllowPolicy",
})

_INTEGER = re.compile(r"[+-]?\d+")
_BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")  # EVIDENCE: ids `[A-Za-z0-9_-]{1,80}`


def as_int(raw: object) -> int | None:
    """An integer as sent over the wire (an int, or a string of digits); anything else is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and _INTEGER.fullmatch(raw):
        return int(raw)
    return None


def in_range(raw: object, low: int, high: int) -> int | None:
    value = as_int(raw)
    return value if value is not None and low <= value <= high else None


def parse_redrive_policy(raw: object) -> tuple[str, int] | None | Error:
    """`{"deadLetterTargetQueue": name, "maxReceiveCount": n}` or its JSON string; "" removes the policy."""
    invalid = errors.attribute_out_of_range("RedrivePolicy", raw).instantiate()
    if raw is None or raw == "" or raw == {}:
        return None
    policy = raw
    if isinstance(raw, str):
        try:
            policy = json.loads(raw)
        except ValueError:
            return invalid
    if not isinstance(policy, dict):
        return invalid
    target = policy.get("deadLetterTargetQueue")
    count = in_range(policy.get("maxReceiveCount"), *MAX_RECEIVE_COUNT)
    if not isinstance(target, str) or not target or count is None:
        return invalid
    return target.split(":")[-1], count  # an ARN names the queue in its last part


def parse_attributes(attributes: dict[str, object]) -> dict[str, object] | Error:
    parsed: dict[str, object] = {}
    for name, raw in attributes.items():
        if name in ATTRIBUTE_RANGES:
            value = in_range(raw, *ATTRIBUTE_RANGES[name])
            if value is None:
                return errors.attribute_out_of_range(name, raw).instantiate()
            parsed[name] = value
        elif name == "RedrivePolicy":
            policy = parse_redrive_policy(raw)
            if isinstance(policy, Error):
                return policy
            parsed[name] = policy
        elif name == "FifoQueue":
            # This is a standard queue: it can say it is not FIFO, never that it is.
            if str(raw).lower() != "false":
                return errors.attribute_out_of_range(name, raw).instantiate()
        elif name in PASSIVE_ATTRIBUTES:
            parsed[name] = str(raw)
        else:
            # model/errors.py has no spelling for this; SQS's is InvalidAttributeName.
            return Error("InvalidAttributeName", f"Unknown Attribute {name}.", 400)
    return parsed


def check_batch(entry_ids: list[str]) -> Error | None:
    """The whole-request batch rules (EVIDENCE, batches): empty, more than 10, a bad id, a repeated id."""
    if not entry_ids:
        return errors.empty_batch().instantiate()
    if len(entry_ids) > BATCH_MAX:
        return errors.too_many_entries(len(entry_ids)).instantiate()
    if any(not isinstance(i, str) or not _BATCH_ID.fullmatch(i) for i in entry_ids):
        return errors.invalid_batch_entry_id().instantiate()
    if len(set(entry_ids)) != len(entry_ids):
        return errors.batch_ids_not_distinct().instantiate()
    return None
