"""Witnesses replayed on the model, judged as the targets of their pace are: the aims a case reaches, and
whether stored witnesses still reach theirs.
"""

from __future__ import annotations

from sqs_conformance.adapters.base import Unsupported, VirtualClock
from sqs_conformance.adapters.endpoint import DEFAULT_TOLERANCE
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.cases import Case
from sqs_conformance.conformance.session import JUDGED_LATENCY, Schedule, Session, timed_step
from sqs_conformance.conformance.witnesses.catalogue import Aim, Catalogue, Witness, aims_of
from sqs_conformance.model.values import Operation, Response

# How targets of each pace are judged: a real or moved clock's requests take time, and the checker gives every
# deadline the endpoints' tolerance band. Witnesses are searched, trimmed and checked on a model judged the same
# way, so an aim they reach stays decisive there (one a millisecond past an edge would not).
JUDGED_TOLERANCE = max(DEFAULT_TOLERANCE.values())
# A busy emulator's requests take up to this long (LocalStack's, a dozen of them on two cores: 50-100 ms). A witness
# of a real or moved clock reaches its aim with requests this slow too, so that its aim stays past the edge there.
BUSY_LATENCY = 0.1


class _JudgedClock(VirtualClock):
    """Virtual time the checker reads as a real clock's: windows and a tolerance band, nothing slept."""

    kind = "windowed"


class JudgedModel(ModelTarget):
    """The model as a target of a real or moved clock: each request takes `latency`, taking effect halfway."""

    tolerance = JUDGED_TOLERANCE

    def __init__(self, profile: str, latency: float = JUDGED_LATENCY) -> None:
        super().__init__(profile)
        self.clock = _JudgedClock()
        self.latency = latency

    def execute(self, op: Operation) -> Response:
        self.clock.advance(self.latency / 2)
        response = super().execute(op)
        self.clock.advance(self.latency / 2)
        return response

    def reset(self) -> None:
        super().reset()
        self.clock = _JudgedClock()


def judged_model(profile: str, pace: str) -> ModelTarget:
    """The model as the target a witness of this pace is searched and checked on."""
    return ModelTarget(profile) if pace == "virtual" else JudgedModel(profile)


class _InWindows(JudgedModel):
    """The model judged as a real target is, each request invoked and answered when a target's was (a long poll of
    the model's own may answer later), its checker given that target's tolerance."""

    def __init__(self, profile: str, windows: list[tuple[float, float]], tolerance: float) -> None:
        super().__init__(profile)
        self.tolerance = tolerance
        self._windows = iter(windows)

    def execute(self, op: Operation) -> Response:
        invoke, complete = next(self._windows)
        self.clock.advance(max(0.0, invoke - self.clock.now()))
        response = ModelTarget.execute(self, op)
        self.clock.advance(max(0.0, complete - self.clock.now()))
        return response


def decided_in_windows(profile: str, witness: Witness, windows: list[tuple[float, float]], tolerance: float) -> bool:
    """Whether the model reaches the witness's aim with each request taking the window (invoke, complete) a target's
    took: where it does not, those windows alone leave the aim undecided, whatever the target answered."""
    return witness.aim in replayed_on_model(profile, "real", witness.steps, _InWindows(profile, windows, tolerance))[1]


def replayed_on_model(profile: str, pace: str, steps: Case, model: ModelTarget | None = None
                      ) -> tuple[Session, set[Aim]]:
    """A witness replayed on the model (`model`, else the model judged as a target of that pace is): the session
    it leaves, and the aims it reached."""
    session = Session(model or judged_model(profile, pace), profile, run_id="witness", case=1, trace=None)
    schedule = Schedule(session) if pace == "shifted" else None  # a moved clock's run keeps a case to its plan
    reached: set[Aim] = set()
    for advance, op in steps:
        reached |= aims_of(timed_step(session, schedule, advance, op))
    return session, reached


def aims_covered(profile: str, pace: str, witness: Witness) -> set[Aim]:
    """The aims a witness (before its probes) takes care of. On a virtual clock, where witnesses are cheap and
    serve to kill in-house bugs, only those of its last step, which the probes look at; on a real or moved
    clock, where the catalogue must be short, every aim it reaches on the way."""
    if pace != "virtual":
        return aims_reached(profile, pace, witness)
    session, _ = replayed_on_model(profile, pace, witness.steps)
    return aims_of(session.steps[-1])


def aims_reached(profile: str, pace: str, witness: Witness) -> set[Aim]:
    return reached_steadily(profile, pace, witness.steps)


def reached_steadily(profile: str, pace: str, steps: Case) -> set[Aim]:
    """The aims a case reaches on the model judged as targets of its pace are; on a real or moved clock, those it
    also reaches with requests as slow as a busy emulator's (BUSY_LATENCY): one nearer an edge than that would
    leave a run on such a target undecided."""
    reached = replayed_on_model(profile, pace, steps)[1]
    if pace != "virtual" and reached:
        reached &= reached_when_busy(profile, pace, steps)
    return reached


def reached_when_busy(profile: str, pace: str, steps: Case) -> set[Aim]:
    """The aims a case reaches with requests as slow as a busy emulator's (BUSY_LATENCY), played as a run on a
    clock of `pace` plays it."""
    return replayed_on_model(profile, pace, steps, JudgedModel(profile, BUSY_LATENCY))[1]


def stale(catalogue: Catalogue) -> list[str]:
    """What no longer holds of stored witnesses on today's model: each must still reach its aim (a model change
    can move a rule off its witness; `sqs-conformance witnesses` searches them again)."""
    problems = []
    for witness in catalogue.witnesses:
        try:
            reached = aims_reached(catalogue.profile, catalogue.pace, witness)
        except Unsupported as error:  # the model refuses an operation of it: outside the profile now
            problems.append(f"{witness.aim}: the model refuses a step of its witness ({error})")
            continue
        if witness.aim not in reached:
            problems.append(f"{witness.aim}: its witness no longer reaches it")
    return problems
