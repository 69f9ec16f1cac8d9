"""Argument checks shared by several operations."""

from __future__ import annotations

import re

from model import errors
from model.outcomes import Outcome

_BATCH_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


def is_int_in(value: object, low: int, high: int) -> bool:
    """An integer (not a bool, not a float) within [low, high]."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def batch_errors(entry_ids: list[str], max_entries: int) -> list[Outcome]:
    """Every request-level batch fault present; the order AWS checks them in is not recorded, so a request
    with several faults may be answered with any of their errors. Empty when the batch is well formed."""
    if not entry_ids:
        return [Outcome(errors.empty_batch(), ("BATCH-EMPTY",))]
    faults = []
    if len(entry_ids) > max_entries:
        faults.append(Outcome(errors.too_many_entries(len(entry_ids)), ("BATCH-MAX-ENTRIES",)))
    if any(not isinstance(i, str) or _BATCH_ENTRY_ID.fullmatch(i) is None for i in entry_ids):
        faults.append(Outcome(errors.invalid_batch_entry_id(), ("BATCH-ENTRY-ID",)))
    if len(set(entry_ids)) != len(entry_ids):
        faults.append(Outcome(errors.batch_ids_not_distinct(), ("BATCH-IDS-DISTINCT",)))
    return faults
