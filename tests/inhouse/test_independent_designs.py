"""Two queues written independently of the suite, from the documents alone (a SQLite table with a visible-at
column, an append-only event log), each with bugs written before the suite ran on them. The correct designs must
conform: a divergence there is a false alarm of the suite. How many bugs the suite kills is measured by
`benchmarks/mutants.py --design sqliteq|eventlogq`, not asserted here."""

import pytest

from benchmarks.reference_designs.eventlogq import mutants as eventlogq
from benchmarks.reference_designs.eventlogq.target import EventLogQueueTarget
from benchmarks.reference_designs.sqliteq import mutants as sqliteq
from benchmarks.reference_designs.sqliteq.target import SqliteQueueTarget
from sqs_conformance.conformance.runner import RunOptions, run

DESIGNS = {"sqliteq": (SqliteQueueTarget, sqliteq.MUTANTS), "eventlogq": (EventLogQueueTarget, eventlogq.MUTANTS)}


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_the_correct_design_conforms_to_the_witnesses_and_a_search(design):
    target_class, _ = DESIGNS[design]
    target = target_class("sqs-standard")
    try:
        result = run(target, "sqs-standard", RunOptions(examples=30, seed=2, steps_per_case=30))
    finally:
        target.close()
    assert result.conforms, {rule: finding.divergence for rule, finding in result.findings.items()}


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_each_design_has_at_least_twenty_distinct_mutants_of_itself(design):
    target_class, mutants = DESIGNS[design]
    names = [m.name for m in mutants]
    assert len(names) >= 20 and len(set(names)) == len(names)
    assert all(issubclass(m.target, target_class) and m.target is not target_class for m in mutants)
