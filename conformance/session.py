"""One case: a fresh set of queues on a target, the checker model beside it, every step judged and traced."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable, Iterator

from sqs_conformance.adapters import interrupt
from sqs_conformance.adapters.base import Target, Unsupported
from sqs_conformance.conformance.redelivery import CaseEarlyReturns
from sqs_conformance.conformance.trace import SCHEMA_VERSION, TraceWriter, encode
from sqs_conformance.conformance.translate import IdMap, garbage_unless_issued, handles_named
from sqs_conformance.model import Divergence, Model
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.verdicts import StepVerdict
from sqs_conformance.model.words import operation_words
from sqs_conformance.model.blame import Played, blamed, still_shown
from sqs_conformance.model.outcomes import Verdict
from sqs_conformance.model.state import EXACT, Hidden, Timing
from sqs_conformance.model.values import (
    ChangeOk, CreateQueue, GetQueueAttributes, Operation, PeekMessage, PeekOk, ReceiveOk, Response, Unknown,
)

if TYPE_CHECKING:
    from sqs_conformance.conformance.minimal import MinimalCases

# The tolerance a real clock's target is judged with by default (adapters/endpoint.py's DEFAULT_TOLERANCE): what a
# case found on a virtual clock must stay decisive under to replay there
REPLAY_TOLERANCE = 0.5
_WALL_ZERO = time.time() - time.perf_counter()  # wall clock from perf_counter: immune to a faked time.time


def wall_clock() -> float:
    return _WALL_ZERO + time.perf_counter()


@dataclass
class Step:
    """One operation as the suite saw it: in model space, as sent, as answered, and as judged."""

    index: int
    op: Operation  # model space
    sent: Operation  # target space
    response: Response  # target space
    invoke: float  # virtual (or real) seconds since the case began
    complete: float
    verdict: Verdict
    advanced: float = 0.0  # time advanced just before this step
    views: dict[str, Any] = field(default_factory=dict)  # the model's expected windows right after the step
    reappeared: list[dict[str, Any]] = field(default_factory=list)  # in-flight messages this receive returned
    # What the step showed against the target: the verdict's divergences, and early returns no longer rare
    divergences: tuple[Divergence, ...] = ()
    # An earlier step of the case diverged, or went unanswered, where the target may have changed its state
    # otherwise than its answer says (a FIFO message received out of order; a batch refused after some entries
    # took effect; an out-of-range attribute change whose answer was lost): what this step shows may be a
    # consequence of that. It neither reports a rule nor counts as deciding one. (A wrong attribute value or peek
    # changes nothing, and leaves later steps judged as ever.)
    behind: bool = False

    @property
    def reported(self) -> tuple[Divergence, ...]:
        """The divergences this step reports: none behind another step's (they may be its consequences)."""
        return () if self.behind else self.divergences

    @property
    def decided(self) -> frozenset[str]:
        """The rules this step decided (`Verdict.decided`): none behind another step's divergence."""
        return frozenset() if self.behind else self.verdict.decided

    @property
    def leads_astray(self) -> bool:
        """This step diverged on an operation that can change a queue, or got no answer where the model permits
        only a refusal (of the operation or of one of a batch's entries): from here the target's state may be its
        own. (An unknown answer keeps every effect the
        model permits, applied or not; but a target that accepts what the model refuses, such as an attribute
        value out of range, would do so unseen.)"""
        astray = bool(self.verdict.divergences) or self.verdict.unseen
        return astray and not isinstance(self.op, (GetQueueAttributes, PeekMessage))

    @property
    def ends_case(self) -> bool:
        """The model can no longer follow the target (it accepted what the model rejected, or the reverse, or an
        answer never came for an operation the model cannot follow blind): the states may differ from here, so
        anything later would be a consequence. Every way of playing a case stops here."""
        return not self.verdict.consistent


@dataclass
class RuleTally:
    exercised: int = 0
    decisive: int = 0  # steps that could have caught the rule broken (`Verdict.decisive`), diverging included
    conforming: int = 0
    diverging: int = 0
    notes: int = 0


