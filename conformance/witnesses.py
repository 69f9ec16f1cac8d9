"""Witnesses: for each rule, as each operation shows it, the shortest case that reaches it, then probes of what
it left; searched once on the model and replayed on any target.

Hypothesis finds what nobody foresaw, but on a real clock its coverage rounds cost minutes: each case waits in
real time, and a rule reached by one sequence in a thousand (a stale handle changed, an extension that must not
stick) is reached late or never. A witness reaches it at once. They are searched on the model (a virtual clock,
but paced as the target's clock will be: the same short waits and timeouts), shipped with the suite in
`conformance/witnesses/`, and replayed concurrently, one queue each, so the whole catalogue takes about as
long as its longest witness.
"""

from __future__ import annotations

import json
import queue
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from collections.abc import Callable, Iterator, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.stateful import run_state_machine_as_test

from adapters.base import Target, Unsupported, VirtualClock
from adapters.endpoint import DEFAULT_TOLERANCE
from adapters.model_target import ModelTarget
from conformance.cases import Case, decode_steps, encode_steps
from conformance.machine import GARBAGE_HANDLES, REAL_MAX_WAIT, Run, build_machine
from conformance.redelivery import EarlyReturns
from conformance.session import Session, Step, Tallies, play
from conformance.trace import TraceWriter
from conformance.translate import map_handles
from model.outcomes import Divergence, answer_kind
from model.attributes import dead_letter_queue
from model.profiles import PROFILES
from model.rules import rules_for
from model.state import Gone, Hidden
from model.validation import batch_errors
from model.values import (
    ChangeEntry, ChangeMessageVisibility, ChangeMessageVisibilityBatch, CreateQueue, DeleteMessage,
    DeleteMessageBatch, GetQueueAttributes, Operation, PeekMessage, ReceiveMessage, Response,
)

WITNESS_DIR = Path(__file__).parent / "witnesses"
PACES = ("virtual", "shifted", "real")  # a target's clock kind: what its witnesses may wait and ask
EXPLORE_EXAMPLES = 1000  # random cases to find what there is to aim at
SEARCH_EXAMPLES = 150  # cases to reach one aim (and shrink it), at most
RULE_EXAMPLES = 1000  # cases to reach a rule no random case reached, with each of RULE_SEEDS seeds
RULE_SEEDS = 3
SEARCH_STEPS = 20




class WitnessError(ValueError):
    """A witness file that is missing or cannot be read; the message names it."""


class Aim(NamedTuple):
    """What a witness reaches: a rule exercised by an operation the model answers so. Each rule has an aim per
    branch (VIS-RANGE on a change, a receive, a queue attribute...): a target breaks one branch, not the rule."""

    rule: str
    operation: str
    answer: str  # an error code, or the response's kind ("ReceiveOk-empty" for a receive that returned nothing)

    def __str__(self) -> str:
        return f"{self.rule} on {self.operation} answered {self.answer}"


def aims_of(step: Step) -> set[Aim]:
    """The aims a step of the model reaches: its decisive rules (`Verdict.decisive`), for a step where the model
    would have permitted an answer of another kind, or that a queue breaking the rule could have passed, shows
    nothing of them; a witness must reach its aim where the answer is decided."""
    outcome, answer = step.verdict.outcome, answer_kind(step.response)
    return {Aim(rule_id, type(step.op).__name__, answer + (f" ({s})" if (s := outcome.situation_of(rule_id)) else ""))
            for rule_id in step.verdict.decisive}


@dataclass
class Witness:
    aim: Aim
    steps: Case

    @property
    def rule(self) -> str:
        return self.aim.rule

    @property
    def waiting(self) -> float:
        return sum(advance for advance, _ in self.steps)


@dataclass
class Catalogue:
    """A profile's witnesses for one pace, and the rules no witness was found for (with the reason)."""

    profile: str
    pace: str
    witnesses: list[Witness]
    missing: dict[str, str] = field(default_factory=dict)


# --- searching ----------------------------------------------------------------------------------------------------

