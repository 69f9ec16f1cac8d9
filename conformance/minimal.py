"""A run's minimal case of each rule: the least, in the order the reports use too (`MINIMAL_CASE_ORDER`), of every
case that showed the rule's divergence, whichever way it was played (witnesses, search, shrinking, trimming) and in
whichever job. So `run`, its findings and the report show the same case for a rule: one a real clock replays before
one only exact time shows, then the fewest steps, then the least waiting, then the first seen."""

from __future__ import annotations

import threading

from sqs_conformance.conformance.session import Step
from sqs_conformance.model import Divergence
from sqs_conformance.model.trace_format import MINIMAL_CASE_ORDER

Key = tuple[float, ...]


def case_key(step: Step, wall_invoke: float, exact_timing_only: bool) -> Key:
    fields = {"exact_timing_only": exact_timing_only, "step": step.index, "invoke": step.invoke,
              "invoke_wall": wall_invoke}
    return tuple(fields[name] for name in MINIMAL_CASE_ORDER)


class MinimalCases:
    """Offered each step that reports a divergence, with its case's steps so far; keeps each rule's least."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a run's jobs and witness connections offer from their threads
        self._least: dict[str, tuple[Key, Divergence, list[Step], bool]] = {}  # and whether exact timing only

    def offer(self, step: Step, steps: list[Step], wall_invoke: float, exact_timing_only: bool = False) -> None:
        key = case_key(step, wall_invoke, exact_timing_only)
        with self._lock:
            for divergence in step.reported:
                kept = self._least.get(divergence.rule)
                if kept is None or key < kept[0]:
                    self._least[divergence.rule] = (key, divergence, list(steps), exact_timing_only)

    def least(self, rule_id: str) -> tuple[Divergence, list[Step]] | None:
        """The rule's divergence and its minimal case's steps, up to the step that showed it; None if none was seen."""
        with self._lock:
            kept = self._least.get(rule_id)
        return None if kept is None else (kept[1], kept[2])

    def hard_to_replay(self, rule_id: str, waiting: float) -> bool:
        """Whether a real clock would struggle with the rule's minimal case: it shows only where time is exact, or
        it waits longer than `waiting` seconds before the step that shows it."""
        with self._lock:
            kept = self._least.get(rule_id)
        return kept is not None and (kept[3] or kept[2][-1].invoke > waiting)
