"""The Redis design's mutants: each a plausible bug, each killed by the suite."""

import pytest

from adapters.redisq import mutants
from conformance.runner import run
from model.rules import rules_for


def test_a_mutant_edit_that_no_longer_applies_is_an_error():
    with pytest.raises(ValueError, match="matches 0 places"):
        mutants.edited("local a = 1", "local b = 2", "local b = 3")
    with pytest.raises(ValueError, match="matches 2 places"):
        mutants.edited("x x", "x", "y")


def test_the_catalogue_has_at_least_25_distinct_mutants_over_every_profile():
    names = [m.name for m in mutants.MUTANTS]
    assert len(names) >= 25 and len(set(names)) == len(names)
    assert {m.profile for m in mutants.MUTANTS} == {"sqs-standard", "sqs-fifo", "sqs-2008", "smq"}
    assert all(m.breaks in {r.id for r in rules_for(m.profile)} for m in mutants.MUTANTS)


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_mutant_is_killed_by_the_witnesses_alone_in_at_most_six_steps(shared_redis, mutant):
    """Issue 6's goals, but for time (benchmarks/mutants.py measures it): every mutant killed, with a case of at
    most six steps. The witnesses alone must do it; a mutant only the search kills is a gap of the witnesses."""
    target = mutant.target(mutant.profile)
    try:
        result = run(target, mutant.profile, seed=1, search=False)
    finally:
        target.close()
    assert result.findings, f"{mutant.name} survives the witnesses: {mutant.bug}"
    assert min(len(f.steps) for f in result.findings.values()) <= 6, {r: len(f.steps) for r, f in
                                                                      result.findings.items()}