# How targets of each pace are judged: a real or moved clock's requests take time, and the checker gives every
# deadline the endpoints' tolerance band. Witnesses are searched, trimmed and checked on a model judged the same
# way, so an aim they reach stays decisive there (one a millisecond past an edge would not).
JUDGED_TOLERANCE = max(DEFAULT_TOLERANCE.values())
JUDGED_LATENCY = 0.02  # seconds a request takes on the model judged as a real target: its window
PROBE_WAIT = 2  # seconds of the long poll that probes a deadline on a real or moved clock
PROBE_PAST_TOLERANCE = 0.1  # how far past deadline + tolerance that poll ends


class _JudgedClock(VirtualClock):
    """Virtual time the checker reads as a real clock's: windows and a tolerance band, nothing slept."""

    kind = "windowed"


class JudgedModel(ModelTarget):
    """The model as a target of a real or moved clock: each request takes JUDGED_LATENCY, taking effect halfway."""

    tolerance = JUDGED_TOLERANCE

    def __init__(self, profile: str) -> None:
        super().__init__(profile)
        self.clock = _JudgedClock()

    def execute(self, op: Operation) -> Response:
        self.clock.advance(JUDGED_LATENCY / 2)
        response = super().execute(op)
        self.clock.advance(JUDGED_LATENCY / 2)
        return response

    def reset(self) -> None:
        super().reset()
        self.clock = _JudgedClock()


def judged_model(profile: str, pace: str) -> ModelTarget:
    """The model as the target a witness of this pace is searched and checked on."""
    return ModelTarget(profile) if pace == "virtual" else JudgedModel(profile)


class _Reached(Exception):
    def __init__(self, steps: list[Step]) -> None:
        super().__init__(f"reached in {len(steps)} steps")
        self.steps = steps


def _machine(profile: str, pace: str, on_step: Callable[[Step, list[Step]], None]):
    """The run's own machine on the model, paced for a `pace` clock, calling `on_step` after each step."""
    shared = Run(judged_model(profile, pace), profile, run_id="witness", pace=pace)

    class Searching(build_machine(shared)):  # type: ignore[misc, valid-type]
        def do(self, op):
            step = super().do(op)
            if step is not None:
                on_step(step, self.session.steps)
            return step

    return Searching


def _settings(examples: int, steps_per_case: int, shrink: bool) -> settings:
    return settings(max_examples=examples, stateful_step_count=steps_per_case, deadline=None, database=None,
                    verbosity=Verbosity.quiet, report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate])


def explore(profile: str, pace: str, *, seed: int = 1, examples: int = EXPLORE_EXAMPLES) -> dict[Aim, Case]:
    """Every aim random cases reach, with the shortest case that reached it (up to the step that did)."""
    reached: dict[Aim, Case] = {}

    def note(step: Step, steps: list[Step]) -> None:
        for aim in aims_of(step):
            if aim not in reached or len(steps) < len(reached[aim]):
                reached[aim] = _case(steps)

    machine = _machine(profile, pace, note)
    machine._hypothesis_internal_use_seed = seed  # what hypothesis.seed() sets
    run_state_machine_as_test(machine, settings=_settings(examples, SEARCH_STEPS, shrink=False))
    return reached


def search(profile: str, aim: Aim | str, pace: str, *, seed: int = 1, examples: int = SEARCH_EXAMPLES
           ) -> Witness | None:
    """The shortest case Hypothesis finds (and shrinks) in which a step of the model reaches `aim` (or any aim of
    a rule, given its id), with the waits and timeouts the machine uses for a `pace` clock. None if `examples`
    cases never reach it."""
    def wanted(candidate: Aim) -> bool:
        return candidate == aim if isinstance(aim, Aim) else candidate.rule == aim

    def check(step: Step, steps: list[Step]) -> None:
        if any(wanted(a) for a in aims_of(step)):
            raise _Reached(list(steps))

    machine = _machine(profile, pace, check)
    machine._hypothesis_internal_use_seed = seed
    try:
        run_state_machine_as_test(machine, settings=_settings(examples, SEARCH_STEPS, shrink=True))
    except _Reached as found:
        return _witness_from_steps(profile, pace, sorted(a for a in aims_of(found.steps[-1]) if wanted(a))[0],
                                   found.steps)
    return None


