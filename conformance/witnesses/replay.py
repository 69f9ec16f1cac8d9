"""Replaying a catalogue on targets: every witness at once, one queue each; a divergence cut short by another
rule is tried again other ways.
"""

from __future__ import annotations

import json
import math
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from sqs_conformance.adapters.base import Target
from sqs_conformance.conformance.cases import Case, encode_steps, longest_time
from sqs_conformance.conformance.minimal import MinimalCases
from sqs_conformance.conformance.redelivery import EarlyReturns
from sqs_conformance.conformance.session import Session, Step, Tallies, play, stop_if_due
from sqs_conformance.conformance.threads import each_at_once
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.conformance.witnesses.catalogue import Catalogue, Witness, held_and_moving
from sqs_conformance.conformance.witnesses.judged import decided_in_windows, replayed_on_model
from sqs_conformance.conformance.witnesses.trimming import fewest_steps, without_each_attribute, without_step
from sqs_conformance.model.outcomes import Divergence
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.validation import batch_errors
from sqs_conformance.model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage, DeleteMessageBatch,
    Operation, Unknown,
)

# Times a witness struck by the connection (`_struck`) is tried again as it is; a retry costs only where one was.
# Through 5% of answers lost (tests/conformance/test_faults.py) a quarter to a third of plays are struck: a witness
# was struck three plays in a row two to four times a run (eight runs); where its rule's other witnesses do not
# make up for it the rule goes unchecked (a CI run under load lost two rules, where that test allows one). Five
# plays in a row are struck about ten times more rarely than three.
RETRIES_WHEN_STRUCK = 4


@dataclass
class Replayed:
    """What the witnesses showed on a target: tallies, and each diverging rule's shortest prefix of a witness."""

    tallies: Tallies = field(default_factory=Tallies)
    divergent: dict[str, tuple[Divergence, list[Step]]] = field(default_factory=dict)  # rule: (divergence, steps)
    cases: int = 0
    steps: int = 0
    # Early returns across the witnesses, each a distinct case: a queue returning every message early shows one in
    # many of them (conformance/redelivery.py).
    early: EarlyReturns = field(default_factory=EarlyReturns)
    played: int = 0  # witnesses replayed to their end (a budget that runs out leaves some unplayed)
    minimal: MinimalCases | None = None  # the run's minimal case of each rule, fed by every replay

    def keep(self, rule_id: str, divergence: Divergence, steps: list[Step]) -> None:
        """The rule's case, unless a shorter one is kept already."""
        kept = self.divergent.get(rule_id)
        if kept is None or len(steps) < len(kept[1]):
            self.divergent[rule_id] = (divergence, steps)


def replay(targets: Sequence[Target], catalogue: Catalogue, *, run_id: str, trace: TraceWriter | None,
           case_ids, known: frozenset[str] = frozenset(), early: EarlyReturns | None = None,
           deadline: float | None = None, parts: list[Replayed] | None = None,
           minimal: MinimalCases | None = None,
           arrivals: Callable[[Callable[[], bool]], Iterable[Target]] | None = None,
           held: Sequence[Target] = (), held_done: threading.Event | None = None) -> Replayed:
    """Every witness once, on as many targets (independent connections, each its own queues) as there are, so
    that their waits overlap. A case stops where the target's answer leaves the model unable to follow it. Early
    returns are counted in `early` (the run's, shared with its search), else across the witnesses alone. Past the
    `deadline` (time.monotonic()) no step starts: `BudgetSpent` is raised once every connection has stopped. Each
    connection's share is appended to `parts` as it starts, so that a caller stopped half-way keeps what was done
    (`merged_replays`). Every step that reports a divergence is offered to `minimal` (the run's minimal cases).
    `arrivals(wanted)`: more connections as they open (servers still starting), taken while `wanted()` (some
    witness is still to be played, before the deadline): the witnesses do not wait for them. `held`: connections
    on a moved clock that never move it (`Target.held_connection`): they play only the witnesses that need no move
    (`held_and_moving`), which the others take too once none that moves the clock is left; `held_done` is set once
    every held connection is done."""
    if held:
        still, moving = held_and_moving(catalogue)
        pending = Pending(distinct_witnesses(still.witnesses, catalogue.pace),
                          distinct_witnesses(moving.witnesses, catalogue.pace))
    else:
        pending = Pending(distinct_witnesses(catalogue.witnesses, catalogue.pace), [])
    early = early or EarlyReturns()  # shared by the jobs
    crew = [*held, *targets]
    shares = [Replayed(early=early, minimal=minimal) for _ in crew]
    if parts is not None:
        parts += shares
    holding = len(held)  # held connections still at work
    holding_lock = threading.Lock()

    def work(index: int) -> None:
        mine, may_move = shares[index], index >= len(held)
        try:
            while (witness := pending.take(may_move)) is not None:
                _replay_one(crew[index], catalogue.profile, catalogue.pace, witness, mine, run_id, trace, case_ids,
                            known, deadline)
                mine.played += 1
        finally:
            if not may_move:
                _one_held_done()

    def _one_held_done() -> None:
        nonlocal holding
        with holding_lock:
            holding -= 1
            if not holding and held_done is not None:
                held_done.set()

    def joined() -> Iterator[int]:
        assert arrivals is not None
        for target in arrivals(lambda: pending.any_left() and (deadline is None or time.monotonic() < deadline)):
            crew.append(target)
            shares.append(Replayed(early=early, minimal=minimal))
            if parts is not None:
                parts.append(shares[-1])
            yield len(crew) - 1

    each_at_once(work, range(len(crew)), "witness", joined() if arrivals is not None else ())
    return merged_replays(shares)


