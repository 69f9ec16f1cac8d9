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
from sqs_conformance.conformance.translate import handles_named
from sqs_conformance.model.values import ReceiveMessage, ReceiveOk, SendMessage
from sqs_conformance.model import Divergence
from sqs_conformance.model.usage import ModelUsageError

OMISSIONS_TRIED = 400  # judged candidates at most, per finding


def shows(history: History, shown: Divergence, last: HistoryOp) -> bool:
    """The history breaks the rule as it did: on the same operation (`last`), the same way. A violation stays a
    violation with the same expectation (an omission that changes what the model expects there shows another
    fault of the same rule: a receive count expected 1 where it was 2, because the receives before were left out);
    early returns stay too many, never turning into one early return of another kind. And it is the history's only
    failure."""
    try:
        verdict = check_history(history)
    except ModelUsageError:  # an omission the model cannot follow (the queue's creation left out)
        return False

    def same(o: HistoryOp, d: Divergence) -> bool:
        return (o.client, o.invoke_wall) == (last.client, last.invoke_wall) and d.rules == shown.rules \
            and d.expected == shown.expected

    failures = [(v.op, v.divergence) for v in verdict.violations] + [(o, d) for o, d, _ in verdict.repeated]
    # ... and nothing else: an omission that leaves a message received but never sent fails otherwise too
    return len(failures) == 1 and same(*failures[0])


def smallest(history: History, ops: list[HistoryOp], last: HistoryOp, shown: Divergence) -> History:
    """Of `history`, the fewest of `ops` (a part's) that still break the rule as `shown` on `last`."""
    kept = [o for o in ops if o.invoke_wall <= last.settles_by]
    if not shows(history.of(kept), shown, last):
        kept = list(ops)
        if not shows(history.of(kept), shown, last):
            return history.of(kept)  # shown only among other parts' operations: the part as it is
    issued = {h for o in history.ops if isinstance(o.response, ReceiveOk) for h in _handles(o.response)}
    firsts: dict[tuple, int] = {}
    for o in history.ops:
        key = _retry_key(o)
        if key is not None:
            firsts.setdefault(key, o.index)
    tried = 0
    for o in reversed(list(kept)):
        if tried >= OMISSIONS_TRIED:
            break
        if o is last:
            continue
        tried += 1
        without = [k for k in kept if k is not o]
        if _replayable(without, issued, firsts) and shows(history.of(without), shown, last):
            kept = without
    return history.of(kept)


def _handles(response: ReceiveOk) -> set[str]:
    return {m.receipt_handle for m in response.messages if m.receipt_handle}


def _retry_key(o: HistoryOp) -> tuple | None:
    """What makes an operation a retry of an earlier one on FIFO: its receive attempt id, its deduplication id."""
    if isinstance(o.op, ReceiveMessage) and o.op.attempt_id:
        return ("attempt", o.op.queue, o.op.attempt_id)
    if isinstance(o.op, SendMessage) and o.op.dedup_id:
        return ("dedup", o.op.queue, o.op.dedup_id)
    return None


def _replayable(ops: list[HistoryOp], issued: set[str], firsts: dict[tuple, int]) -> bool:
    """What a replay can do again: every handle an operation names came to its client from a receive kept before
    it (or was never issued at all: garbage), and a retry (the same attempt or deduplication id) keeps the first
    try, whose answer it got."""
    kept = {o.index for o in ops}
    if any((key := _retry_key(o)) is not None and firsts[key] not in kept for o in ops):
        return False
    held: dict[int, set[str]] = {}
    for o in ops:
        named = set(handles_named(o.op)) & issued
        if not named <= held.get(o.client, set()):
            return False
        if isinstance(o.response, ReceiveOk):
            held.setdefault(o.client, set()).update(_handles(o.response))
    return True