class Tallies:
    """Per rule: steps that exercised it, decisively or not, conformed, diverged, or gave a permitted-but-counted
    note. A rule conforms only where some step exercised it decisively: elsewhere it could not have failed."""

    def __init__(self) -> None:
        self.rules: dict[str, RuleTally] = {}

    def add(self, verdict: Verdict, divergences: tuple[Divergence, ...], behind: bool = False) -> None:
        diverged = {r for d in divergences for r in d.rules[:1]}
        noted = {r for n in verdict.outcome.notes for r in n.rules[:1]}
        decided = frozenset() if behind else verdict.decided
        for rule_id in set(verdict.outcome.rules) | diverged | noted:
            tally = self.rules.setdefault(rule_id, RuleTally())
            tally.exercised += 1
            tally.decisive += rule_id in decided
            if behind:
                continue  # behind another step's divergence: neither conforming nor diverging, as in the report
            if rule_id in diverged:
                tally.diverging += 1
            elif rule_id in noted:
                tally.notes += 1
            else:
                tally.conforming += 1

    def decided(self) -> set[str]:
        """The rules some step exercised decisively."""
        return {rule_id for rule_id, t in self.rules.items() if t.decisive}

    def merge(self, other: Tallies) -> None:
        for rule_id, t in other.rules.items():
            mine = self.rules.setdefault(rule_id, RuleTally())
            for name in ("exercised", "decisive", "conforming", "diverging", "notes"):
                setattr(mine, name, getattr(mine, name) + getattr(t, name))


class OutsideProfile(RuntimeError):
    """An operation the checker's profile has no meaning for: a bug of the engine, or a trace of another profile."""


class BudgetSpent(KeyboardInterrupt):
    """The run's budget ran out: raised at a case's next step, so that the run ends within its budget plus the
    longest single request. A KeyboardInterrupt: Hypothesis leaves a case cut short by one out of its records (any
    other exception is recorded as the case's outcome, and its next case through the same choices looks flaky).
    Whoever runs the cases catches it before anything that handles a real interrupt."""


def stop_if_due(deadline: float | None) -> None:
    """Before a step (or a case's set-up): Ctrl-C or SIGTERM (`interrupt.Interrupted`), or the run's budget spent
    (`BudgetSpent`, past `deadline` on time.monotonic())."""
    interrupt.check()
    if deadline is not None and time.monotonic() >= deadline:
        raise BudgetSpent()


# A request of a case stored for a clock that is not virtual was planned to take this long (its window); one that
# takes longer than WAIT_NOT_LATENCY waited for something (a long poll) rather than for the network.
JUDGED_LATENCY = 0.02
WAIT_NOT_LATENCY = 0.5


