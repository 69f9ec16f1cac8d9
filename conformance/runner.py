"""A conformance run: rounds of Hypothesis until no new rule diverges.

Each round runs the machine; every divergence of a rule not yet known fails the example and is shrunk to its
minimal case (one exception class per rule, so one round can report several). The next round tolerates the
rules found so far (the model adopts the target's answer and goes on), so a known divergence never hides the
others. A run with a seed is the same run every time; without one, Hypothesis' example database replays
earlier failures first.
"""

from __future__ import annotations

import hypothesis
import ast
import functools
import itertools
import queue
import sys
import threading
import time
import uuid
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky, UnsatisfiedAssumption

from sqs_conformance.conformance.collector import fewer_collections
from sqs_conformance.adapters import interrupt
from sqs_conformance.adapters.base import Target, TargetError
from sqs_conformance.adapters.registry import close_all
from sqs_conformance.conformance.machine import DivergenceFound, Run, build_machine, run_machine, unreachable
from sqs_conformance.conformance.minimal import MinimalCases
from sqs_conformance.conformance.redelivery import EarlyReturns
from sqs_conformance.conformance.defaults import DEFAULT_BUDGET
from sqs_conformance.conformance.hypothesis_hooks import shrinking_at_most
from sqs_conformance.conformance.session import BudgetSpent, Step, Tallies
from sqs_conformance.conformance.threads import each_at_once, within
from sqs_conformance.conformance import witnesses
from sqs_conformance.conformance.trace import TraceWriter
from sqs_conformance.conformance.witnesses.replay import Replayed, replay_case
from sqs_conformance.conformance.witnesses.trimming import case_of, fewest_steps
from sqs_conformance.model import Divergence
from sqs_conformance.model.verdicts import RuleVerdict, rule_verdict
from sqs_conformance.model.rules import rules_for

MIN_CASES_PER_JOB = 10
# The witnesses are bound by their waits, not their requests: on a real clock each job replays them on this many
# connections at once (more clients of the same service, each on its own queues, under the same request budget),
# so the catalogue takes nearer its longest witness. The search keeps one connection per job.
WITNESS_CONNECTIONS_PER_JOB = 3
# On a moved clock each connection is a server of its own (a move moves a server for all its clients): the witnesses
# are replayed on this many in all, where the target can start more (an emulator the suite starts).
MOVED_CLOCK_SERVERS = 12
HELD_CONNECTIONS = 8  # on a moved clock, clients of the first server for the witnesses that need no move
# On a real (or shifted) clock every replay of a case takes its real time, so shrinking the failures of a round
# stops sooner than Hypothesis' own 300 s: minimal cases there may keep a step or two more.
REAL_CLOCK_SHRINK_SECONDS = 30.0
# On a virtual clock a round's failures are shrunk for at most this (Hypothesis' own cap is 300 s per round, which
# a run replaying a database of earlier failures would pay each round): its findings are trimmed afterwards.
VIRTUAL_CLOCK_SHRINK_SECONDS = 20.0
# Trimming a search's findings (virtual clock only) replays each many times; on a slow target (moto answers in
# milliseconds, a 30-step case is replayed about a hundred times) this is bounded as shrinking is, and comes out
# of the run's budget: the search leaves it up to a quarter of the budget, and it ends with the budget.
TRIM_SECONDS = 30.0
# A finding whose case waits longer than this (virtual seconds) is offered its real-clock witnesses' forms: `confirm`
# replays up to 120 s of waiting by default, and a user's RULE.py sleeps for real.
REPLAYABLE_WAITING = 60.0
# How long a stopped run waits for the queues it created to be deleted (Ctrl-C must stop it within seconds); those
# left are found by `sqs-conformance cleanup`.
CLEANUP_SECONDS = 1.0

@dataclass
class Finding:
    rule: str
    divergence: Divergence
    steps: list[Step]
    tolerated: list[str]  # rules already known that also diverged earlier in this case

    @classmethod
    def shown_by(cls, divergence: Divergence, steps: list[Step]) -> Finding:
        """The finding of `divergence`'s rule whose case is `steps`, up to the one that showed it."""
        return cls(divergence.rule, divergence, steps, sorted({d.rule for s in steps[:-1] for d in s.divergences}))