def witness_from_case(profile: str, pace: str, aim: Aim, case: Case) -> Witness | None:
    """A case that reached the aim, as a witness with every step it can do without left out."""
    steps = _reaching(profile, pace, aim, case)
    return None if steps is None else _witness_from_steps(profile, pace, aim, steps)


def _witness_from_steps(profile: str, pace: str, aim: Aim, steps: list[Step]) -> Witness:
    return Witness(aim, _case(fewest_steps(steps, lambda case: _reaching(profile, pace, aim, case))))


def _reaching(profile: str, pace: str, aim: Aim, case: Case) -> list[Step] | None:
    """The case replayed on the model up to the first step that reaches the aim, or None if none does (or if it
    waits longer than a real clock sleeps: leaving a step out adds its wait and its time to the next one's)."""
    if pace == "real" and any(advance > REAL_MAX_WAIT for advance, _ in case):
        return None
    steps = _replayed(profile, pace, case)[0].steps
    return next((steps[:i + 1] for i, step in enumerate(steps) if aim in aims_of(step)), None)


def _case(steps: list[Step]) -> Case:
    return [(step.advanced, step.op) for step in steps]


def fewest_steps(steps: list[Step], shows: Callable[[Case], list[Step] | None]) -> list[Step]:
    """The steps of a case, with every one left out that the case can do without. `shows` replays a simpler case
    and gives the steps that still show what it must (up to the step that shows it), or None. Hypothesis shrinks
    on a budget and may leave a step nothing needs; this tries the case without each step, the last first, then
    with each queue created without one of its attributes, and starts again after each that still shows, until
    none does. The steps kept happen when they did (a step left out passes on its wait, and the time it took:
    a long poll's); a queue is left out only where no other step names it."""
    changed = True
    while changed:
        changed = False
        for simpler in _simpler(steps):
            shown = shows(simpler)
            if shown is not None:
                steps, changed = shown, True
                break
    return steps


def _simpler(steps: list[Step]) -> Iterator[Case]:
    for index in range(len(steps) - 1, -1, -1):
        if not isinstance(steps[index].op, CreateQueue) or not _named_elsewhere(steps, index):
            yield _without(steps, index)
    for index, step in enumerate(steps):
        if isinstance(step.op, CreateQueue):
            yield from _without_each_attribute(steps, index)


def _without_each_attribute(steps: list[Step], index: int) -> Iterator[Case]:
    """The case with the queue the step at `index` creates made without one of its attributes, for each."""
    op = steps[index].op
    if not isinstance(op, CreateQueue):
        return
    for name in op.attributes:
        if name != "FifoQueue":  # the queue's kind is the profile's, not a detail of the case
            fewer = {k: v for k, v in op.attributes.items() if k != name}
            yield _without(steps, index, instead=CreateQueue(op.queue, fewer))


def _named_elsewhere(steps: list[Step], index: int) -> bool:
    """Whether another step names the queue the step at `index` creates (as its queue, or its dead-letter queue)."""
    queue = steps[index].op.queue
    return any(queue in (getattr(step.op, "queue", None), _dead_letter_queue_of(step.op))
               for position, step in enumerate(steps) if position != index)


def _dead_letter_queue_of(op: Operation) -> str | None:
    return dead_letter_queue(op.attributes.get("RedrivePolicy")) if isinstance(op, CreateQueue) else None


def _without(steps: list[Step], index: int | None, instead: Operation | None = None) -> Case:
    """The case without the step at `index`, or with `instead` in its place. A handle no step kept issued (its
    receive left out, or a model id that was garbage to the model all along) is sent as a plain garbage handle:
    a target must only ever be sent handles it issued itself, or ones that are garbage to every queue."""
    case: Case = []
    done = 0.0  # when the previous step kept was answered
    renamed = _renumbered(steps, index if instead is None else None)
    issued: set[str] = set()
    for position, step in enumerate(steps):
        if position == index and instead is None:
            continue
        op = map_handles(instead if position == index and instead is not None else step.op,
                         lambda h: renamed.get(h, h))
        op = map_handles(op, lambda h, issued=frozenset(issued): h if h in issued or not _MODEL_ID.fullmatch(h)
                         else GARBAGE_HANDLES[0])
        case.append((round(max(0.0, step.invoke - done), 6), op))
        issued |= {renamed.get(m, m) for m in step.verdict.outcome.minted}
        done = step.complete
    return case


