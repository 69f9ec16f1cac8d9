"""A concurrent history as trace lines and back: a run's trace, a finding's history file and `check` share them.

A concurrent case's lines carry `client` and `round`; its steps are numbered by when they were sent. Each line's
verdict is the history checker's (the order it found, or where none exists), not the model's on the line alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqs_conformance.conformance.concurrent.checker import HistoryVerdict
from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.conformance.session import divergence_record
from sqs_conformance.conformance.trace import SCHEMA_VERSION, encode
from sqs_conformance.model.words import operation_words


def is_concurrent(record: dict[str, Any]) -> bool:
    return record.get("client") is not None


def records(history: History, verdict: HistoryVerdict, *, run_id: str, target: str, target_version: str,
            case: int) -> list[dict[str, Any]]:
    lines = []
    for judged in verdict.steps:
        o = judged.op
        lines.append({
            "schema": SCHEMA_VERSION, "run_id": run_id, "target": target, "target_version": target_version,
            "profile": history.profile, "clock": history.clock, "tolerance": history.tolerance, "case": case,
            "step": o.index, "final": False, "counted": True, "operation": encode(o.op),
            "says": operation_words(o.op), "response": encode(o.response), "invoke": o.invoke,
            "complete": o.complete, "invoke_wall": o.invoke_wall, "complete_wall": o.complete_wall,
            "verdict": judged.verdict.value, "rules": sorted(judged.rules), "decisive": sorted(judged.decisive),
            "divergences": [divergence_record(d) for d in judged.divergences], "exact_timing_only": False,
            "notes": [divergence_record(n) for n in judged.notes], "views": {}, "returned": [], "reappeared": [],
            "client": o.client, "round": o.round,
        })
    return lines


def history_of(lines: Iterable[dict[str, Any]], clients: int | None = None) -> History:
    """A history from one case's decoded trace lines (operation and response already values)."""
    lines = list(lines)
    first = lines[0]
    ops = [HistoryOp(int(r["step"]), int(r["client"]), r["operation"], r["response"], float(r["invoke"]),
                     float(r["complete"]), float(r.get("invoke_wall", r["invoke"])),
                     float(r.get("complete_wall", r["complete"])), int(r.get("round") or 0)) for r in lines]
    count = clients or 1 + max(o.client for o in ops)
    return History(first["profile"], first.get("clock", "virtual"), float(first.get("tolerance") or 0.0), count,
                   ops).in_order()
