"""Witness catalogues: what a witness is (an aim and the case that reaches it), and where the catalogues
of each profile and pace are stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from sqs_conformance.adapters.base import Target
from sqs_conformance.conformance.cases import Case, decode_steps, encode_steps, waiting
from sqs_conformance.conformance.session import Step
from sqs_conformance.model.outcomes import answer_kind
from sqs_conformance.model.profiles import PROFILES

WITNESS_DIR = Path(__file__).parent  # the catalogues, one JSON file per profile and pace, beside this package
PACES = ("virtual", "shifted", "real")  # a target's clock kind: what its witnesses may wait and ask


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
        return waiting(self.steps)


@dataclass
class Catalogue:
    """A profile's witnesses for one pace, and the rules no witness was found for (with the reason)."""

    profile: str
    pace: str
    witnesses: list[Witness]
    missing: dict[str, str] = field(default_factory=dict)


# A witness of the moved-clock pace none of whose waits is longer than this needs no move: it is played on a
# connection that never moves the server's clock (`Target.held_connection`), its waits slept, beside others.
HELD_WAIT_MAX = 1.5


def held_and_moving(catalogue: Catalogue) -> tuple[Catalogue, Catalogue]:
    """The catalogue's witnesses that need no move of the clock, and those that do."""
    held: list[Witness] = []
    moving: list[Witness] = []
    for w in catalogue.witnesses:
        (held if all(advance <= HELD_WAIT_MAX for advance, _ in w.steps) else moving).append(w)
    return replace(catalogue, witnesses=held), replace(catalogue, witnesses=moving)


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


def profiles_and_paces() -> list[tuple[str, str]]:
    """Targets on a real or shifted clock are SQS endpoints and emulators: only their profiles need those paces."""
    from sqs_conformance.adapters.endpoint import EndpointTarget

    return [(profile, pace) for profile in sorted(PROFILES) for pace in PACES
            if pace == "virtual" or profile in EndpointTarget.profiles]