_MODEL_ID = re.compile(r"(left-out-)?[a-z]+-\d+")  # how the model names what it mints ("rh-3", "msg-1")


def _renumbered(steps: list[Step], index: int | None) -> dict[str, str]:
    """The model names what it mints in order ("rh-3": the third handle). Without the step at `index`, what is
    minted after it takes the next number down, so that later steps still name the same handles; what that step
    minted names nothing any more."""
    mapping: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for position, step in enumerate(steps):
        for minted in sorted(step.verdict.outcome.minted, key=_mint_order):
            kind = minted.rpartition("-")[0]
            if position == index:
                mapping[minted] = f"left-out-{minted}"
            else:
                counts[kind] += 1
                mapping[minted] = f"{kind}-{counts[kind]}"
    return mapping


def _mint_order(model_id: str) -> tuple[str, int]:
    kind, _, number = model_id.rpartition("-")
    return kind, int(number) if number.isdigit() else 0


def search_catalogue(profile: str, pace: str, *, seed: int = 1,
                     on_aim: Callable[[Aim, Witness], None] | None = None,
                     kept: Catalogue | None = None) -> Catalogue:
    """Explore, then search a witness for each aim no witness so far reaches, the aims of the shortest cases
    first (their witnesses reach many others on the way); then one for each rule still without. With `kept` (a
    stored catalogue), its witnesses that still reach their aims are kept (`relabelled`), and only what they
    leave uncovered is searched."""
    from conformance.runner import unreachable

    not_generated = unreachable(profile)
    reached = explore(profile, pace, seed=seed)
    catalogue = Catalogue(profile, pace, [])
    covered: set[Aim] = set()
    witness: Witness | None
    for witness in relabelled(kept) if kept is not None else []:
        covered.add(witness.aim)
        covered.update(_covered(profile, pace, witness))
        catalogue.witnesses.append(witness)

    def keep(witness: Witness) -> None:
        covered.update(_covered(profile, pace, witness))
        probed = with_probes(profile, pace, witness)
        catalogue.witnesses.append(probed)
        if on_aim is not None:
            on_aim(probed.aim, probed)

    for aim in sorted(reached, key=lambda a: (len(reached[a]), a)):
        if aim in covered:
            continue
        # Where the search misses (a rare aim: a FIFO group's visible prefix), the random case that reached it,
        # with every step it can do without left out, is the witness.
        witness = search(profile, aim, pace, seed=seed) or witness_from_case(profile, pace, aim, reached[aim])
        if witness is not None:
            keep(witness)
    # A rule random cases never reached gets a search of its own, aimed at the rule rather than one branch.
    for r in rules_for(profile):
        if r.id in {aim.rule for aim in covered}:
            continue
        witness = None
        for attempt in range(0 if r.id in not_generated else RULE_SEEDS):  # rare rules: a few seeds
            witness = search(profile, r.id, pace, seed=seed + attempt, examples=RULE_EXAMPLES)
            if witness is not None:
                break
        if witness is None:
            catalogue.missing[r.id] = not_generated.get(
                r.id, f"no case of {RULE_SEEDS} x {RULE_EXAMPLES} reached it on a {pace} clock")
        else:
            keep(witness)
    return catalogue


