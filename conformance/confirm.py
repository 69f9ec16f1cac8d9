"""Find on the cheap, confirm on the expensive: replay minimal cases found on one target against another."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqs_conformance.adapters.base import Target
from sqs_conformance.conformance.cases import CaseError, FoundCase
from sqs_conformance.conformance.redelivery import EarlyReturns
from sqs_conformance.conformance.session import Session, play


@dataclass
class Confirmation:
    case: FoundCase
    reproduced: bool | None  # None: not replayed, or replayed without deciding the rule
    detail: str


def case_files(paths: list[Path]) -> list[Path]:
    """Case files named directly, or every one under a findings directory."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob("*.json"))
        elif path.is_file():
            found.append(path)
        else:
            raise CaseError(f"no case file or findings directory at {path}")
    if not found:
        raise CaseError(f"no case files under {', '.join(map(str, paths))}")
    return found


def confirm(target: Target, case: FoundCase, max_waiting: float) -> Confirmation:
    """Replay one case step for step. It reproduces if the target breaks the same rule again."""
    if target.clock.kind == "real" and case.waiting > max_waiting:
        return Confirmation(case, None, f"needs {case.waiting:,.0f} s of waiting on a real clock "
                                        f"(more than {max_waiting:,.0f} s): not replayed")
    if case.profile not in target.profiles:
        return Confirmation(case, None, f"{target.name} does not speak {case.profile}")
    target.reset()
    early = EarlyReturns.known_not_rare(case.early_not_rare).case()
    session = Session(target, case.profile, run_id="confirm", case=1, trace=None, early=early)
    for step in play(session, case.steps):
        if case.rule in {r for d in step.divergences for r in d.rules}:
            return Confirmation(case, True, f"diverges at step {step.index + 1} of {len(case.steps)}")
        if step.leads_astray or step.ends_case:  # what follows would be a consequence of another rule's divergence
            why = "; ".join(d.rule for d in step.divergences) or f"no answer ({step.response})"
            return Confirmation(case, False, f"went another way at step {step.index + 1}: {why}")
    if not any(case.rule in step.decided for step in session.steps):
        # Each answer was permitted, but the rule's breaking would have been too (an edge the timing of this
        # clock leaves open): this replay says nothing of it, and a "no" would be a pass that could not fail
        return Confirmation(case, None, "undecided: on this clock the case's timing leaves the rule open")
    return Confirmation(case, False, "conforms on this target")
