"""Sequences on which the four profiles' permitted outcomes differ: each profile is more than a renamed copy."""

from sqs_conformance.model.values import ChangeOk, Error
from tests.model.scenario import Scenario, error_code

ALL = ["sqs-standard", "sqs-fifo", "sqs-2008", "smq"]


def outcome_per_profile(sequence) -> dict[str, object]:
    return {profile: sequence(Scenario(profile)) for profile in ALL}


def test_change_past_the_twelve_hour_ceiling():
    def sequence(q):
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        return error_code(q.change(handle, 43200, at=20))

    assert outcome_per_profile(sequence) == {
        "sqs-standard": "InvalidParameterValue",  # the ceiling counts from the receive
        "sqs-fifo": "InvalidParameterValue",
        "sqs-2008": None,  # no cumulative ceiling documented
        "smq": None,
    }


def test_change_after_the_deadline():
    def sequence(q):
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        response = q.change(handle, 60, at=31)
        return (error_code(response), isinstance(response, ChangeOk) and response.receipt_handle is not None,
                q.receivable(32) == [])

    assert outcome_per_profile(sequence) == {
        "sqs-standard": (None, False, True),  # 200; hidden again (one of the two permitted outcomes)
        "sqs-fifo": ("InvalidParameterValue", False, False),  # the handle has expired
        "sqs-2008": (None, False, True),
        "smq": ("MessageNotExist", False, False),  # only an invisible message can be changed
    }


def test_terminate_to_zero():
    def sequence(q):
        mid = q.send()
        handle = q.receive_one(at=0).receipt_handle
        response = q.change(handle, 0, at=1)
        return error_code(response) or (q.receivable(1) == [mid])

    assert outcome_per_profile(sequence) == {
        "sqs-standard": True, "sqs-fifo": True, "sqs-2008": True,
        "smq": "InvalidArgument",  # 0 is outside SMQ's 1..43200
    }


def test_a_change_before_any_receive():
    def sequence(q):
        mid = q.send()
        response = q.change(mid, 600, at=0)  # addressed by message id: only the 2008 API has this
        return error_code(response) or q.receivable(1)

    outcomes = outcome_per_profile(sequence)
    assert outcomes["sqs-2008"] == []  # locked for 600 s
    assert outcomes["sqs-standard"] == outcomes["sqs-fifo"] == "ReceiptHandleIsInvalid"
    assert outcomes["smq"] in ("InvalidArgument", "MessageNotExist")


def test_the_old_handle_after_a_change():
    def sequence(q):
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        q.change(handle, 100, at=5)
        return error_code(q.delete(handle, at=10))

    assert outcome_per_profile(sequence) == {
        "sqs-standard": None, "sqs-fifo": None, "sqs-2008": None,
        "smq": "MessageNotExist",  # the change issued a new handle and the old one stopped working
    }


def test_a_second_message_of_the_same_group():
    def sequence(q):
        q.send("a")
        b = q.send("b")
        q.receive_one(at=0) if q.model.profile.validates_receive_params else q.receive(at=0)
        return b in q.receivable(1)

    assert outcome_per_profile(sequence) == {
        "sqs-standard": True, "sqs-fifo": False, "sqs-2008": True, "smq": True,
    }


def test_the_differences_are_flagged_by_the_checker():
    """A 2008-style answer (accepting the change past the ceiling) is a divergence on current SQS only."""
    from sqs_conformance.model.values import ChangeMessageVisibility

    for profile, flagged in [("sqs-standard", True), ("sqs-2008", False)]:
        q = Scenario(profile)
        q.send()
        handle = q.receive_one(at=0).receipt_handle
        verdict = q.check(ChangeMessageVisibility("q", handle, 43200), 20, ChangeOk())
        assert bool(verdict.divergences) == flagged
        assert not isinstance(verdict.outcome.response, Error)