class Session:
    def __init__(self, target: Target, profile: str, *, run_id: str, case: int, trace: TraceWriter | None,
                 tallies: Tallies | None = None, max_wait: float = float("inf"),
                 early: CaseEarlyReturns | None = None, deadline: float | None = None,
                 minimal: MinimalCases | None = None) -> None:
        self.target = target
        self.profile = profile
        self.model = Model(profile, Timing.for_clock(target.clock.kind, target.tolerance))
        self.ids = IdMap()
        self.run_id = run_id
        self.case = case
        self.trace = trace
        self.tallies = tallies if tallies is not None else Tallies()
        self.steps: list[Step] = []
        self.final = False  # set by the machine on Hypothesis' last replay of a failing example
        self._advanced = 0.0
        self._origin = target.clock.now()
        self.max_wait = max_wait
        self.early = early  # the run's count of early returns, as this case feeds it; None: each alone is rare
        self._astray = False  # a step of this case has led the model astray: every later step is behind it
        self._played: list[Played] = []  # every step as the model judged it, to see which answer a divergence stands on
        self.deadline = deadline  # time.monotonic() past which no step starts (the run's budget)
        self.minimal = minimal  # the run's minimal case of each rule, offered each step that reports a divergence

    @property
    def now(self) -> float:
        return self.target.clock.now() - self._origin

    def advance(self, seconds: float) -> None:
        """Let time pass. A wait longer than `max_wait` (finite for cases paced for a real clock) is skipped: the
        next step simply comes sooner, and the model judges it at the time it really happens. A wait is a step of
        its own for the budget: a case of many waits and few requests stops at the deadline too."""
        if seconds > self.max_wait:
            return
        stop_if_due(self.deadline)
        self.target.clock.advance(seconds)
        self._advanced += seconds

    def sendable(self, op: Operation) -> Operation | None:
        """`op` as a stored case can send it here: None where it names a receipt only an answer that never came
        may have issued (a receive whose reply was lost: nobody can send it, no target could know it); else with
        every receipt the model names that this replay's target never issued sent as plain garbage."""
        if any(h in self.model.handles and not self.ids.issued(h) for h in handles_named(op)):
            return None
        return garbage_unless_issued(op, self.ids.issued)

    def execute(self, op: Operation) -> Step:
        stop_if_due(self.deadline)
        sent = self.ids.op_for_target(op)
        invoke, wall_invoke = self.now, wall_clock()
        response = rebased(self.target.execute(sent), self._origin)  # times in the case's own clock, traced so
        complete, wall_complete = self.now, wall_clock()
        observed = self.ids.response_for_model(response)
        try:
            verdict = self.model.observe(op, invoke, observed, completed_at=complete)
        except ModelUsageError as error:  # the suite asked something outside the profile: a bug of the suite
            raise OutsideProfile(f"{op} is outside profile {self.profile}: {error}") from error
        self.ids.bind_fresh(verdict.outcome, response)
        before = self.steps[-1].views if self.steps else {}
        took_effect = max(invoke, verdict.outcome.at or invoke)  # a long poll answers when a message comes
        # One policy for every way a case is played (search, witnesses, confirm, diff, check), decided before the
        # trace line is written: a repeated early return is a divergence there too.
        not_rare = tuple(self.early.divergences(verdict)) if self.early is not None else ()
        behind = self._astray
        self._played.append(Played(op, invoke, observed, complete, verdict))
        # Behind an earlier divergence a step reports nothing: which answer it stands on is not asked there.
        divergences = verdict.divergences if behind else blamed(self.profile, self.model.timing, self._played,
                                                                verdict.divergences)
        divergences += not_rare
        step = Step(len(self.steps), op, sent, response, invoke, complete, verdict, self._advanced,
                    self._views(), _reappeared(observed, before, took_effect), divergences, behind)
        self._advanced = 0.0
        self.steps.append(step)
        self._astray = self._astray or step.leads_astray
        self.tallies.add(verdict, step.divergences, behind)
        # A replay of the case on the model: only where a step reports, and something keeps what it says
        kept = self.trace is not None or self.minimal is not None
        exact_timing_only = bool(step.reported) and kept and self._exact_timing_only(step)
        if self.trace is not None:
            self.trace.write(self._record(step, wall_invoke, wall_complete, _returned(observed), exact_timing_only))
        if self.minimal is not None and step.reported:
            self.minimal.offer(step, self.steps, wall_invoke, exact_timing_only)
        return step

    def _exact_timing_only(self, step: Step) -> bool:
        """Whether the step's divergences show only where time is exact (a virtual clock): judged as a real clock
        would judge the same case, with its tolerance (`REPLAY_TOLERANCE`), one of them is no longer shown. A
        finding is then one `confirm` or RULE.py on a real clock cannot reproduce, and is chosen last."""
        if self.model.timing != EXACT:
            return False
        shown = still_shown(self.profile, Timing.for_clock("real", REPLAY_TOLERANCE), self._played)
        return any(d.rule not in shown for d in step.reported)

    def _views(self) -> dict[str, Any]:
        """Each live message's possible windows, for the timeline of a divergence."""
        views = {}
        for queue in self.model.queues:
            for message in self.model.messages_in(queue):
                views[message.id] = sorted({(s.hidden.value, round(s.visible_at, 3)) for s in message.states})
        return views

    def _record(self, step: Step, wall_invoke: float, wall_complete: float, returned: list[str],
                exact_timing_only: bool = False) -> dict[str, Any]:
        verdict = step.verdict
        return {
            "schema": SCHEMA_VERSION,
            "run_id": self.run_id,
            "target": self.target.name,
            "target_version": self.target.version(),
            "profile": self.profile,
            "clock": self.target.clock.kind,
            "tolerance": self.model.timing.tolerance,
            "case": self.case,
            "step": step.index,
            "final": self.final,
            # whether this case's early returns count in its run's (not for a replay of a case already counted)
            "counted": self.early.counted if self.early is not None else True,
            "operation": encode(step.sent),
            "says": operation_words(step.op),
            "response": encode(step.response),
            "invoke": step.invoke,
            "complete": step.complete,
            "invoke_wall": wall_invoke,
            "complete_wall": wall_complete,
            "verdict": _verdict_name(step).value,
            "rules": list(verdict.outcome.rules),
            "decisive": [] if step.behind else list(verdict.decisive),  # behind a divergence: decides nothing
            "divergences": [divergence_record(d) for d in step.divergences],
            "exact_timing_only": exact_timing_only,
            "notes": [divergence_record(n) for n in verdict.outcome.notes],
            "views": step.views,
            "returned": returned,
            "reappeared": step.reappeared,
            "client": None,  # a concurrent case's only (`run --clients N`)
            "round": None,
        }


def play(session: Session, case: Iterable[tuple[float, Operation]]) -> Iterator[Step]:
    """A case's steps on the session's target, each judged as it is done: the one way a stored case is played
    (witnesses, confirm, diff, and check, whose target plays a trace's answers back). It stops after a step that
    leaves the model unable to follow the target (states may differ from there, so later answers would be
    consequences). An operation the target lacks is left out; a queue it cannot create ends the case, and so
    does a step through a receipt only a lost answer issued (a fault between suite and target). On a moved clock
    its waits keep to the case's plan (`Schedule`)."""
    schedule = Schedule(session) if session.target.clock.kind == "shifted" else None
    for advance, stored in case:
        op = session.sendable(stored)
        if op is None:
            return
        try:
            step = timed_step(session, schedule, advance, op)
        except Unsupported:
            if isinstance(op, CreateQueue):
                return
            continue
        yield step
        if step.ends_case:
            return


