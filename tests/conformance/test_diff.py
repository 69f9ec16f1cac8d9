"""The cross-profile diff: what differs between two queue services, as the shortest sequences that show it."""

import subprocess

from sqs_conformance.conformance.diff import differences
from tests.cli import SQS_CONFORMANCE


def test_standard_sqs_and_smq_differ_where_the_seeds_say_and_briefly():
    found = differences("sqs-standard", "smq", examples=10, seed=1, steps_per_case=10)
    pairs = {(d.finding.rule, d.behaves, d.judged_by) for d in found}
    # SMQ hands out a new receipt handle on every change; SQS keeps the old one working (seed 004 vs 002).
    assert ("SMQ-NEW-HANDLE", "sqs-standard", "smq") in pairs
    # SMQ's VisibilityTimeout starts at 1, SQS's at 0.
    assert ("VIS-RANGE", "smq", "sqs-standard") in pairs
    assert all(len(d.finding.steps) <= 6 for d in found), [(d.finding.rule, len(d.finding.steps)) for d in found]
    assert not any(d.behaves == d.judged_by for d in found)


def test_a_profile_is_not_compared_with_itself():
    result = subprocess.run([*SQS_CONFORMANCE, "diff", "--profile", "smq", "--profile", "smq"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == "sqs-conformance: error: diff compares two different profiles: --profile A --profile B\n"