class Pending:
    """The witnesses still to play, each list longest first: a connection that may move its clock takes those that
    need a move first, then the others; a held one only the others."""

    def __init__(self, still: list[Witness], moving: list[Witness]) -> None:
        self._still: queue.SimpleQueue[Witness] = queue.SimpleQueue()
        self._moving: queue.SimpleQueue[Witness] = queue.SimpleQueue()
        for witness in still:
            self._still.put(witness)
        for witness in moving:
            self._moving.put(witness)

    def take(self, may_move: bool) -> Witness | None:
        for source in (self._moving, self._still) if may_move else (self._still,):
            try:
                return source.get_nowait()
            except queue.Empty:
                continue
        return None

    def any_left(self) -> bool:
        return not (self._still.empty() and self._moving.empty())


def merged_replays(parts: Sequence[Replayed]) -> Replayed:
    """The connections' shares as one: tallies and counts summed, each rule's shortest case."""
    total = Replayed()
    for r in parts:
        total.tallies.merge(r.tallies)
        total.cases += r.cases
        total.steps += r.steps
        total.played += r.played
        for rule_id, (divergence, steps) in r.divergent.items():
            total.keep(rule_id, divergence, steps)
    return total


def _replay_one(target: Target, profile: str, pace: str, witness: Witness, into: Replayed, run_id: str,
                trace: TraceWriter | None, case_ids, known: frozenset[str], deadline: float | None = None) -> None:
    """The witness on the target; each divergence it shows is kept, in as few steps as show it. On a virtual
    clock a replay costs no waiting, so the case is replayed without each step in turn (`fewest_steps`): the
    probes that saw nothing, and any step the target did not need to go wrong, are left out. Where another
    rule's divergence cut the witness short, or answered in its aim's place, so that its rule was never decided,
    the aim is tried again other ways (`_other_ways`), each on fresh queues; where the connection struck it (an
    answer that never came, or on a real clock a window so wide that the model would not have decided it
    either), the same witness is tried again first."""
    def play(case: Case, counted: bool = True) -> tuple[list[tuple[Divergence, list[Step]]], list[Step]]:
        return replay_case(target, profile, case, into, run_id, trace, next(case_ids), known, counted, deadline)

    def keep(shown: list[tuple[Divergence, list[Step]]]) -> None:
        for divergence, steps in shown:
            if target.clock.kind == "virtual":
                # Not counted in the run's early returns: the same case replayed would count its one early return
                # again each time.
                def still_shows(case: Case, rule_id: str = divergence.rule) -> list[Step] | None:
                    return next((again for d, again in play(case, counted=False)[0] if d.rule == rule_id), None)

                steps = fewest_steps(steps, still_shows)
            into.keep(divergence.rule, divergence, steps)

    shown, steps = play(witness.steps)
    keep(shown)
    for _ in range(RETRIES_WHEN_STRUCK):  # a fault of the connection, not of the target: it passes
        if _decides(witness.rule, steps) or not _struck(target, profile, witness, steps):
            break
        shown, steps = play(witness.steps)
        keep(shown)
    if _decides(witness.rule, steps):
        return
    for case in _other_ways(profile, pace, witness, [s.index for s in steps if s.divergences]):
        shown, steps = play(case)
        keep(shown)
        if _decides(witness.rule, steps):
            return


