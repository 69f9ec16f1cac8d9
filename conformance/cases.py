"""Cases on disk: one format for the stored witnesses and for the minimal cases a run finds.

A case is its steps: `[{"advance": seconds to let pass first, "operation": the operation in model space}, ...]`.
A witness catalogue stores each witness's steps so; a minimal case file (`findings/RUN/RULE.json`, what `confirm`
replays) stores them with the rule, the profile, the target it was found on and what its run knew.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqs_conformance.model.codec import decode, encode
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.values import CreateQueue, Operation, ReceiveMessage, SetQueueAttributes

Case = list[tuple[float, Operation]]  # (seconds to advance first, operation in model space)


LONGEST_POLL = max(p.wait_max for p in PROFILES.values())  # seconds: a longer wait is refused at once


def waiting(case: Case) -> float:
    """The seconds a case lets pass between its steps."""
    return sum(advance for advance, _ in case)


def longest_time(case: Case, longest_wait: float = math.inf) -> float:
    """The most a case can take on a real clock: its waiting, and every receive's whole long poll (the receive's
    own wait, else its queue's), as a receive that finds nothing takes. `longest_wait`: the most one wait takes
    (on a moved clock a long wait is a jump, whose real time is the target's settling)."""
    queue_waits: dict[str, float] = {}
    polls = 0.0
    for _, op in case:
        if isinstance(op, (CreateQueue, SetQueueAttributes)) and "ReceiveMessageWaitTimeSeconds" in op.attributes:
            queue_waits[op.queue] = _poll_seconds(op.attributes["ReceiveMessageWaitTimeSeconds"])
        elif isinstance(op, ReceiveMessage):
            own = op.wait_time_seconds
            polls += _poll_seconds(own) if own is not None else queue_waits.get(op.queue, 0.0)
    return sum(min(advance, longest_wait) for advance, _ in case) + polls


def _poll_seconds(value: object) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return seconds if 0 <= seconds <= LONGEST_POLL else 0.0


class CaseError(ValueError):
    """A case file that cannot be read; the message names the file."""


def encode_steps(steps: Case) -> list[dict[str, Any]]:
    return [{"advance": advance, "operation": encode(op)} for advance, op in steps]


def decode_steps(data: list[dict[str, Any]]) -> Case:
    return [(float(step["advance"]), decode(step["operation"])) for step in data]


@dataclass
class FoundCase:
    """A minimal case a run found: the steps up to the one that diverged under `rule`."""

    rule: str
    profile: str
    found_on: str
    steps: Case
    # Rules whose early returns the run had found not rare: one early return in the case diverged there
    early_not_rare: list[str] = field(default_factory=list)
    path: Path | None = None  # where it was read from

    @property
    def waiting(self) -> float:
        return waiting(self.steps)

    def to_json(self) -> str:
        return json.dumps({"rule": self.rule, "profile": self.profile, "found_on": self.found_on,
                           "early_returns_not_rare": sorted(self.early_not_rare),
                           "steps": encode_steps(self.steps)}, indent=1)

    @classmethod
    def load(cls, path: Path) -> FoundCase:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            case = cls(data["rule"], data["profile"], data.get("found_on", "?"), decode_steps(data["steps"]),
                       list(data.get("early_returns_not_rare", [])), path)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CaseError(f"{path}: not a minimal case file ({error})") from None
        if case.profile not in PROFILES:
            raise CaseError(f"{path}: unknown profile {case.profile!r}")
        return case