@dataclass
class Spending:
    """How a run spent its time: seconds per phase, the search's shrinking apart, and where the budget ran out."""

    budget: float | None = None
    searching: bool = True  # the run had a search (not --witnesses-only)
    witnesses: float = 0.0
    search: float = 0.0
    shrinking: float = 0.0  # of the search's time: from a round's first failure to its end
    trimming: float = 0.0
    ran_out_in: str | None = None  # the phase a step was refused in for the budget: "witnesses", "search"
    witnesses_played: int = 0
    witnesses_in_all: int = 0
    # On a moved clock, the witnesses' other servers that did not open: why, each (a busy machine, a server the
    # user gave that does not follow its file)
    servers_left_out: list[str] = field(default_factory=list)

    def lines(self, rounds: int) -> list[str]:
        """What a user reads of it: one line of the phases, and one where the search got no round."""
        phases = [f"witnesses {self.witnesses:.1f} s"]
        if self.witnesses_played < self.witnesses_in_all:
            phases[0] += f" ({self.witnesses_played} of {self.witnesses_in_all} played)"
        if self.searching:
            phases.append(f"search {self.search:.1f} s in {rounds} round{'s' * (rounds != 1)}"
                          f" (shrinking {self.shrinking:.1f} s)")
        if self.trimming:
            phases.append(f"trimming {self.trimming:.1f} s")
        budget = "no budget" if self.budget is None else f"budget {self.budget:g} s"
        reached = {None: "", "search": ": the search ran until its share of it ended",
                   "witnesses": ": it ran out during the witnesses"}[self.ran_out_in]
        shown = [f"time: {', '.join(phases)}; {budget}{reached}"]
        if self.servers_left_out:
            shown.append(f"{len(self.servers_left_out)} of the witnesses' other servers did not open, the witnesses "
                         f"played without: {self.servers_left_out[0]}")
        if self.searching and rounds == 0:
            shown.append(f"the search got no round: the witnesses took the whole {budget}; raise --budget to search")
        return shown


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a run: `result` holds what it had found and counted by then."""

    def __init__(self, result: RunResult) -> None:
        super().__init__()
        self.result = result


@dataclass
class RunResult:
    run_id: str
    target: str
    target_version: str
    profile: str
    findings: dict[str, Finding] = field(default_factory=dict)
    tallies: Tallies = field(default_factory=Tallies)
    cases: int = 0
    steps: int = 0
    rounds: int = 0
    errors: list[str] = field(default_factory=list)
    # Rules whose early returns the run found not rare: a case of it, played alone, is judged knowing this
    early_not_rare: list[str] = field(default_factory=list)
    spent: Spending = field(default_factory=lambda: Spending())

    @property
    def conforms(self) -> bool:
        return not self.findings and not self.errors

    def verdict(self, rule_id: str) -> RuleVerdict:
        """What the run says of one rule (model/verdicts.py, the report's words too): "diverges" (a known
        divergence it tolerated too); "conforms" where some step could have caught it broken; "undecided" where it
        was exercised only where any answer was permitted (a gap, never a pass); or "not exercised"."""
        if rule_id in self.findings:
            return RuleVerdict.DIVERGES
        t = self.tallies.rules.get(rule_id)
        return RuleVerdict.NOT_EXERCISED if t is None else rule_verdict(t.exercised, t.decisive, t.diverging)

    def gaps(self) -> list[str]:
        """Reachable rules no step exercised decisively: the run says nothing of them."""
        left_out = self.tallies.decided() | set(self.findings) | set(unreachable(self.profile))
        return [r.id for r in rules_for(self.profile) if r.id not in left_out]


# The time `run` searches for by default, per kind of clock: on a virtual clock a case costs milliseconds, so
# the search goes on well past coverage; on a real one every wait is slept.


def search_budget(clock_kind: str, asked: float | None) -> float | None:
    """The search's budget for `run`: the seconds asked for, else the default for the clock; None for 0 (stop as
    soon as a round finds nothing new)."""
    return (DEFAULT_BUDGET[clock_kind] if asked is None else asked) or None


@dataclass(frozen=True)
class RunOptions:
    """How a run goes (`run`'s docstring says what each does); the defaults are the library's, the CLI's are in
    conformance/defaults.py."""

    examples: int = 100  # cases per search round, shared between the jobs
    seed: int | None = None
    out_dir: Path | None = None  # where the trace goes; None: no trace
    max_rounds: int = 12
    steps_per_case: int = 30
    database_dir: Path | None = None  # Hypothesis' example database, for an unseeded run
    coverage_rounds: int = 4
    shrink: bool = True
    tolerate: frozenset[str] = frozenset()  # known divergences: counted, never reported or shrunk
    shrink_seconds: float | None = None
    witnesses: bool = True
    search: bool = True
    budget: float | None = None  # seconds from the start of the run


def run(target: Target | Sequence[Target], profile: str, options: RunOptions = RunOptions(), *,
        on_progress=None) -> RunResult:
    """How the run goes is `options` (RunOptions). First, unless not `witnesses`, each rule's witness
    (conformance/witnesses/) once, all at once: every reachable rule is checked in about the time of the longest
    witness. Then, if `search`, Hypothesis: rounds until no new rule diverges; then, while a reachable rule is still
    unexercised, up to `coverage_rounds` more with fresh seeds (derived from `seed`, so a seeded run stays
    reproducible). Without `shrink`, each divergence is reported as first found (cheaper, longer cases). Rules in
    `tolerate` are known divergences: counted in the tallies, never reported or shrunk. `shrink_seconds` caps the
    time spent shrinking a round's failures (default: VIRTUAL_CLOCK_SHRINK_SECONDS under a virtual clock,
    REAL_CLOCK_SHRINK_SECONDS else). With a `budget` (seconds from the start of the run), the search goes on with
    fresh rounds until it is spent, past coverage, for divergences no round so far has shown; no step starts once it
    is spent (a witness or a round under way ends at its next step). On a virtual clock the budget also covers the
    trimming of the search's findings, which it leaves time for.

    Several targets (independent connections to one service) run as concurrent jobs in threads, each with its
    own queues and seeds and its share of each round's `examples`, so that the waits of a real clock overlap.
    A rule found by one job is tolerated by the others from the next round. Each rule's finding is its minimal
    case among every case that showed it (conformance/minimal.py), the one the report shows too."""
    targets = [target] if isinstance(target, Target) else list(target)
    run_id = uuid.uuid4().hex[:12]
    trace = TraceWriter(options.out_dir / "trace.jsonl") if options.out_dir is not None else None
    tolerated = set(options.tolerate)  # shared by the jobs
    case_ids = itertools.count(1)  # case numbers unique across the jobs of the run
    early = EarlyReturns()  # early returns counted across the witnesses and the search's generated cases
    started = time.monotonic()
    ends = None if options.budget is None else started + options.budget  # no step starts later: witnesses, search,
    # trimming
    trimming = options.search and options.shrink and targets[0].clock.kind == "virtual"
    reserve = min(TRIM_SECONDS, options.budget / 4) if trimming and options.budget is not None else 0.0
    deadline = None if ends is None else ends - reserve  # the search's: trimming gets the rest
    minimal = MinimalCases()  # every way the run plays a case feeds it
    jobs = [Run(t, profile, run_id, trace, tolerated=tolerated, case_ids=case_ids, early=early, deadline=deadline,
                minimal=minimal) for t in targets]
    if on_progress is not None:
        for job in jobs:
            job.on_case = lambda _: on_progress(_Totals(jobs, tolerated))
    database = (DirectoryBasedExampleDatabase(options.database_dir)
                if options.seed is None and options.database_dir is not None else None)

    # The round's cases are split between the jobs, but never below a few each: Hypothesis' first case is its
    # simplest (one rule over and over), so a job with one case would explore nothing.
    share = max(-(-options.examples // len(jobs)), min(options.examples, MIN_CASES_PER_JOB))

    exercised: set[str] = set()  # by the witnesses: coverage rounds need not chase these
    # Each phase's result is made before the phase starts, so that a stopped run still has what it found
    spent = Spending(budget=options.budget, searching=options.search)
    witnessed = RunResult(run_id, targets[0].name, targets[0].version(), profile)
    searched = [RunResult(run_id, j.target.name, j.target.version(), profile, tallies=j.tallies) for j in jobs]

    def one_job(index: int) -> RunResult:
        job_seed = None if options.seed is None else options.seed + 1000 * index
        return _rounds(jobs[index], searched[index], share, job_seed, options.steps_per_case, database,
                       options.max_rounds, options.coverage_rounds, options.shrink, exercised, deadline)

    def so_far(stopped: bool = False) -> RunResult:
        for job, found in zip(jobs, searched, strict=True) if stopped else ():
            for seen in unreported_seen(job, set(found.findings)):  # a round stopped half-way: as seen
                found.findings[seen.divergence.rule] = Finding.shown_by(seen.divergence, seen.steps)
        played = ([witnessed] if options.witnesses else []) + (searched if options.search else [])
        done = merged(run_id, targets[0], profile, played)
        done.early_not_rare = early.not_rare()
        done.spent = spent
        if stopped:
            _as_minimal(done, minimal)
        return done

    shrink_seconds = options.shrink_seconds
    if shrink_seconds is None:
        virtual = all(t.clock.kind == "virtual" for t in targets)
        shrink_seconds = VIRTUAL_CLOCK_SHRINK_SECONDS if virtual else REAL_CLOCK_SHRINK_SECONDS
    try:
        with shrinking_at_most(shrink_seconds), fewer_collections():
            if options.witnesses:
                phase = time.monotonic()
                try:
                    _witnesses(targets, profile, trace, case_ids, frozenset(tolerated), early, witnessed, spent, ends,
                               minimal)
                finally:
                    spent.witnesses = time.monotonic() - phase
                tolerated |= set(witnessed.findings)
                exercised |= witnessed.tallies.decided()
            if options.search:
                phase = time.monotonic()
                try:
                    with _one_ast_parse_at_a_time() if len(jobs) > 1 else nullcontext():
                        each_at_once(one_job, range(len(jobs)), "job")
                finally:
                    spent.search = time.monotonic() - phase
                    spent.shrinking = sum(j.shrinking for j in jobs)
                if any(j.budget_spent for j in jobs):
                    spent.ran_out_in = spent.ran_out_in or "search"
            result = so_far()
            if trimming:
                phase = time.monotonic()
                try:
                    _trim_search_findings(result, targets[0], run_id, trace, case_ids, minimal, ends)
                finally:
                    spent.trimming = time.monotonic() - phase
            if targets[0].clock.kind == "virtual":
                _forms_a_real_clock_replays(result, targets[0], run_id, trace, case_ids, minimal, ends)
            _as_minimal(result, minimal)
    except BudgetSpent:
        raise  # each phase ends itself at the budget: one that reaches here is a bug, not a Ctrl-C
    except KeyboardInterrupt:
        interrupt.request()  # every thread of the run stops at its next step
        raise RunInterrupted(so_far(stopped=True)) from None
    finally:
        if trace is not None:
            trace.close()
    return result


def _as_minimal(result: RunResult, minimal: MinimalCases) -> None:
    """Each finding's case made the rule's minimal one, among every case of the run that showed it."""
    for rule_id in list(result.findings):
        least = minimal.least(rule_id)
        if least is not None:
            result.findings[rule_id] = Finding.shown_by(*least)


def _forms_a_real_clock_replays(result: RunResult, target: Target, run_id: str, trace: TraceWriter | None,
                                case_ids, minimal: MinimalCases, ends: float | None) -> None:
    """On a virtual clock waiting is free and time exact: a finding may wait hours (a 12-hour ceiling reached by
    waiting for it), or stand on a margin only exact time keeps (1.5 s between a send and a receive), and neither
    is one `confirm` or RULE.py on a real clock can replay. For each rule whose minimal case is so, its witnesses
    paced for a real clock are played too (free here): one that shows the same divergence on a real clock's timing
    becomes the minimal case (MINIMAL_CASE_ORDER)."""
    hard = {rule_id for rule_id in result.findings if minimal.hard_to_replay(rule_id, REPLAYABLE_WAITING)}
    if not hard or (result.profile, "real") not in witnesses.profiles_and_paces():
        return
    into = Replayed(early=EarlyReturns.known_not_rare(result.early_not_rare), minimal=minimal)
    try:
        for witness in witnesses.load(result.profile, "real").witnesses:
            if witness.rule in hard:
                replay_case(target, result.profile, witness.steps, into, run_id, trace, next(case_ids), frozenset(),
                            counted=False, deadline=ends)
    except BudgetSpent:
        pass  # the forms not played leave their findings as they are
    finally:
        result.cases, result.steps = result.cases + into.cases, result.steps + into.steps  # they were sent
        result.tallies.merge(into.tallies)


def _trim_search_findings(result: RunResult, target: Target, run_id: str, trace: TraceWriter | None,
                          case_ids, minimal: MinimalCases, budget_ends: float | None = None) -> None:
    """Hypothesis shrinks a search's case by whole machine steps and draws, on a budget: a finding may keep a step
    or a wait it does not need. On a virtual clock a replay costs nothing, so each is replayed without each step
    and each wait in turn (as witnesses are), judged as the run judged it (its early returns known), and traced,
    so that the report shows the same minimal case. Trimming is bounded as shrinking is: the findings share
    TRIM_SECONDS, or what is left of the run's budget (`budget_ends`), each the share left of it (a long case on a
    slow target keeps what it has trimmed so far); a finding reached once the time is up keeps its case as found."""
    findings = list(result.findings.items())
    now = time.monotonic()
    ends = now + TRIM_SECONDS if budget_ends is None else min(now + TRIM_SECONDS, budget_ends)
    for position, (rule_id, finding) in enumerate(findings):
        now = time.monotonic()
        if now >= ends:
            break
        deadline = now + max(0.0, ends - now) / (len(findings) - position)
        into = Replayed(early=EarlyReturns.known_not_rare(result.early_not_rare), minimal=minimal)

        def still_shows(case, rule_id: str = rule_id, into: Replayed = into) -> list[Step] | None:
            shown, _ = replay_case(target, result.profile, case, into, run_id, trace, next(case_ids), frozenset(),
                                   counted=False)
            return next((steps for d, steps in shown if d.rule == rule_id), None)

        shown_again = still_shows(case_of(finding.steps))
        steps = fewest_steps(finding.steps, still_shows, deadline) if shown_again is not None else None
        result.cases, result.steps = result.cases + into.cases, result.steps + into.steps  # they were sent
        result.tallies.merge(into.tallies)
        if steps is None:
            continue  # the target does not show it again the same way: keep Hypothesis' case as found
        result.findings[rule_id] = Finding.shown_by(next(d for d in steps[-1].divergences if d.rule == rule_id), steps)


def _witnesses(targets: list[Target], profile: str, trace: TraceWriter | None, case_ids, known: frozenset[str],
               early: EarlyReturns, into: RunResult, spent: Spending, ends: float | None,
               minimal: MinimalCases) -> None:
    """The witnesses' verdicts, into `into` (filled whether the witnesses end, run out of budget or are stopped):
    each diverging rule's finding is the witness up to the step that diverged (already short: witnesses are shrunk
    to reach their rule). Past `ends` no step starts: the witnesses not played leave their rules unexercised."""
    catalogue = witnesses.load(profile, witnesses.pace_of(targets[0]))
    spent.witnesses_in_all = len(witnesses.distinct_witnesses(catalogue.witnesses))
    more, opening = _more_connections(targets), _servers_opening(targets)
    held = _held_connections(targets)  # on a moved clock, where `more` is none
    parts: list[Replayed] = []
    replaying = functools.partial(witnesses.replay, run_id=into.run_id, trace=trace, case_ids=case_ids,
                                  known=known, early=early, deadline=ends, parts=parts, minimal=minimal)
    try:
        if held:
            _replay_moved(targets[0], held, opening, catalogue, replaying)
        else:
            replaying(targets + more, catalogue, arrivals=opening.arrivals if opening is not None else None)
    except BudgetSpent:
        spent.ran_out_in = "witnesses"
    except KeyboardInterrupt:
        more += held + (opening.stop() if opening is not None else [])
        within(CLEANUP_SECONDS, lambda: close_all(more), "cleanup")  # their queues: the caller knows only its own
        raise
    finally:
        replayed = witnesses.merged_replays(parts)
        into.tallies, into.cases, into.steps = replayed.tallies, replayed.cases, replayed.steps
        spent.witnesses_played = replayed.played
        for rule_id, (divergence, steps) in replayed.divergent.items():
            into.findings[rule_id] = Finding.shown_by(divergence, steps)
    if opening is not None:
        more += opening.stop()
        spent.servers_left_out = list(opening.failures)
    _close_at_once(more + held)  # ended or out of budget (an interrupt closed them above, within a bounded wait)
    if ends is not None and time.monotonic() >= ends:
        spent.ran_out_in = "witnesses"


def _held_connections(targets: list[Target]) -> list[Target]:
    """On a moved clock, HELD_CONNECTIONS clients of the first server that never move its clock, for the witnesses
    that need no move (none where the target has no such connection)."""
    held: list[Target] = []
    if targets[0].clock.kind != "shifted":
        return held
    try:
        for _ in range(HELD_CONNECTIONS):
            another = targets[0].held_connection()
            if another is None:
                break
            held.append(another)
    except BaseException:
        close_all(held)
        raise
    return held


def _replay_moved(first: Target, held: list[Target], opening: ServersOpening | None,
                  catalogue: witnesses.Catalogue, replaying: Callable[..., object]) -> None:
    """The witnesses on a moved clock: those that need no move side by side on `held` connections to the first
    server (most of them: their time is long polls that find nothing), while those that move the clock take the
    servers of their own as they open, and the first server itself once the held connections are done (no one
    moves its clock before); once none that moves it is left, those servers take the others too."""
    held_done = threading.Event()
    replaying([], catalogue, held=held, held_done=held_done,
              arrivals=lambda wanted: _moving_crew(first, held_done, opening, wanted))


def _moving_crew(first: Target, held_done: threading.Event, opening: ServersOpening | None,
                 wanted: Callable[[], bool]) -> Iterator[Target]:
    """The connections that may move their clock, as they come: each server of its own as it opens, and the first
    server once its held connections are done; while `wanted()`."""
    joined: queue.SimpleQueue[Target | None] = queue.SimpleQueue()

    def first_once_free() -> None:
        held_done.wait()
        joined.put(first)
        joined.put(None)

    def opened() -> None:
        assert opening is not None
        for target in opening.arrivals(wanted):
            joined.put(target)
        joined.put(None)

    sources = [first_once_free] + ([opened] if opening is not None else [])
    for source in sources:
        threading.Thread(target=source, name="moving-crew", daemon=True).start()
    ended = 0
    while ended < len(sources) and wanted() and not interrupt.requested():
        try:
            target = joined.get(timeout=0.25)
        except queue.Empty:
            continue
        if target is None:
            ended += 1
        else:
            yield target


def _more_connections(targets: list[Target]) -> list[Target]:
    """The connections the witnesses are replayed on besides the jobs', on a real clock: more clients of the
    target's service (on a moved clock, servers of their own: `_servers_opening`)."""
    first = targets[0]
    if first.clock.kind != "real":
        return []
    more: list[Target] = []
    try:
        for _ in range(len(targets) * (WITNESS_CONNECTIONS_PER_JOB - 1)):
            another = first.another_connection()
            if another is None:  # one client only
                break
            more.append(another)
    except BaseException:
        close_all(more)
        raise
    return more


