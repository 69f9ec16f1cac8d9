"""The smallest part of a history that still shows a rule broken.

Start from the part the checker failed (or that held the early return), cut after the operation that fit nowhere,
then leave out operations one at a time, latest first, keeping each omission after which the rest still shows the
same rule. Every candidate is judged by the checker itself, so the history a finding shows fails exactly as the
run's did; an omission that makes the rest fail otherwise (a receive left out under the change that used its
handle) is not kept.
"""

from __future__ import annotations

from sqs_conformance.conformance.concurrent.checker import check_history
from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.model.usage import ModelUsageError

OMISSIONS_TRIED = 400  # judged candidates at most, per finding


def shows(history: History, rule: str) -> bool:
    """The history breaks `rule`: no order fits, or an early return of it (counted, on a standard queue)."""
    try:
        verdict = check_history(history)
    except ModelUsageError:  # an omission the model cannot follow (the queue's creation left out)
        return False
    return any(v.rule == rule for v in verdict.violations) or \
        any(n.rule == rule for step in verdict.steps for n in step.notes)


def smallest(history: History, ops: list[HistoryOp], last: HistoryOp, rule: str) -> History:
    """Of `history`, the fewest of `ops` (a part's) that still break `rule`, `last` the operation it showed on."""
    kept = [o for o in ops if o.invoke_wall <= last.settles_by]
    if not shows(history.of(kept), rule):
        kept = list(ops)
        if not shows(history.of(kept), rule):
            return history.of(kept)  # shown only among other parts' operations: the part as it is
    tried = 0
    for o in reversed(list(kept)):
        if o is last or tried >= OMISSIONS_TRIED:
            continue
        tried += 1
        without = [k for k in kept if k is not o]
        if shows(history.of(without), rule):
            kept = without
    return history.of(kept)
