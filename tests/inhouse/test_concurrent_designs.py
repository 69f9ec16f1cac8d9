"""The in-house designs under 8 concurrent clients: the correct ones conform (a divergence there is a false alarm of
the checker), a race each author wrote is caught. How fast, and how many of all the races, is measured by
benchmarks/races.py, not asserted here."""

import pytest

from benchmarks.reference_designs.pgq.target import PostgresQueue
from benchmarks.reference_designs.pgq.variants import NoRowLocks
from benchmarks.reference_designs.redisq.races import RACES
from benchmarks.reference_designs.redisq.target import RedisQueueTarget
from benchmarks.reference_designs.spoolq.target import SpoolQueue
from benchmarks.reference_designs.spoolq.variants import UnlockedClaim
from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.inhouse import Guarded
from sqs_conformance.conformance.concurrent.run import ConcurrentOptions, run_concurrent

SPOOL_CHOICES = {"PURGE-IN-PROGRESS"}  # the spool design keeps no 60-second purge limit (its README)
RACE = {m.name: m for m in RACES}


def diverging(target, profile: str, cases: int, seed: int = 11) -> dict:
    """The rules the run found broken; "error" with the target's one line where it failed instead of answering
    (as `--target python:` runs it)."""
    target = Guarded(target)
    try:
        result = run_concurrent(target, profile, ConcurrentOptions(clients=8, cases=cases, seed=seed,
                                                                   mode="threads"))
    except TargetError as error:
        return {"error": str(error)}
    finally:
        target.close()
    return {rule: finding.divergence for rule, finding in result.findings.items()}


@pytest.mark.parametrize("profile", ["sqs-standard", "sqs-fifo"])
def test_the_redis_design_conforms_under_eight_clients(shared_redis, profile):
    assert diverging(RedisQueueTarget(profile), profile, cases=6) == {}


def test_the_postgres_design_conforms_under_eight_clients(shared_postgres):
    assert diverging(PostgresQueue("sqs-standard"), "sqs-standard", cases=6) == {}


def test_the_spool_design_conforms_under_eight_clients_but_for_its_stated_choice():
    assert set(diverging(SpoolQueue("sqs-standard"), "sqs-standard", cases=6)) <= SPOOL_CHOICES


@pytest.mark.parametrize("name, rule", [("ReceiveReadThenClaim", "RCV-EXCLUSIVE"),
                                        ("FifoGroupLockAfterRead", "FIFO-GROUP-LOCK")])
def test_a_redis_race_is_caught(shared_redis, name, rule):
    race = RACE[name]
    assert rule in diverging(race.target(race.profile), race.profile, cases=4)


def test_a_postgres_receive_without_row_locks_is_caught_as_two_consumers_given_one_message(shared_postgres):
    found = diverging(NoRowLocks("sqs-standard"), "sqs-standard", cases=4)
    # its updates of rows it did not lock may also deadlock: the run then stops on that error, which is caught too
    assert "RCV-EXCLUSIVE" in found or "deadlock" in found.get("error", "").lower(), found


def test_an_unlocked_claim_of_the_spool_design_is_caught():
    assert "RCV-EXCLUSIVE" in diverging(UnlockedClaim("sqs-standard"), "sqs-standard", cases=4)
