"""Concurrent cases on a virtual clock drawn by Hypothesis: the workload and the interleaving are its choices, so a
failing case is the same every time it is played and Hypothesis shrinks it (fewer rounds, clients doing less, a
simpler order), before the checker's own reduction of the history.

One Hypothesis search per new rule: a search stops at the first failing case it shrinks, so the next one goes on
with the rules already found known (as the single-client runner's rounds do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.conformance.concurrent.checker import HistoryVerdict, check_history
from sqs_conformance.conformance.concurrent.history import History
from sqs_conformance.conformance.hypothesis_hooks import shrinking_at_most

T = TypeVar("T")

SHRINK_SECONDS = 20.0  # Hypothesis' shrinking of one rule's case, at most (each try plays a case on the target)


class HypothesisDraw:
    def __init__(self, data: st.DataObject) -> None:
        self._data = data

    def choice(self, options: tuple[T, ...]) -> T:
        return self._data.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self._data.draw(st.integers(low, high))


class _Stopped(KeyboardInterrupt):
    """The target failed (not a verdict): Hypothesis would shrink an ordinary exception; this one ends the search
    at once, and the error goes on as it was."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _Shown(Exception):
    """A drawn case broke a rule not known yet: Hypothesis shrinks the case that raises it."""

    def __init__(self, rule_id: str) -> None:
        super().__init__(rule_id)
        self.rule = rule_id


def drawn_cases(play: Callable[[HypothesisDraw], History], count: int, seed: int, budget: int,
                seen: Callable[[History, HistoryVerdict], None]) -> list[tuple[str, History, HistoryVerdict]]:
    """Up to `count` cases, each `play`ed with Hypothesis' draws and judged; `seen` gets every case generated (not
    the replays of its shrinking). The shrunk case of each rule broken, in the order found."""
    found: list[tuple[str, History, HistoryVerdict]] = []
    known: set[str] = set()
    played = 0
    last: dict[str, tuple[History, HistoryVerdict]] = {}  # the latest case that showed each new rule
    while played < count:

        @settings(max_examples=count - played, database=None, deadline=None, phases=(Phase.generate, Phase.shrink),
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False, verbosity=Verbosity.quiet)
        @hypothesis_seed(seed + len(found))
        @given(st.data())
        def case(data: st.DataObject) -> None:
            nonlocal played
            shrinking = bool(last)  # Hypothesis stops generating at a search's first failure, then shrinks it
            played += not shrinking
            try:
                history = play(HypothesisDraw(data))
            except TargetError as error:
                raise _Stopped(error) from None
            verdict = check_history(history, budget)
            if not shrinking:  # a shrinking step replays a variant of a case already seen
                seen(history, verdict)
            new = sorted(set(verdict.rules_diverging()) - known)
            if new:
                last[new[0]] = (history, verdict)
                raise _Shown(new[0])

        try:
            with shrinking_at_most(SHRINK_SECONDS):
                case()
            return found
        except _Stopped as stopped:
            raise stopped.error from None
        except _Shown as shown:
            history, verdict = last[shown.rule]
            last.clear()
            found.append((shown.rule, history, verdict))
            known.add(shown.rule)
    return found
