"""Argument checks shared by several operations."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import Outcome, situated
from sqs_conformance.model.rules import (
    BATCH_EMPTY,
    BATCH_ENTRY_ID,
    BATCH_IDS_DISTINCT,
    BATCH_MAX_ENTRIES,
    DELAY_HIDES,
    RCV_LONG_POLL,
    RCV_MAX_MESSAGES,
    RCV_OVERRIDE,
    RCV_WAIT_RANGE,
    VIS_RANGE,
)
from sqs_conformance.model.values import (
    ChangeMessageVisibility,
    CreateQueue,
    Operation,
    ReceiveMessage,
    SendMessage,
    SetQueueAttributes,
)

if TYPE_CHECKING:
    from sqs_conformance.model.profiles import Profile

_BATCH_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


def as_int(value: object) -> int | None:
    """An integer, or a string of one (queue attributes travel as strings); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def attribute_ranges(p: Profile) -> dict[str, tuple[int, int, str, bool]]:
    """Each ranged queue attribute: (lowest, highest, the rule that keeps it in range, whether the profile has it)."""
    return {"VisibilityTimeout": (p.visibility_min, p.visibility_max, VIS_RANGE, True),
            "DelaySeconds": (0, p.delay_max, DELAY_HIDES, p.has_delay),
            "ReceiveMessageWaitTimeSeconds": (0, p.wait_max, RCV_WAIT_RANGE, p.has_long_poll)}


# Rules that read a queue attribute's value besides the one keeping it in range.
_ATTRIBUTE_READERS = {"ReceiveMessageWaitTimeSeconds": (RCV_LONG_POLL,)}


def is_int_in(value: object, low: int, high: int) -> bool:
    """An integer (not a bool, not a float) within [low, high]."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def batch_errors(entries: list[tuple[str, object]], max_entries: int) -> list[Outcome]:
    """Every request-level batch fault present in `entries` (each entry's id, and the rest of it); the order AWS
    checks them in is not recorded, so a request with several faults may be answered with any of their errors.
    Empty when the batch is well formed."""
    entry_ids = [entry_id for entry_id, _ in entries]
    if not entry_ids:
        return [Outcome(errors.empty_batch(), (BATCH_EMPTY,))]
    faults = []
    if len(entry_ids) > max_entries:
        faults.append(Outcome(errors.too_many_entries(len(entry_ids)), (BATCH_MAX_ENTRIES,)))
    if any(not isinstance(i, str) or _BATCH_ENTRY_ID.fullmatch(i) is None for i in entry_ids):
        faults.append(Outcome(errors.invalid_batch_entry_id(), (BATCH_ENTRY_ID,)))
    if len(set(entry_ids)) != len(entry_ids):
        # A queue that refuses a repeated entry (its id and its handle alike) passes every batch that repeats one
        # whole: ids repeated on entries that differ otherwise are a situation of their own.
        whole = {repr(entry) for _, entry in entries}
        label = "entries that differ but for their ids" if len(whole) == len(entries) else ""
        faults.append(Outcome(errors.batch_ids_not_distinct(), (BATCH_IDS_DISTINCT,),
                              situations=situated((BATCH_IDS_DISTINCT,), label)))
    return faults


def ranged_values(op: Operation, p: Profile) -> list[tuple[str, object, int, int, tuple[str, ...]]]:
    """The ranged values an operation names: (parameter, value, lowest, highest, the rules that read it, the
    range's own first)."""
    found: list[tuple[str, object, int, int, tuple[str, ...]]] = []
    if isinstance(op, ReceiveMessage):
        found += [("VisibilityTimeout", op.visibility_timeout, p.visibility_min, p.visibility_max,
                   (VIS_RANGE, RCV_OVERRIDE)),
                  ("WaitTimeSeconds", op.wait_time_seconds, 0, p.wait_max, (RCV_WAIT_RANGE, RCV_LONG_POLL)),
                  ("MaxNumberOfMessages", op.max_messages, 1, p.max_messages_max, (RCV_MAX_MESSAGES,))]
    elif isinstance(op, ChangeMessageVisibility):
        found.append(("VisibilityTimeout", op.visibility_timeout, p.visibility_min, p.visibility_max, (VIS_RANGE,)))
    elif isinstance(op, SendMessage):
        found.append(("DelaySeconds", op.delay_seconds, 0, p.delay_max, (DELAY_HIDES,)))
    elif isinstance(op, (CreateQueue, SetQueueAttributes)):
        found += [(name, op.attributes.get(name), low, high, (rule_id,) + _ATTRIBUTE_READERS.get(name, ()))
                  for name, (low, high, rule_id, _) in attribute_ranges(p).items()]
    return [entry for entry in found if entry[1] is not None]


def edge_situations(op: Operation, p: Profile) -> tuple[tuple[str, str], ...]:
    """A ranged value at an edge of its range, or past it on either side, is a situation of each rule reading it:
    an off-by-one at the top passes every value at the bottom, and a check of one side passes the other."""
    situations: list[tuple[str, str]] = []
    for name, value, low, high, rules in ranged_values(op, p):
        number = as_int(value)
        if number is None:
            continue
        label = ("below its range" if number < low else "above its range" if number > high
                 else "at its lowest" if number == low else "at its highest" if number == high else "")
        situations += [(rule_id, f"{name} {label}") for rule_id in rules] if label else []
    return tuple(situations)