def relabelled(catalogue: Catalogue) -> list[Witness]:
    """The stored witnesses that still reach their aims on today's model. One whose aim has gained a situation
    since (the same rule, operation and answer, now in a named situation) is kept under the aim it reaches now;
    one that reaches neither is left out, for the search to replace."""
    def plain(aim: Aim) -> tuple[str, str, str]:
        return aim.rule, aim.operation, aim.answer.split(" (", 1)[0]

    kept = []
    for witness in catalogue.witnesses:
        try:
            reached = _aims_reached(catalogue.profile, catalogue.pace, witness)
        except Unsupported:
            continue
        if witness.aim in reached:
            kept.append(witness)
            continue
        same = sorted(a for a in reached if plain(a) == plain(witness.aim))
        if same:
            kept.append(Witness(same[0], witness.steps))
    return kept


def _replayed(profile: str, pace: str, steps: Case) -> tuple[Session, set[Aim]]:
    """A witness replayed on the model, judged as a target of that pace is: the session it leaves, and the aims
    it reached."""
    session = Session(judged_model(profile, pace), profile, run_id="witness", case=1, trace=None)
    reached: set[Aim] = set()
    for advance, op in steps:
        if advance:
            session.advance(advance)
        reached |= aims_of(session.execute(op))
    return session, reached


def _covered(profile: str, pace: str, witness: Witness) -> set[Aim]:
    """The aims a witness (before its probes) takes care of. On a virtual clock, where witnesses are cheap and
    serve to kill in-house bugs, only those of its last step, which the probes look at; on a real or moved
    clock, where the catalogue must be short, every aim it reaches on the way."""
    if pace != "virtual":
        return _aims_reached(profile, pace, witness)
    session, _ = _replayed(profile, pace, witness.steps)
    return aims_of(session.steps[-1])


def _aims_reached(profile: str, pace: str, witness: Witness) -> set[Aim]:
    return _replayed(profile, pace, witness.steps)[1]


def with_probes(profile: str, pace: str, witness: Witness) -> Witness:
    """The witness, then a look at what it left. Reaching a rule shows the target took the step; the probes show
    it did the right thing with it: the main queue's attributes (its counts), a receive on each queue (what must
    be visible is returned, what was deleted or moved is not), then a long poll from just before the next
    deadline (the message must not come back early, must come back at the deadline, and the poll must not give
    up early). Profiles without long polls get a short poll before the deadline and one after. Profiles with
    a peek peek first: it shows each visible message's receive count and changes nothing."""
    p = PROFILES[profile]
    plain: dict[str, Any] = {"max_messages": 10} if p.validates_receive_params else {}
    poll = plain | ({"wait_time_seconds": 1} if p.has_long_poll else {})
    session, _ = _replayed(profile, pace, witness.steps)
    queues = list(session.model.queues)
    peek: Case = [(0.0, PeekMessage(queues[-1], 10))] if p.has_peek else []
    steps = witness.steps + [(0.0, GetQueueAttributes(queues[-1]))] + peek + [(0.0, ReceiveMessage(q, **poll))
                                                                             for q in queues]
    # Beyond the tolerance of a real or moved clock, and never a wait a real clock would not sleep. There the poll
    # at the deadline starts early enough to see a message come back early and ends just past the tolerance after
    # it, so that a message coming back late is seen too (a poll's wait is whole seconds: its start is placed).
    margin = 0.001 if pace == "virtual" else 1.0
    at_deadline = poll
    if pace != "virtual" and p.has_long_poll:
        at_deadline = poll | {"wait_time_seconds": PROBE_WAIT}
        margin = PROBE_WAIT - JUDGED_TOLERANCE - PROBE_PAST_TOLERANCE
    # Twice: a standard queue may return a message early once (RCV-AT-LEAST-ONCE), so only a second early return
    # shows a queue that returns every message early; the second probe waits on the deadline the first set.
    for _ in range(2):
        session, _ = _replayed(profile, pace, steps)
        model, now = session.model, session.now
        # The deadlines of receipts still in flight and of releases to come; and those of receipts the witness
        # ended (a purged, deleted or moved message must not come back there either).
        ended = [(s.visible_at, s.queue) for m in model.messages.values() for s in m.states
                 if s.gone is not Gone.NO and s.hidden is Hidden.RECEIPT]
        upcoming = sorted((t, q) for t, q in ended + [
            (t, q) for q in model.queues
            for t in [r.deadline for r in model.receipts(q, now)] + [t for _, t in model.delayed(q, now)]]
            if t - now > margin and (pace == "virtual" or t + margin - now <= REAL_MAX_WAIT))
        if not upcoming:
            break
        deadline, queue = upcoming[0]
        steps.append((round(deadline - margin - now, 6), ReceiveMessage(queue, **at_deadline)))
        if not p.has_long_poll:
            steps.append((round(2 * margin, 6), ReceiveMessage(queue, **plain)))
    return Witness(witness.aim, steps)


