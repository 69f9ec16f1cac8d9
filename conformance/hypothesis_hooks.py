"""The places the suite reaches into Hypothesis beyond its public API, kept here, each tested
(tests/conformance/test_engine.py): if a release moves them, this module is what to fix."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


@contextmanager
def shrinking_at_most(seconds: float | None) -> Iterator[None]:
    """Hypothesis has no setting for how long it shrinks; its engine reads the module constant
    MAX_SHRINKING_SECONDS each time it starts shrinking. Should the constant go, the cap is not applied."""
    from hypothesis.internal.conjecture import engine

    if seconds is None or not hasattr(engine, "MAX_SHRINKING_SECONDS"):
        yield
        return
    original = engine.MAX_SHRINKING_SECONDS
    setattr(engine, "MAX_SHRINKING_SECONDS", seconds)  # noqa: B010 (an int there; a float works as well)
    try:
        yield
    finally:
        setattr(engine, "MAX_SHRINKING_SECONDS", original)  # noqa: B010


def is_final_replay() -> bool:
    """Whether the example being run is Hypothesis' last replay of a failing case (the minimal one it reports):
    its trace lines are marked `final`. False outside a test."""
    from hypothesis.control import current_build_context

    try:
        return current_build_context().is_final
    except Exception:  # no build context: not under Hypothesis
        return False


class QuickDraws:
    """Draws from a test's `st.data()` making the choices `data.draw` makes, without its bookkeeping: a copy of
    Python's global random state before and after each draw (to warn of a strategy that uses it, which the suite's
    never do) and a label kept for the printed example: a draw of a small integer takes some 62-67 us through
    `data.draw` and 23-24 us this way (Hypothesis 6.155, benchmarks/throughput.py prints both). The choices, and
    so the search and its shrinking, are the same. Where Hypothesis prints the example (its final replay of a
    failing case) use `data` itself, which labels each draw; should a release drop the attribute this reads, each
    draw goes through `data.draw`."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self._draw = getattr(getattr(data, "conjecture_data", None), "draw", None)

    def draw(self, strategy: st.SearchStrategy[T], label: Any = None) -> T:
        if self._draw is None:
            return self.data.draw(strategy, label=label)
        return self._draw(strategy)
