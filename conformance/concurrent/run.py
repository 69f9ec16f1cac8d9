"""`run --clients N`: concurrent cases on one target, each judged by the history checker, traced, and every rule
broken reduced to the shortest history that shows it.

On a virtual clock the cases alternate between real threads (races inside the target) and an interleaving drawn
by Hypothesis, one operation at a time, which Hypothesis shrinks (the same history every time: rules among
consumers, without races). On a real clock every case is threads.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sqs_conformance.adapters.base import Target
from sqs_conformance.conformance.concurrent.checker import DEFAULT_BUDGET, HistoryVerdict, check_history
from sqs_conformance.conformance.concurrent.clients import clients_of, close_shared, interleaved, threads
from sqs_conformance.conformance.concurrent.finding import ConcurrentFinding
from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.conformance.concurrent.parts import Part
from sqs_conformance.conformance.concurrent.records import records
from sqs_conformance.conformance.concurrent.shrink import smallest
from sqs_conformance.conformance.concurrent.drawn import HypothesisDraw, drawn_cases
from sqs_conformance.conformance.concurrent.workload import REAL, VIRTUAL, Draw, RandomDraw, Workload, draw_workload
from sqs_conformance.conformance.session import BudgetSpent, RuleTally, stop_if_due
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.model.values import ReceiveOk
from sqs_conformance.model.verdicts import RuleVerdict, StepVerdict, rule_verdict


@dataclass(frozen=True)
class ConcurrentOptions:
    clients: int = 8
    cases: int = 10
    rounds: int = 12  # rounds of a case (every client does 1..3 operations in each)
    seed: int | None = None
    mode: str = "auto"  # "threads", "drawn" (virtual clocks only) or "auto": both on a virtual clock, threads else
    budget: float | None = None  # seconds for the whole run
    search_budget: int = DEFAULT_BUDGET  # judged steps per part of a history, beyond its length


@dataclass
class ConcurrentResult:
    run_id: str
    target: str
    profile: str
    clients: int
    seed: int
    cases: int = 0
    operations: int = 0
    findings: dict[str, ConcurrentFinding] = field(default_factory=dict)
    tallies: dict[str, RuleTally] = field(default_factory=dict)
    unordered: int = 0  # steps in parts whose search ran out of budget: judged neither way
    stopped: bool = False
    budget_spent: bool = False  # the run's --budget ended it before its last case

    @property
    def conforms(self) -> bool:
        return not self.findings

    def verdicts(self) -> dict[str, RuleVerdict]:
        return {rule_id: rule_verdict(t.exercised, t.decisive, t.diverging) for rule_id, t in self.tallies.items()}

    def add(self, verdict: HistoryVerdict) -> None:
        for step in verdict.steps:
            self.unordered += step.verdict is StepVerdict.UNORDERED
            diverged = {d.rule for d in step.divergences}
            for rule_id in step.rules | diverged | {n.rule for n in step.notes}:
                tally = self.tallies.setdefault(rule_id, RuleTally())
                tally.exercised += 1
                tally.decisive += rule_id in step.decisive or rule_id in diverged
                tally.diverging += rule_id in diverged
                tally.conforming += rule_id not in diverged


def run_concurrent(target: Target, profile: str, options: ConcurrentOptions = ConcurrentOptions(),
                   trace: TraceWriter | None = None,
                   on_case: Callable[[ConcurrentResult], None] | None = None) -> ConcurrentResult:
    seed = options.seed if options.seed is not None else random.randrange(2 ** 32)
    result = ConcurrentResult(uuid.uuid4().hex[:12], target.name, profile, options.clients, seed)
    deadline = None if options.budget is None else time.monotonic() + options.budget
    virtual = target.clock.kind == "virtual"
    drawn = 0 if not virtual or options.mode == "threads" else \
        options.cases if options.mode == "drawn" else options.cases // 2

    def seen(history: History, verdict: HistoryVerdict) -> None:
        if trace is not None:
            for line in records(history, verdict, run_id=result.run_id, target=target.name,
                                target_version=target.version(), case=result.cases):
                trace.write(line)
        result.cases += 1
        result.operations += len(history.ops)
        result.add(verdict)
        if on_case is not None:
            on_case(result)

    try:
        for case in range(options.cases - drawn):
            stop_if_due(deadline)
            history = _case(target, profile, options, RandomDraw(seed * 7919 + case), deadline, drawn=False)
            verdict = check_history(history, options.search_budget)
            seen(history, verdict)
            _keep_findings(result, history, verdict, result.cases - 1)
        if drawn:
            def play(draw: HypothesisDraw) -> History:
                stop_if_due(deadline)
                return _case(target, profile, options, draw, deadline, drawn=True)

            for _, history, verdict in drawn_cases(play, drawn, seed, options.search_budget, seen):
                _keep_findings(result, history, verdict, result.cases - 1)
    except BudgetSpent:
        result.budget_spent = True  # the run ends within its budget: the cases done so far are its verdict
    except KeyboardInterrupt:
        result.stopped = True
        raise
    return result


def _workload(target: Target, profile: str, options: ConcurrentOptions, draw: Draw) -> Workload:
    pace = VIRTUAL if target.clock.kind == "virtual" else REAL
    return draw_workload(draw, options.clients, options.rounds, profile == "sqs-fifo", pace)


def _case(target: Target, profile: str, options: ConcurrentOptions, draw: Draw, deadline: float | None,
          drawn: bool) -> History:
    """One case on fresh queues: its clients as threads, or (`drawn`) one operation at a time in the order `draw`
    gives."""
    target.reset()
    connections = clients_of(target, options.clients)
    try:
        workload = _workload(target, profile, options, draw)
        if drawn:
            return interleaved(connections, profile, workload, draw, deadline)
        return threads(connections, profile, workload, deadline)
    finally:
        close_shared(connections)


def _keep_findings(result: ConcurrentResult, history: History, verdict: HistoryVerdict, case: int) -> None:
    """Each rule broken, reduced to its shortest history; the shortest of the run's is kept."""
    shown = [(v.part.ops, v.op, v.divergence) for v in verdict.violations]
    shown += [(_together(history, parts), op, d) for op, d, parts in verdict.repeated]
    for ops, last, divergence in shown:
        known = result.findings.get(divergence.rule)
        if known is not None and known.size <= 4:
            continue  # nothing much shorter is likely: the shrinking is the costly part
        reduced = smallest(history, ops, last, divergence)
        if known is None or len(reduced.ops) < known.size:
            result.findings[divergence.rule] = ConcurrentFinding(divergence.rule, divergence, reduced, case,
                                                                 len(history.ops))


def _together(history: History, parts: list[Part]) -> list[HistoryOp]:
    """The operations of several parts (each early return of a count may be in a part of its own), in history
    order, each once: a receive cut into two of them answers the messages of both, in the order it returned them."""
    ops: dict[int, HistoryOp] = {}
    for part in parts:
        for o in part.ops:
            known = ops.get(o.index)
            if known is not None and known is not o and isinstance(o.response, ReceiveOk):
                ids = {m.message_id for m in (*known.response.messages, *o.response.messages)}  # type: ignore
                whole = history.ops[o.index].response
                assert isinstance(whole, ReceiveOk)
                o = replace(o, response=ReceiveOk(tuple(m for m in whole.messages if m.message_id in ids)))
            ops[o.index] = o
    return [ops[i] for i in sorted(ops)]