def _close_at_once(more: list[Target]) -> None:
    """The witnesses' extra connections closed all at once: each owns only its queues, or its own server (a dozen
    servers stopped one after another took seconds)."""
    if more:
        each_at_once(lambda target: target.close(), more, "close")


def _servers_opening(targets: list[Target]) -> ServersOpening | None:
    """On a moved clock a move moves the server for every client, so the witnesses' other connections are servers
    of their own, each on a clock of its own (an emulator the suite starts: another of the same, probed as the
    first was): the witnesses' real time is mostly long polls that find nothing (a 1 s wait each) and the settling
    of moves, which servers of their own overlap as clients of one real-clock server do."""
    first = targets[0]
    if first.clock.kind != "shifted" or MOVED_CLOCK_SERVERS <= len(targets):
        return None
    return ServersOpening(first, MOVED_CLOCK_SERVERS - len(targets))


class ServersOpening:
    """`count` more connections of `first`, each on a clock of its own, all opened at once in threads of their own
    (a few at a time opened later on the whole, LocalStack's and moto's alike). The witnesses take each as it
    opens (`arrivals`) and never wait for one: a dozen LocalStacks take 10 s to open on two cores, and the first
    server plays all along. One that does not open (a server that did not start, or failed its probe on a busy
    machine) is left out; one that opens once the witnesses no longer want it (`stop`) is closed as soon as it
    opens. A target with no more servers to open (one server a user started) gives none."""

    def __init__(self, first: Target, count: int) -> None:
        self._changed = threading.Condition()
        self._opened: list[Target] = []  # every one that opened while wanted, taken or not
        self._taken = 0
        self._starting = count
        self._wanted = True
        self.failures: list[str] = []  # why each that did not open did not
        for index in range(count):
            threading.Thread(target=self._open_one, args=(first,), name=f"server-{index}", daemon=True).start()

    def _open_one(self, first: Target) -> None:
        failure = None
        try:
            target = first.another_connection()
        except TargetError as error:
            target, failure = None, str(error)
        except interrupt.Interrupted:  # a stop reached its probe: the server stopped with the connection
            target = None
        with self._changed:
            self._starting -= 1
            self.failures += [failure] if failure else []
            if target is not None and self._wanted:
                self._opened.append(target)
                target = None
            self._changed.notify_all()
        if target is not None:
            target.close()  # too late: the witnesses went on without it

    def arrivals(self, wanted: Callable[[], bool]) -> Iterator[Target]:
        """Each server as it opens, while `wanted()` and some are still starting."""
        while wanted() and not interrupt.requested():
            with self._changed:
                if self._taken == len(self._opened):
                    if not self._starting:
                        return
                    self._changed.wait(0.25)  # and ask `wanted` again: the witnesses may all be taken
                    continue
                target = self._opened[self._taken]
                self._taken += 1
            yield target

    def stop(self) -> list[Target]:
        """No more wanted: every server that opened, to close (a later one closes itself as it opens)."""
        with self._changed:
            self._wanted = False
            return list(self._opened)


