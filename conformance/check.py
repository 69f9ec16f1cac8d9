"""Re-checking stored traces against the current model: recorded runs stay a regression corpus.

Each case of a trace is played through the same `Session` as the run that wrote it, against a target that plays
the recorded answers back at their recorded times: the same judgement, the same early-return policy (counted
across the cases of each run, in the order the trace recorded them), the same point where a case is abandoned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from sqs_conformance.adapters.base import Target
from sqs_conformance.conformance.concurrent.checker import check_history
from sqs_conformance.conformance.concurrent.records import history_of, is_concurrent
from sqs_conformance.conformance.redelivery import EarlyReturns
from sqs_conformance.conformance.session import OutsideProfile, Session, Tallies
from sqs_conformance.conformance.trace import read_trace
from sqs_conformance.model import Divergence
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.values import Operation, Response


@dataclass
class CaseCheck:
    path: Path
    run_id: str
    case: int
    target: str
    profile: str
    steps: int = 0
    divergences: list[tuple[int, Divergence]] = field(default_factory=list)
    notes: list[tuple[int, Divergence]] = field(default_factory=list)  # permitted but counted (early redeliveries)
    # The step after which the model could no longer follow the target (as the engine, which abandons the case
    # there): an answer that never came for a send, say. Later steps are not judged.
    abandoned_at: int | None = None


class _RecordedClock:
    """The times a trace recorded: a step's invoke until it is done, then its completion."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.at = 0.0

    def now(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:  # the recorded times already hold every wait
        pass


class PlayedBack(Target):
    """A target whose answers are a trace's: each operation gets the response recorded for it."""

    clock: _RecordedClock

    def __init__(self, record: dict[str, Any]) -> None:
        self.name = record["target"]
        self.profiles = frozenset({record["profile"]})
        self.clock = _RecordedClock(record.get("clock", "virtual"))
        self.tolerance = record.get("tolerance", 0.0)
        self._record = record

    def next(self, record: dict[str, Any]) -> None:
        self._record = record
        self.clock.at = record["invoke"]

    def execute(self, op: Operation) -> Response:
        self.clock.at = self._record["complete"]
        return self._record["response"]


def check_traces(paths: Iterable[Path]) -> list[CaseCheck]:
    """Every case of every trace replayed through a fresh model, in the order it was recorded; a concurrent case
    (`run --clients N`) judged whole by the history checker once all its lines are read."""
    results: list[CaseCheck] = []
    for path in paths:
        runs: dict[str, EarlyReturns] = {}
        cases: dict[tuple[str, int], tuple[CaseCheck, Session, PlayedBack]] = {}
        concurrent: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for record in read_trace(path):
            key = (record["run_id"], record["case"])
            if is_concurrent(record):
                concurrent.setdefault(key, []).append(record)
                continue
            if key not in cases:
                profile = record["profile"]
                if profile not in PROFILES:
                    raise ValueError(f"{path}: unknown profile {profile!r} in run {record['run_id']}")
                result = CaseCheck(path, record["run_id"], record["case"], record["target"], profile)
                target = PlayedBack(record)
                early = runs.setdefault(record["run_id"], EarlyReturns()).case(record.get("counted", True))
                session = Session(target, profile, run_id=record["run_id"], case=record["case"], trace=None,
                                  tallies=Tallies(), early=early)
                cases[key] = (result, session, target)
                results.append(result)
            result, session, target = cases[key]
            if result.abandoned_at is not None:
                continue
            target.next(record)
            try:
                step = session.execute(session.ids.op_for_model(record["operation"]))
            except OutsideProfile as error:
                raise ValueError(f"{path}: case {record['case']} step {record['step']}: {error}") from None
            result.steps += 1
            result.divergences += [(record["step"], d) for d in step.reported]  # as the run reports them
            result.notes += [(record["step"], n) for n in step.verdict.outcome.notes]
            if step.ends_case:
                result.abandoned_at = record["step"]
        for lines in concurrent.values():
            results.append(_check_concurrent(path, lines))
    return results


def _check_concurrent(path: Path, lines: list[dict[str, Any]]) -> CaseCheck:
    first = lines[0]
    if first["profile"] not in PROFILES:
        raise ValueError(f"{path}: unknown profile {first['profile']!r} in run {first['run_id']}")
    try:
        verdict = check_history(history_of(lines))
    except ModelUsageError as error:
        raise ValueError(f"{path}: run {first['run_id']} case {first['case']}: {error}") from None
    result = CaseCheck(path, first["run_id"], first["case"], first["target"], first["profile"], steps=len(lines))
    for step in verdict.steps:
        result.divergences += [(step.op.index, d) for d in step.divergences]
        result.notes += [(step.op.index, n) for n in step.notes]
    return result