# --- storing ------------------------------------------------------------------------------------------------------

def path_for(profile: str, pace: str) -> Path:
    return WITNESS_DIR / f"{profile}-{pace}.json"


def save(catalogue: Catalogue, path: Path | None = None) -> Path:
    path = path or path_for(catalogue.profile, catalogue.pace)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "profile": catalogue.profile, "pace": catalogue.pace, "searched_by": "sqs-conformance witnesses",
        "missing": catalogue.missing,
        "witnesses": [{"aim": w.aim._asdict(), "steps": encode_steps(w.steps)} for w in catalogue.witnesses],
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


def load(profile: str, pace: str, path: Path | None = None) -> Catalogue:
    path = path or path_for(profile, pace)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        witnesses = [Witness(Aim(**w["aim"]), decode_steps(w["steps"])) for w in data["witnesses"]]
        return Catalogue(data["profile"], data["pace"], witnesses, dict(data.get("missing", {})))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise WitnessError(f"{path}: no readable witnesses for {profile} on a {pace} clock ({error}); "
                           f"`sqs-conformance witnesses --profile {profile}` searches them") from None


def pace_of(target: Target) -> str:
    return target.clock.kind if target.clock.kind in PACES else "real"


# --- replaying ----------------------------------------------------------------------------------------------------

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

    def keep(self, rule_id: str, divergence: Divergence, steps: list[Step]) -> None:
        """The rule's case, unless a shorter one is kept already."""
        kept = self.divergent.get(rule_id)
        if kept is None or len(steps) < len(kept[1]):
            self.divergent[rule_id] = (divergence, steps)


def replay(targets: Sequence[Target], catalogue: Catalogue, *, run_id: str, trace: TraceWriter | None,
           case_ids, known: frozenset[str] = frozenset(), early: EarlyReturns | None = None) -> Replayed:
    """Every witness once, on as many targets (independent connections, each its own queues) as there are, so
    that their waits overlap. A case stops where the target's answer leaves the model unable to follow it. Early
    returns are counted in `early` (the run's, shared with its search), else across the witnesses alone."""
    pending: queue.SimpleQueue[Witness] = queue.SimpleQueue()
    for witness in _distinct(catalogue.witnesses):
        pending.put(witness)
    early = early or EarlyReturns()  # shared by the jobs

    def work(target: Target) -> Replayed:
        mine = Replayed(early=early)
        while True:
            try:
                witness = pending.get_nowait()
            except queue.Empty:
                return mine
            _replay_one(target, catalogue.profile, catalogue.pace, witness, mine, run_id, trace, case_ids, known)

    with ThreadPoolExecutor(len(targets), thread_name_prefix="witness") as pool:
        results = list(pool.map(work, targets))
    total = Replayed()
    for r in results:
        total.tallies.merge(r.tallies)
        total.cases += r.cases
        total.steps += r.steps
        for rule_id, (divergence, steps) in r.divergent.items():
            total.keep(rule_id, divergence, steps)
    return total


def _replay_one(target: Target, profile: str, pace: str, witness: Witness, into: Replayed, run_id: str,
                trace: TraceWriter | None, case_ids, known: frozenset[str]) -> None:
    """The witness on the target; each divergence it shows is kept, in as few steps as show it. On a virtual
    clock a replay costs no waiting, so the case is replayed without each step in turn (`fewest_steps`): the
    probes that saw nothing, and any step the target did not need to go wrong, are left out. Where another
    rule's divergence cut the witness short, or answered in its aim's place, so that its rule was never decided,
    the aim is tried again other ways (`_other_ways`), each on fresh queues."""
    def play(case: Case, counted: bool = True) -> tuple[list[tuple[Divergence, list[Step]]], list[Step]]:
        return replay_case(target, profile, case, into, run_id, trace, next(case_ids), known, counted)

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
    if _decides(witness.rule, steps):
        return
    for case in _other_ways(profile, pace, witness, [s.index for s in steps if s.divergences]):
        shown, steps = play(case)
        keep(shown)
        if _decides(witness.rule, steps):
            return


