"""The index of settled and parked messages (model/settled.py) changes what an operation costs, never what the
model decides: a checker with the index and one that looks at every message (`Model(indexed=False)`), given the
same operations and answers (tests/model/differential.py), on a standard queue and on a FIFO queue, whose receives
walk each group only up to where it stops or reaches.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from sqs_conformance.model import Model
from sqs_conformance.model.profiles import Profile
from sqs_conformance.model.state import Timing
from tests.model.differential import FIFO_STEPS, STEPS, drive


def _index_and_full_look(timing: Timing, index_from: int = 0):
    """The full look as the reference; the fast path off in both, so that only the index differs."""
    def models(profile: Profile) -> tuple[Model, Model]:
        return (Model(profile, timing, indexed=False, fast=False),
                Model(profile, timing, index_from=index_from, fast=False))
    return models


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


QUOTAS = st.sampled_from([None, 3])


# Indexed from the start, or from its fourth message on (the index made mid-run from the queue's messages).
INDEX_FROM = st.sampled_from([0, 0, 4])


@SETTINGS
@given(STEPS, QUOTAS, INDEX_FROM)
def test_the_index_decides_as_a_full_look_on_an_exact_clock(steps, quota, index_from):
    drive(_index_and_full_look(Timing(), index_from), steps, quota)


@SETTINGS
@given(STEPS, QUOTAS, st.sampled_from([0.0, 0.5]), st.sampled_from([0.02, 0.3]), INDEX_FROM)
def test_the_index_decides_as_a_full_look_on_a_real_clock(steps, quota, tolerance, latency, index_from):
    drive(_index_and_full_look(Timing(windowed=True, tolerance=tolerance), index_from), steps, quota, latency)


@SETTINGS
@given(FIFO_STEPS, QUOTAS, INDEX_FROM)
def test_the_fifo_group_walk_decides_as_a_full_look_on_an_exact_clock(steps, quota, index_from):
    drive(_index_and_full_look(Timing(), index_from), steps, quota, profile_name="sqs-fifo")


@SETTINGS
@given(FIFO_STEPS, QUOTAS, st.sampled_from([0.0, 0.5]), st.sampled_from([0.02, 0.3]), INDEX_FROM)
def test_the_fifo_group_walk_decides_as_a_full_look_on_a_real_clock(steps, quota, tolerance, latency, index_from):
    drive(_index_and_full_look(Timing(windowed=True, tolerance=tolerance), index_from), steps, quota, latency,
          profile_name="sqs-fifo")
