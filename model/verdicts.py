"""The suite's two closed vocabularies: what one step showed (a trace line's `verdict`), and what is said of one
rule over many steps (`run`'s table, its summary JSON, the emulator matrix, the report's matrix and JUnit). A rule
conforms only where some step could have caught it broken."""

from __future__ import annotations

from enum import Enum


class StepVerdict(str, Enum):
    OK = "ok"  # an answer the model permits
    NOTE = "note"  # permitted, and counted (an early redelivery the at-least-once allowance forgives)
    UNKNOWN = "unknown"  # no answer came: the model keeps every world the step may have left
    DIVERGENCE = "divergence"  # an answer the model does not permit
    BEHIND = "behind"  # after a step that led the model astray: it shows what it says, and decides nothing
    # A concurrent step in a part of its history that the checker could not order within its budget: judged
    # neither way (never a divergence the search did not prove)
    UNORDERED = "unordered"


class RuleVerdict(str, Enum):
    DIVERGES = "diverges"  # some step showed it broken
    CONFORMS = "conforms"  # some step could have caught it broken, and none did
    UNDECIDED = "undecided"  # exercised only where any answer was permitted (or none came): no verdict
    NOT_EXERCISED = "not exercised"


def rule_verdict(exercised: int, decisive: int, diverging: int) -> RuleVerdict:
    """From a rule's step counts (`decisive` counts the diverging steps too: each decided the rule)."""
    if diverging:
        return RuleVerdict.DIVERGES
    if decisive:
        return RuleVerdict.CONFORMS
    return RuleVerdict.UNDECIDED if exercised else RuleVerdict.NOT_EXERCISED