def _decides(rule_id: str, steps: list[Step]) -> bool:
    """Whether some step of a replay decided the rule (`Verdict.decided`)."""
    return any(rule_id in s.verdict.decided for s in steps)


def _other_ways(profile: str, pace: str, witness: Witness, diverged: list[int]) -> Iterator[Case]:
    """Other cases that reach the witness's rule on the model: without the first step that diverged on the target
    (or the queue attribute it diverged on), then with every batch sent as single calls, the simplest operation
    first. A masked rule (a batch rejected for another reason hides an expired handle) shows through one."""
    model_steps = _replayed(profile, pace, witness.steps)[0].steps
    tried: list[Case] = [witness.steps]
    first = next((i for i in diverged if i < len(model_steps)), None)
    candidates: list[Case] = []
    if first is not None:
        if isinstance(model_steps[first].op, CreateQueue):
            candidates += list(_without_each_attribute(model_steps, first))
        else:
            candidates.append(_without(model_steps, first))
    candidates.append(_unbatched(profile, witness.steps))
    for case in candidates:
        if case in tried:
            continue
        tried.append(case)
        if any(aim.rule == witness.rule for aim in _replayed(profile, pace, case)[1]):
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
    return not batch_errors([e.id for e in entries], PROFILES[profile].batch_max_entries)


def replay_case(target: Target, profile: str, case: Case, into: Replayed, run_id: str,
                trace: TraceWriter | None, case_id: int, known: frozenset[str], counted: bool = True
                ) -> tuple[list[tuple[Divergence, list[Step]]], list[Step]]:
    """The divergences (of rules not `known`) a case shows on the target, each with the steps up to it, and every
    step it took. The case stops where the target's answer leaves the model unable to follow it. Its early returns
    count in the run's unless it is not `counted` (a replay of a case already counted)."""
    target.reset()
    into.cases += 1
    session = Session(target, profile, run_id=run_id, case=case_id, trace=trace, tallies=into.tallies,
                      early=into.early.case(counted))
    shown: list[tuple[Divergence, list[Step]]] = []
    for step in play(session, case):
        into.steps += 1
        shown += [(divergence, list(session.steps)) for divergence in step.divergences if divergence.rule not in known]
    return shown, session.steps


def stale(catalogue: Catalogue) -> list[str]:
    """What no longer holds of stored witnesses on today's model: each must still reach its aim (a model change
    can move a rule off its witness; `sqs-conformance witnesses` searches them again)."""
    problems = []
    for witness in catalogue.witnesses:
        try:
            reached = _aims_reached(catalogue.profile, catalogue.pace, witness)
        except Unsupported as error:  # the model refuses an operation of it: outside the profile now
            problems.append(f"{witness.aim}: the model refuses a step of its witness ({error})")
            continue
        if witness.aim not in reached:
            problems.append(f"{witness.aim}: its witness no longer reaches it")
    return problems


def _distinct(witnesses: list[Witness]) -> list[Witness]:
    """One replay per distinct case, longest wait first, so that the slowest start at once."""
    seen: dict[str, Witness] = {}
    for w in witnesses:
        seen.setdefault(json.dumps(encode_steps(w.steps)), w)
    return sorted(seen.values(), key=lambda w: -w.waiting)


def profiles_and_paces() -> list[tuple[str, str]]:
    """Targets on a real or shifted clock are SQS endpoints and emulators: only their profiles need those paces."""
    from adapters.endpoint import EndpointTarget

    return [(profile, pace) for profile in sorted(PROFILES) for pace in PACES
            if pace == "virtual" or profile in EndpointTarget.profiles]
