"""Early redeliveries: permitted rarely (docs/evidence.md row 'at-least-once': count it, do not fail on one), so what
counts against a target is one that is not rare. Two of one rule in one case are not; nor is one in a case when
the same rule returned messages early in many other cases of the run: a queue whose every timeout is short shows
one early return per case, and must not pass because no single case happened to show two."""

from __future__ import annotations

import math
import threading
from collections import Counter

from sqs_conformance.model.outcomes import Divergence, Verdict

IN_ONE_CASE = 2  # early returns of one rule in one case that are not rare
IN_A_RUN = 3  # cases of a run with an early return of one rule, at the least, that are not rare
SHARE_OF_A_RUN = 0.1  # ... and this share of the cases that decided the rule


class EarlyReturns:
    """One run's count, shared by its cases (and its concurrent jobs): per rule, the cases that decided it and the
    cases in which a message of it came back early."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.deciding: Counter[str] = Counter()
        self.early: Counter[str] = Counter()

    def case(self, counted: bool = True) -> CaseEarlyReturns:
        """A new case's count. One not `counted` (a replay of a case already counted: Hypothesis shrinking a
        failure, a witness trimmed) adds nothing to the run's count, so that one rare early return replayed many
        times stays one; it still diverges on a rule whose early returns the counted cases already showed not rare,
        so that a replay of such a divergence shows it again."""
        return CaseEarlyReturns(self, counted)

    def systematic(self, rule_id: str) -> bool:
        early = self.early[rule_id]
        return early >= max(IN_A_RUN, math.ceil(SHARE_OF_A_RUN * self.deciding[rule_id]))

    def not_rare(self) -> list[str]:
        """The rules whose early returns this run has shown not rare: what a case found here needs to be judged
        again as it was (a minimal case file carries them)."""
        with self._lock:
            return sorted(rule_id for rule_id in self.early if self.systematic(rule_id))

    @classmethod
    def known_not_rare(cls, rule_ids: list[str]) -> EarlyReturns:
        """A count that starts where a run had found these rules' early returns not rare."""
        count = cls()
        for rule_id in rule_ids:
            count.early[rule_id] = count.deciding[rule_id] = IN_A_RUN
        return count


class CaseEarlyReturns:
    """One case's count, feeding its run's."""

    def __init__(self, run: EarlyReturns, counted: bool = True) -> None:
        self.run = run
        self.counted = counted
        self.noted: Counter[str] = Counter()
        self.decided: set[str] = set()

    def divergences(self, verdict: Verdict) -> list[Divergence]:
        """The step's early returns that are not rare, each as a divergence of its rule."""
        return self.not_rare(verdict.decided, verdict.outcome.notes)

    def not_rare(self, decided: frozenset[str], notes: tuple[Divergence, ...]) -> list[Divergence]:
        """Of a step that `decided` these rules and noted these early returns: those not rare."""
        if not notes and decided <= self.decided:
            return []  # nothing new to count (most steps of a long history)
        found = []
        with self.run._lock:
            for rule_id in decided | {n.rule for n in notes}:
                if rule_id not in self.decided:
                    self.decided.add(rule_id)
                    self.run.deciding[rule_id] += self.counted
            for note in notes:
                self.noted[note.rule] += 1
                if self.noted[note.rule] == 1:
                    self.run.early[note.rule] += self.counted
                expected = f"{note.expected} (a redelivery may happen rarely)"
                if self.noted[note.rule] >= IN_ONE_CASE:
                    found.append(Divergence(note.rules, expected, f"{note.observed}, redelivered early "
                                            f"{self.noted[note.rule]} times in one case", note.message_ids))
                elif self.run.systematic(note.rule):
                    found.append(Divergence(note.rules, expected, f"{note.observed}; early in "
                                            f"{self.run.early[note.rule]} of the {self.run.deciding[note.rule]} "
                                            f"cases of this run that decided it", note.message_ids))
        return found