class Schedule:
    """The times a stored case's steps were planned for on a moved clock: each request taking JUDGED_LATENCY, as
    witnesses are searched and checked (conformance/witnesses/judged.py), each wait from the end of the request
    before it. A request that takes longer (a busy server, the suite's own work between steps) is made up for by
    the next wait, so that a step after a jump of hours keeps the distance from its edge that made it decisive
    where it was checked (a witness aimed 1.5 s below the 12-hour ceiling came 0.1 s later on twelve busy
    LocalStacks, inside the second in which a refusal is also permitted, in one run of four). A request long enough
    to be a wait (a long poll, which the target ends) sets the plan to when it was answered. Not on a real clock:
    there the waits are seconds, and the drift that comes after a slow request was, measured, what kept one of
    LocalStack's 12-hour witnesses past its edge (VIS-CEILING-NO-RESET undecided in 2 runs of 2 with the plan
    kept, decided in 2 of 2 without): its windows are wider than the plan's."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._planned = session.now  # when the next request is planned to be sent
        self._sent_at = session.now

    def wait_before(self, advance: float) -> float:
        """The wait that brings the next request to its planned time (none where the case waits none)."""
        self._planned += advance
        return max(0.0, self._planned - self._session.now) if advance else 0.0

    def sending(self) -> None:
        self._sent_at = self._session.now

    def answered(self) -> None:
        now = self._session.now
        self._planned += JUDGED_LATENCY
        if now - self._sent_at > WAIT_NOT_LATENCY:
            self._planned = max(self._planned, now)


def timed_step(session: Session, schedule: Schedule | None, advance: float, op: Operation) -> Step:
    """One step of a stored case: its wait, then its request; kept to the case's plan where there is a
    `schedule`."""
    if schedule is not None:
        advance = schedule.wait_before(advance)
    if advance:
        session.advance(advance)
    if schedule is None:
        return session.execute(op)
    schedule.sending()
    try:
        return session.execute(op)
    finally:
        schedule.answered()


def _returned(observed: Response) -> list[str]:
    """The messages (model ids) a receive or peek returned."""
    if isinstance(observed, (ReceiveOk, PeekOk)):
        return [m.message_id for m in observed.messages if m.message_id is not None]
    return []


def _reappeared(observed: Response, before: dict[str, Any], took_effect: float) -> list[dict[str, Any]]:
    """Messages this receive returned that the model had in flight with one certain deadline: each with that
    deadline and how long after it the receive took effect (its start, or a long poll's answer), an upper bound
    of how late the message came back (it includes any wait of the suite's own before that receive)."""
    if not isinstance(observed, ReceiveOk):
        return []
    found = []
    for message in observed.messages:
        windows = before.get(message.message_id or "") or []
        deadlines = {visible_at for _, visible_at in windows}
        if len(deadlines) == 1 and all(hidden == Hidden.RECEIPT.value for hidden, _ in windows):
            (deadline,) = deadlines
            found.append({"message": message.message_id, "deadline": deadline,
                          "lateness": round(took_effect - deadline, 6)})
    return found


def rebased(response: Response, origin: float) -> Response:
    """Timestamps come relative to the target clock's zero; the case began at `origin` on that clock."""
    if not origin:
        return response
    shift = origin * 1000
    if isinstance(response, (ReceiveOk, PeekOk)):
        return type(response)(tuple(
            replace(m, first_receive_ms=round(m.first_receive_ms - shift)) if m.first_receive_ms is not None else m
            for m in response.messages))
    if isinstance(response, ChangeOk) and response.next_visible_ms is not None:
        return replace(response, next_visible_ms=round(response.next_visible_ms - shift))
    return response


def _verdict_name(step: Step) -> StepVerdict:
    if step.behind:  # after a step that led the model astray: it showed what `divergences` says, and decides nothing
        return StepVerdict.BEHIND
    if step.divergences:
        return StepVerdict.DIVERGENCE
    if isinstance(step.response, Unknown):
        return StepVerdict.UNKNOWN
    return StepVerdict.NOTE if step.verdict.outcome.notes else StepVerdict.OK


def divergence_record(d: Divergence) -> dict[str, Any]:
    return {"rules": list(d.rules), "expected": d.expected, "observed": d.observed,
            "message_ids": list(d.message_ids)}
