"""Re-checking stored traces against the current model: recorded runs stay a regression corpus."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterable

from conformance.translate import IdMap
from conformance.trace import read_trace
from model import Divergence, Model
from model.core import ModelUsageError
from model.profiles import PROFILES
from model.state import Timing


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


def check_traces(paths: Iterable[Path]) -> list[CaseCheck]:
    """Every case of every trace replayed through a fresh model, in the order it was recorded."""
    results: list[CaseCheck] = []
    for path in paths:
        cases: dict[tuple[str, int], tuple[CaseCheck, Model, IdMap]] = {}
        for record in read_trace(path):
            key = (record["run_id"], record["case"])
            if key not in cases:
                profile = record["profile"]
                if profile not in PROFILES:
                    raise ValueError(f"{path}: unknown profile {profile!r} in run {record['run_id']}")
                result = CaseCheck(path, record["run_id"], record["case"], record["target"], profile)
                timing = Timing.for_clock(record.get("clock", "virtual"), record.get("tolerance", 0.0))
                cases[key] = (result, Model(profile, timing), IdMap())
                results.append(result)
            result, model, ids = cases[key]
            if result.abandoned_at is not None:
                continue
            op = ids.op_for_model(record["operation"])
            observed = ids.response_for_model(record["response"])
            try:
                verdict = model.observe(op, record["invoke"], observed, completed_at=record["complete"])
            except ModelUsageError as error:
                raise ValueError(f"{path}: case {record['case']} step {record['step']}: {error}") from None
            ids.bind_fresh(verdict.outcome, record["response"])
            result.steps += 1
            result.divergences += [(record["step"], d) for d in verdict.divergences]
            result.notes += [(record["step"], n) for n in verdict.outcome.notes]
            if not verdict.consistent:
                result.abandoned_at = record["step"]
    return results
