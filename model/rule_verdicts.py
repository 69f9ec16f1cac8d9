"""What is said of one rule over many steps: the one vocabulary of `run`'s table, its summary JSON, the emulator
matrix, the report's matrix and JUnit. A rule conforms only where some step could have caught it broken."""

from __future__ import annotations

from enum import Enum


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