@contextmanager
def _one_ast_parse_at_a_time():
    """CPython 3.11 fails 'AST constructor recursion depth mismatch' when threads parse at once (CPython
    gh-106905, fixed in 3.12), and Hypothesis parses the machine's source to name it in each round."""
    if sys.version_info >= (3, 12):
        yield
        return
    original, lock = ast.parse, threading.Lock()

    def parse(*args, **kwargs):
        with lock:
            return original(*args, **kwargs)

    ast.parse = parse
    try:
        yield
    finally:
        ast.parse = original


@dataclass
class _Totals:
    """What a progress display shows of all jobs."""

    jobs: list[Run]
    tolerated: set[str]

    @property
    def cases(self) -> int:
        return sum(j.cases for j in self.jobs)

    @property
    def steps(self) -> int:
        return sum(j.steps for j in self.jobs)


def _rounds(shared: Run, result: RunResult, examples: int, seed: int | None, steps_per_case: int, database,
            max_rounds: int, coverage_rounds: int, shrink: bool, exercised_elsewhere: set[str],
            deadline: float | None = None) -> RunResult:
    """Rounds, into `result`, until no new rule diverges and the reachable rules are decided (or `coverage_rounds`
    more were spent on them); with a `deadline`, rounds until it passes instead, whatever they find (the round
    under way then ends at its next step: `shared.deadline`)."""
    extra = 0
    for round_index in itertools.count():
        if deadline is not None and time.monotonic() >= deadline:
            break
        result.rounds += 1
        round_seed = None if seed is None else seed + round_index
        try:
            new = _one_round(shared, examples, round_seed, steps_per_case, database, result, shrink)
        finally:
            result.cases, result.steps = shared.cases, shared.steps
        if deadline is not None:
            continue
        if round_index + 1 >= max_rounds + coverage_rounds:
            break
        if new:
            continue
        if not set(result.gaps()) - exercised_elsewhere or extra >= coverage_rounds:
            break
        extra += 1
    return result


