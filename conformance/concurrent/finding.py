"""A concurrent finding: the shortest history that shows a rule broken, as one column per client (TIMELINE.txt),
its trace lines (history.jsonl, which `check` and `confirm` read), and RULE.py, which replays it with
threads against any endpoint."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sqs_conformance.conformance.concurrent.checker import HistoryVerdict, check_history
from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.conformance.concurrent.records import records
from sqs_conformance.conformance.trace import dumps
from sqs_conformance.model import Divergence, rule
from sqs_conformance.model.trace_format import FINDING_RUN_ID
from sqs_conformance.model.values import (
    ChangeMessageVisibility, DeleteMessage, Error, ReceiveOk, Response, SendOk, Unknown,
)
from sqs_conformance.model.words import operation_words

COLUMN = 38  # characters of one client's column


@dataclass
class ConcurrentFinding:
    rule: str
    divergence: Divergence
    history: History  # the shortest that shows it
    case: int
    operations_in_case: int

    @property
    def size(self) -> int:
        return len(self.history.ops)


def timeline(finding: ConcurrentFinding, verdict: HistoryVerdict | None = None) -> str:
    """The finding in words; `verdict`: the checker's on its history, where the caller has it already."""
    history = finding.history
    verdict = verdict or check_history(history)
    names = _Names()
    clients = sorted({o.client for o in history.ops})
    first_wall = history.ops[0].invoke_wall if history.ops else 0.0
    r = rule(finding.rule)
    lines = [f"{r.id}: {r.statement}", f"source: {r.source}", "",
             f"The shortest history that shows it: {len(history.ops)} operations by {len(clients)} clients "
             f"(of {history.clients}; {finding.operations_in_case} operations in case {finding.case}), on a "
             f"{history.clock} clock. t: the target's clock (s); sent/answered: real ms from the first request.",
             "", f"{'step':>4} {'round':>5} {'t(s)':>8} {'sent→answered':>15}  "
             + "".join(f"client {c}".ljust(COLUMN) for c in clients)]
    for judged in verdict.steps:
        o = judged.op
        cell = f"{operation_words_named(o, names)} → {_answer(o.response, names)}"
        if judged.divergences:
            cell += "  ✗"
        cells = "".join((cell if c == o.client else "").ljust(COLUMN) for c in clients)
        window = f"{(o.invoke_wall - first_wall) * 1000:6.1f}→{(o.complete_wall - first_wall) * 1000:6.1f}"
        lines.append(f"{o.index:>4} {o.round:>5} {o.invoke:>8.3f} {window:>15}  {cells}".rstrip())
    lines.append("")
    for judged in verdict.steps:
        for d in judged.divergences:
            lines.append(f"✗ step {judged.op.index}, client {judged.op.client}: {d.rule}: expected {d.expected}; "
                         f"observed {d.observed}")
        for n in judged.notes:
            lines.append(f"(counted) step {judged.op.index}, client {judged.op.client}: {n.rule}: {n.observed} "
                         f"({n.expected}); permitted rarely, this run showed it {finding.divergence.observed}")
    for v in verdict.violations:
        lines.append(v.told())
    lines.append("Messages are named by the order they were first seen (A, B, ...), receipts h1, h2, ...: "
                 f"{names.legend()}")
    return "\n".join(lines) + "\n"


class _Names:
    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.handles: dict[str, str] = {}

    def message(self, message_id: str | None) -> str:
        if message_id is None:
            return "?"
        return self.messages.setdefault(message_id, _letters(len(self.messages)))

    def handle(self, handle: str | None) -> str:
        if handle is None:
            return "?"
        return self.handles.setdefault(handle, f"h{len(self.handles) + 1}")

    def legend(self) -> str:
        return ", ".join(f"{short}={long_[:12]}" for long_, short in self.messages.items())


def _letters(n: int) -> str:
    word = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        word = chr(65 + rest) + word
    return word


def _answer(response: Response, names: _Names) -> str:
    if isinstance(response, SendOk):
        return names.message(response.message_id)
    if isinstance(response, ReceiveOk):
        return ", ".join(f"{names.message(m.message_id)} {names.handle(m.receipt_handle)}"
                         for m in response.messages) or "nothing"
    if isinstance(response, Error):
        return f"error {response.code}"
    if isinstance(response, Unknown):
        return "no answer"
    return "ok"


def operation_words_named(o: HistoryOp, names: _Names) -> str:
    """The operation in words, with the handle it names as the timeline names it."""
    if isinstance(o.op, ChangeMessageVisibility):
        return f"Change({names.handle(o.op.receipt_handle)}, {o.op.visibility_timeout!r})"
    if isinstance(o.op, DeleteMessage):
        return f"Delete({names.handle(o.op.receipt_handle)})"
    return operation_words(o.op)


def write_finding(finding: ConcurrentFinding, folder: Path, target: str, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    verdict = check_history(finding.history)
    lines = records(finding.history, verdict, run_id=FINDING_RUN_ID, target=target, target_version=version,
                    case=finding.case)
    (folder / "history.jsonl").write_text("".join(dumps(line) + "\n" for line in lines), encoding="utf-8")
    (folder / "TIMELINE.txt").write_text(timeline(finding, verdict), encoding="utf-8")
    (folder / "RULE.py").write_text(script(finding.rule), encoding="utf-8")
    (folder / "finding.json").write_text(json.dumps({
        "rule": finding.rule, "expected": finding.divergence.expected, "observed": finding.divergence.observed,
        "operations": finding.size, "clients": sorted({o.client for o in finding.history.ops}),
        "case": finding.case}, indent=2) + "\n", encoding="utf-8")


def script(rule_id: str) -> str:
    return f'''"""Replays history.jsonl beside this file: its clients' operations, concurrently, one thread per client,
against an SQS endpoint, and judges what comes back with the suite's history checker (needs sqs-conformance
installed). A race shows only now and then: it tries up to --tries times.

    python RULE.py --endpoint-url http://127.0.0.1:4566     # any SQS endpoint; without it, real AWS
    exit 1: {rule_id} broken again; 0: not reproduced in any try; 3: cannot tell (the replay went otherwise)
"""

import sys
from pathlib import Path

from sqs_conformance.conformance.concurrent.replay import main

sys.exit(main(Path(__file__).with_name("history.jsonl"), {rule_id!r}, sys.argv[1:]))
'''