def _struck(target: Target, profile: str, witness: Witness, steps: list[Step]) -> bool:
    """Whether the connection, not the target, is why a play did not decide its aim: an answer that never came; or,
    on a clock that is not virtual, a play the target went through whole without a divergence, in request windows
    so wide that the model itself, taking the same ones, would not have decided it either (a receive answered
    1.5 s late widens its window across the margin of the 12-hour ceiling's witness)."""
    if any(isinstance(s.response, Unknown) for s in steps):
        return True
    if target.clock.kind == "virtual" or len(steps) != len(witness.steps) or any(s.divergences for s in steps):
        return False
    return not decided_in_windows(profile, witness, [(s.invoke, s.complete) for s in steps], target.tolerance)


def _decides(rule_id: str, steps: list[Step]) -> bool:
    """Whether some step of a replay decided the rule (`Verdict.decided`), before any divergence."""
    return any(rule_id in s.decided for s in steps)


def _other_ways(profile: str, pace: str, witness: Witness, diverged: list[int]) -> Iterator[Case]:
    """Other cases that reach the witness's rule on the model: without the first step that diverged on the target
    (or the queue attribute it diverged on), then with every batch sent as single calls, the simplest operation
    first. A masked rule (a batch rejected for another reason hides an expired handle) shows through one."""
    model_steps = replayed_on_model(profile, pace, witness.steps)[0].steps
    tried: list[Case] = [witness.steps]
    first = next((i for i in diverged if i < len(model_steps)), None)
    candidates: list[Case] = []
    if first is not None:
        if isinstance(model_steps[first].op, CreateQueue):
            candidates += list(without_each_attribute(model_steps, first))
        else:
            candidates.append(without_step(model_steps, first))
    candidates.append(_unbatched(profile, witness.steps))
    for case in candidates:
        if case in tried:
            continue
        tried.append(case)
        if any(aim.rule == witness.rule for aim in replayed_on_model(profile, pace, case)[1]):
            yield case


def _unbatched(profile: str, case: Case) -> Case:
    """The case with each well-formed batch sent as its single calls, one entry after another."""
    result: Case = []
    for advance, op in case:
        singles: list[Operation] = []
        if isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)) and _well_formed(profile, op.entries):
            singles = [ChangeMessageVisibility(op.queue, e.receipt_handle, e.visibility_timeout)
                       if isinstance(e, ChangeEntry) else DeleteMessage(op.queue, e.receipt_handle)
                       for e in op.entries]
        result += [(advance if i == 0 else 0.0, single) for i, single in enumerate(singles)] or [(advance, op)]
    return result


def _well_formed(profile: str, entries: tuple) -> bool:
    """A batch no request-level check refuses: only then are its entries what it does."""
    return not batch_errors([(e.id, e) for e in entries], PROFILES[profile].batch_max_entries)


def replay_case(target: Target, profile: str, case: Case, into: Replayed, run_id: str,
                trace: TraceWriter | None, case_id: int, known: frozenset[str], counted: bool = True,
                deadline: float | None = None) -> tuple[list[tuple[Divergence, list[Step]]], list[Step]]:
    """The divergences (of rules not `known`) a case shows on the target, each with the steps up to it, and every
    step it took. The case stops where the target's answer leaves the model unable to follow it. Its early returns
    count in the run's unless it is not `counted` (a replay of a case already counted)."""
    stop_if_due(deadline)  # before the reset's requests, not only at the case's first step
    target.reset()
    into.cases += 1
    session = Session(target, profile, run_id=run_id, case=case_id, trace=trace, tallies=into.tallies,
                      early=into.early.case(counted), deadline=deadline, minimal=into.minimal)
    shown: list[tuple[Divergence, list[Step]]] = []
    for step in play(session, case):
        into.steps += 1
        shown += [(d, list(session.steps)) for d in step.reported if d.rule not in known]
    return shown, session.steps


# On a moved clock a wait of hours is a jump: its real time is the target's settling, a second or so.
MOVED_WAIT_SECONDS = 1.0


def distinct_witnesses(witnesses: list[Witness], pace: str = "real") -> list[Witness]:
    """One replay per distinct case, the longest first (its waits and its long polls, as they take on a clock of
    `pace`), so that the slowest start at once and the short ones fill in behind them."""
    seen: dict[str, Witness] = {}
    for w in witnesses:
        seen.setdefault(json.dumps(encode_steps(w.steps)), w)
    longest_wait = MOVED_WAIT_SECONDS if pace == "shifted" else math.inf
    return sorted(seen.values(), key=lambda w: -longest_time(w.steps, longest_wait))