def merged(run_id: str, target: Target, profile: str, results: list[RunResult]) -> RunResult:
    """The results as one: tallies and counts summed, and each rule's shortest finding."""
    if len(results) == 1:
        return results[0]
    total = RunResult(run_id, target.name, target.version(), profile)
    for r in results:
        total.tallies.merge(r.tallies)
        total.cases += r.cases
        total.steps += r.steps
        total.rounds = max(total.rounds, r.rounds)
        total.errors += r.errors
        for rule_id, finding in r.findings.items():
            kept = total.findings.get(rule_id)
            if kept is None or len(finding.steps) < len(kept.steps):
                total.findings[rule_id] = finding
    return total


def search_phases(shrink: bool) -> list[Phase]:
    """Hypothesis' phases for a round of the search: every one but `explain`, and `shrink` only if asked. Once a
    round has failed, `explain` has Hypothesis run every later case (the rest of the round's generation, all of its
    shrinking) under `sys.settrace`, which makes a call to moto in-process 7–8 times slower, to annotate a
    failure report the suite never shows (it reports its own minimal cases)."""
    return [p for p in Phase if p is not Phase.explain and (shrink or p is not Phase.shrink)]


def _one_round(shared: Run, examples: int, seed: int | None, steps_per_case: int, database, result: RunResult,
               shrink: bool = True) -> list[str]:
    shared.known = frozenset(shared.tolerated)
    shared.round_failed = False
    ran_out = False
    machine = build_machine(shared)
    if seed is not None:
        machine = hypothesis.seed(seed)(machine)
    config = settings(max_examples=examples, stateful_step_count=steps_per_case, deadline=None,
                      database=database, verbosity=Verbosity.quiet, report_multiple_bugs=True,
                      suppress_health_check=list(HealthCheck), derandomize=False,
                      phases=search_phases(shrink))
    try:
        run_machine(machine, config)
        return []
    except DivergenceFound as one:
        failures: list[BaseException] = [one]
    except BaseExceptionGroup as group:  # several rules diverged in one round
        failures = list(_leaves(group))
    except (Flaky, UnsatisfiedAssumption) as replay_differed:
        failures = [replay_differed]
    except BudgetSpent:  # the round ends where it is: what it saw fail is kept as seen (shrunk as far as it got)
        shared.budget_spent = ran_out = True
        failures = []
    finally:
        if shared.failed_at is not None:
            shared.shrinking += time.monotonic() - shared.failed_at
            shared.failed_at = None
    found = [f for f in failures if isinstance(f, DivergenceFound)]
    if ran_out:
        found += unreported_seen(shared, {f.divergence.rule for f in found})
    for failure in failures:
        if isinstance(failure, DivergenceFound):
            continue
        if not isinstance(failure, (Flaky, UnsatisfiedAssumption)):
            raise failure
        # Hypothesis replayed a failing case and it went otherwise. Under a real (or shifted) clock that is
        # expected (no two runs have the same timing); under a virtual one the target is not deterministic, or the
        # case came from the example database written by another version of the suite (whose model chose other
        # steps), which passes once the database holds this version's cases.
        if shared.target.clock.kind == "virtual":
            result.errors.append("a failing case went otherwise when it was replayed (a target that is not "
                                 "deterministic, or a saved example of an older suite): "
                                 f"{str(failure).splitlines()[0]}")
        found += unreported_seen(shared, {f.divergence.rule for f in found})
    new = []
    for failure in found:
        rule_id = failure.divergence.rule
        if rule_id not in result.findings:
            result.findings[rule_id] = Finding(rule_id, failure.divergence, failure.steps, failure.tolerated)
            new.append(rule_id)
        shared.tolerated.add(rule_id)
    return new


def unreported_seen(shared: Run, reported: set[str]) -> list[DivergenceFound]:
    """The shortest case seen of each rule that diverged in the run's machines but is not among the `reported`
    rules (a round that ended before Hypothesis reported it)."""
    return [seen for rule_id, seen in shared.seen.items() if rule_id not in reported]


def _leaves(group: BaseExceptionGroup):
    for exception in group.exceptions:
        if isinstance(exception, BaseExceptionGroup):
            yield from _leaves(exception)
        else:
            yield exception
