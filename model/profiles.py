"""Profiles: one model, four services. A profile is parameters plus small behavioural switches."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from sqs_conformance.model.rules import FIFO, SMQ, SQS_2008, STANDARD, rules_for


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    fifo: bool
    visibility_min: int
    visibility_max: int
    visibility_default: int = 30
    # 12-hour ceiling counted from the receive (None: no cumulative ceiling documented).
    ceiling_seconds: int | None = 43200
    max_messages_max: int = 10
    wait_max: int = 20
    delay_max: int = 900
    batch_max_entries: int = 10
    inflight_quota: int = 120_000
    attribute_propagation_seconds: float = 60.0
    dedup_window_seconds: float = 300.0
    attempt_id_window_seconds: float = 300.0
    purge_interval_seconds: float = 60.0
    # Behavioural switches.
    has_batches: bool = True
    has_delay: bool = True
    has_redrive: bool = True
    has_long_poll: bool = True
    has_peek: bool = False
    has_purge: bool = True
    validates_receive_params: bool = True
    lock_unreceived: bool = False  # sqs-2008: a change on a never-received message locks it
    change_returns_new_handle: bool = False  # smq: a change hands out a new handle, the old one stops working
    stale_handles_work: bool = True  # sqs: an old handle still addresses the message
    at_least_once: bool = False
    error_dialect: str = "sqs"  # which error codes the service speaks: "sqs" or "smq"
    # The ids of the rules the profile has: a field, set from its name, as a receive reads it a dozen times.
    rule_ids: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rule_ids", _rule_ids(self.name))


@cache
def _rule_ids(profile_name: str) -> frozenset[str]:
    return frozenset(r.id for r in rules_for(profile_name))


PROFILES: dict[str, Profile] = {
    STANDARD: Profile(name=STANDARD, fifo=False, visibility_min=0, visibility_max=43200, at_least_once=True),
    FIFO: Profile(name=FIFO, fifo=True, visibility_min=0, visibility_max=43200),
    SQS_2008: Profile(
        name=SQS_2008, fifo=False, visibility_min=0, visibility_max=43200, ceiling_seconds=None,
        has_batches=False, has_delay=False, has_redrive=False, has_long_poll=False, has_peek=True,
        has_purge=False, lock_unreceived=True, at_least_once=True,
    ),
    SMQ: Profile(
        name=SMQ, fifo=False, visibility_min=1, visibility_max=43200, ceiling_seconds=None,
        has_batches=False, has_delay=False, has_redrive=False, has_long_poll=False, has_peek=True,
        has_purge=False, validates_receive_params=False, change_returns_new_handle=True,
        stale_handles_work=False, error_dialect="smq",
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(sorted(PROFILES))}") from None
