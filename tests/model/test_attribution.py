"""A divergence names the rule a person would fix: a refusal whose text says which check refused names that
check's rule, not whatever else the model permitted at that step."""

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import Outcome, attribution
from sqs_conformance.model.values import ChangeOk, Error, Ok

CEILING = Error("InvalidParameterValue", "Value 43195 for parameter VisibilityTimeout is invalid. Reason: Total "
                "VisibilityTimeout for the message is beyond the limit [43200 seconds]", 400)
GONE = Outcome(errors.not_available_for_change(), ("REDRIVE-DLQ", "CMV-DELETED"))
EXPIRED = Error("InvalidParameterValue", "Value x for parameter ReceiptHandle is invalid. Reason: The receipt handle "
                "has expired.", 400)


def test_a_ceiling_refusal_where_the_change_could_succeed_names_the_ceiling():
    # the message may have moved to the dead-letter queue (refused as gone) or be back in the queue (accepted)
    rules = attribution([GONE, Outcome(ChangeOk(), ("CMV-EXPIRED",))], CEILING)
    assert rules[:2] == ("VIS-CEILING-FROM-RECEIVE", "VIS-CEILING")


def test_any_refusal_whose_text_names_its_check_names_the_rules_that_weigh_that_check():
    """The same code (InvalidParameterValue) is every check's: the recorded text says which one refused."""
    expired = Error("InvalidParameterValue", "Value AQEB for parameter ReceiptHandle is invalid. Reason: The receipt "
                    "handle has expired.", 400)
    permitted = [GONE, Outcome(ChangeOk(), ("VIS-EXTEND-NONADDITIVE",)), Outcome(ChangeOk(), ("CMV-STALE",))]
    assert attribution(permitted, expired)[0] == "CMV-STALE"  # not the outcome with the same code
    too_long = Error("InvalidParameterValue", "Value 20 for parameter WaitTimeSeconds is invalid. Reason: Must be "
                     ">= 0 and <= 20, if provided.", 400)
    assert attribution([Outcome(Ok(), ("PURGE-ALL",)), Outcome(Ok(), ("RCV-WAIT-RANGE",))], too_long)[0] == \
        "RCV-WAIT-RANGE"
    # a text no check is known by, or a check no permitted answer weighed (without a default), changes nothing
    assert attribution(permitted[:2], expired)[0] == "REDRIVE-DLQ"


def test_other_refusals_keep_the_closest_permitted_answer_first():
    gone_otherwise = Error("InvalidParameterValue", "Value rh-2 for parameter ReceiptHandle is invalid. Reason: "
                           "something else", 400)
    assert attribution([GONE, Outcome(ChangeOk(), ("CMV-EXPIRED",))], gone_otherwise)[0] == "REDRIVE-DLQ"
    # where nothing permitted the change to succeed, a ceiling text does not move the blame
    assert attribution([GONE], CEILING)[0] == "REDRIVE-DLQ"
    assert attribution([Outcome(Ok(), ("DEL-IDEMPOTENT",))], Error("X", "y", 400))[0] == "DEL-IDEMPOTENT"


def test_moto_counting_the_ceiling_from_the_send_is_named_so_where_the_message_may_have_moved():
    """The case a fresh clone's default run reported under REDRIVE-DLQ: moto refuses an extension as beyond the
    ceiling counted from the send; the model also permitted the message to be in the dead-letter queue."""
    from sqs_conformance.adapters.moto_target import MotoTarget
    from sqs_conformance.conformance.session import Session
    from sqs_conformance.model.values import (
        ChangeMessageVisibility, CreateQueue, ReceiveMessage, SendMessage, SetQueueAttributes,
    )

    poll = {"max_messages": 10, "wait_time_seconds": 1}
    case = [(0.0, CreateQueue("dlq", {})),
            (0.0, CreateQueue("q", {"VisibilityTimeout": 0, "RedrivePolicy": {"deadLetterTargetQueue": "dlq",
                                                                               "maxReceiveCount": 2}})),
            (0.0, SendMessage("q", "m1", delay_seconds=1)), (5.0, ReceiveMessage("q", max_messages=1)),
            (0.0, SetQueueAttributes("q", {"VisibilityTimeout": 1})), (0.0, ReceiveMessage("q", **poll)),
            (0.0, ReceiveMessage("q", **poll)), (0.0, ChangeMessageVisibility("q", "rh-2", 43195))]
    target = MotoTarget()
    try:
        session = Session(target, "sqs-standard", run_id="t", case=1, trace=None)
        for advance, op in case:
            session.advance(advance)
            step = session.execute(op)
    finally:
        target.close()
    assert step.divergences and step.divergences[0].rule == "VIS-CEILING-FROM-RECEIVE", step.divergences


def test_a_rejected_handle_that_may_have_expired_names_the_rule_that_keeps_an_expired_handle_working():
    """local-aws-sqs, real clock: a change 46 ms after its handle's deadline (inside the tolerance, so the handle
    may still be in flight or may have expired) is answered ReceiptHandleIsInvalid. Either world accepts the
    change; the target took the handle for expired, so the rule a person fixes is CMV-EXPIRED, not VIS-TERMINATE."""
    rejected = Error("ReceiptHandleIsInvalid", 'The input receipt handle "x" is not a valid receipt handle.', 404)
    in_flight = Outcome(ChangeOk(), ("VIS-TERMINATE",))
    expired = Outcome(ChangeOk(), ("CMV-EXPIRED", "VIS-TERMINATE"))
    assert attribution([in_flight, expired], rejected)[0] == "CMV-EXPIRED"
    assert attribution([in_flight], rejected)[0] == "VIS-TERMINATE"  # surely in flight: the change's own rule
    # a message expected gone still comes first: its handle was expected refused, only otherwise
    assert attribution([expired, Outcome(errors.not_available_for_change(), ("CMV-DELETED",))],
                        rejected)[0] == "CMV-DELETED"


def _empty_long_poll_after_two_receives(max_receive_count: int, at: float = 5) -> str:
    """The rule named when a 1 s long poll at `at` on a real clock finds nothing by its end although the message,
    received twice and timed out twice (the second time at 3), is back by then in a queue that moves it after
    `max_receive_count` receives."""
    from sqs_conformance.model.state import Timing
    from sqs_conformance.model.values import ReceiveMessage, ReceiveOk
    from tests.model.scenario import Scenario

    q = Scenario.with_dead_letter_queue(max_receive_count=max_receive_count, timing=Timing(windowed=True))
    q.send()
    q.receive_one(at=0, visibility_timeout=1)
    q.receive_one(at=2, visibility_timeout=1)
    verdict = q.model.observe(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), at, ReceiveOk(()),
                              completed_at=at + 1.01)
    assert verdict.divergences, "an empty long poll with a message surely visible must be flagged"
    return verdict.divergences[0].rule


def test_a_message_missed_on_its_last_receive_before_redrive_names_the_redrive():
    """local-aws-sqs moves a message on its maxReceiveCount-th receive instead of after it: the poll that should
    have returned it (its third receive of three) comes back empty. A person fixes the redrive count, not the
    deadline every earlier receive kept."""
    assert _empty_long_poll_after_two_receives(3) == "REDRIVE-DLQ"
    assert _empty_long_poll_after_two_receives(5) == "RCV-OVERRIDE"  # far from it: the deadline's own rule
    # back only during the wait: a poll that does not wake for it (moto's) is the likelier fault
    assert _empty_long_poll_after_two_receives(3, at=2.5) == "RCV-LONG-POLL"


def _fifo_long_poll_behind_a_message_due_to_move(invoked: float) -> list[str]:
    """Group g1: m1 received (2 s timeout, one receive allowed: its next receive moves it), m2 behind it. A long
    poll of 1 s at `invoked` on a real clock (0.5 s tolerance) comes back empty after its wait."""
    from sqs_conformance.model import Model
    from sqs_conformance.model.state import Timing
    from sqs_conformance.model.values import CreateQueue, ReceiveMessage, ReceiveOk, SendMessage

    model = Model("sqs-fifo", Timing(windowed=True, tolerance=0.5))
    fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    model.step(CreateQueue("dlq", fifo), 0)
    model.step(CreateQueue("q", {**fifo, "VisibilityTimeout": 2, "RedrivePolicy": {
        "deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}), 0)
    for body in ("m1", "m2"):
        model.step(SendMessage("q", body, group_id="g1"), 0)
    model.step(ReceiveMessage("q", max_messages=1), 0.1)
    verdict = model.observe(ReceiveMessage("q", max_messages=1, wait_time_seconds=1), invoked, ReceiveOk(()),
                            completed_at=invoked + 1.01)
    return [d.rule for d in verdict.divergences]


def test_a_fifo_message_behind_one_that_may_still_hold_its_group_need_not_come():
    """LocalStack, real clock: m1's deadline (2.1 s) falls inside the poll's wait but within the tolerance of its
    end, so m1 may still have held the group: the empty answer is permitted. Once m1 is surely due before the poll
    began, it is moved and m2 must come."""
    assert _fifo_long_poll_behind_a_message_due_to_move(1.3) == []
    assert _fifo_long_poll_behind_a_message_due_to_move(3.0) == ["REDRIVE-DLQ"]


def test_a_rejected_stale_handle_names_the_stale_handle_rule_not_the_ceiling_its_value_was_weighed_against():
    """ministack, real clock: a change to 43198 s through a stale handle, accepted by the model (a stale handle
    works while its message is in flight, and the value is within a second of the ceiling, so the acceptance also
    rests on the ceiling's rules), is refused ReceiptHandleIsInvalid. The target took the handle for dead."""
    rejected = Error("ReceiptHandleIsInvalid", "The input receipt handle is invalid.", 400)
    accepted = Outcome(ChangeOk(), ("VIS-CEILING-FROM-RECEIVE", "VIS-CEILING", "CMV-STALE", "VIS-EXTEND-NONADDITIVE"))
    assert attribution([accepted], rejected)[0] == "CMV-STALE"
    # a handle surely current and in flight: the change's own rules keep their order
    current = Outcome(ChangeOk(), ("VIS-CEILING-FROM-RECEIVE", "VIS-EXTEND-NONADDITIVE"))
    assert attribution([current], rejected)[0] == "VIS-CEILING-FROM-RECEIVE"


def _fifo_message_moved_then_its_old_handle_used(change_answer) -> list[str]:
    """LocalStack, real clock: a FIFO queue with a 0 s timeout and one receive allowed; m1 is received, the next
    receive (an empty long poll that answers at once) moves it to the dead-letter queue; its old handle is used to
    delete it (refused: "The receipt handle has expired.") and to change it (`change_answer`); then the
    dead-letter queue returns it. The rules of every divergence on the way, named as a run names them."""
    from sqs_conformance.model import Model
    from sqs_conformance.model.blame import Played, blamed
    from sqs_conformance.model.state import Timing
    from sqs_conformance.model.values import (
        ChangeMessageVisibility, CreateQueue, DeleteMessage, ReceivedMessage, ReceiveMessage, ReceiveOk, SendMessage,
        SendOk,
    )

    model = Model("sqs-fifo", Timing(windowed=True, tolerance=0.5))
    played: list[Played] = []
    rules: list[str] = []

    def observe(op, invoke: float, answer, complete: float):
        verdict = model.observe(op, invoke, answer, completed_at=complete)
        played.append(Played(op, invoke, answer, complete, verdict))
        rules.extend(d.rule for d in blamed("sqs-fifo", model.timing, played, verdict.divergences))
        return verdict

    fifo = {"FifoQueue": "true"}
    observe(CreateQueue("dlq", fifo), 0, Ok(), 0.004)
    observe(CreateQueue("q", {**fifo, "VisibilityTimeout": 0, "RedrivePolicy": {
        "deadLetterTargetQueue": "dlq", "maxReceiveCount": 1}}), 0.005, Ok(), 0.01)
    observe(SendMessage("q", "m1", group_id="g1", dedup_id="u1"), 0.014, SendOk(None), 0.02)  # a new id
    first = observe(ReceiveMessage("q", max_messages=1), 0.039, ReceiveOk((ReceivedMessage("msg-1", "m1", None, 1,
                                                                                           None),)), 0.045)
    (handle,) = first.outcome.effects.handles  # the model's name for the handle the receive issued
    # The empty poll answers at once: within the tolerance of its deadline m1 may still be in flight, or moved.
    observe(ReceiveMessage("q", max_messages=10, wait_time_seconds=1), 0.047, ReceiveOk(()), 0.052)
    observe(DeleteMessage("q", handle), 0.053, EXPIRED, 0.058)
    observe(ChangeMessageVisibility("q", handle, 0), 0.059, change_answer, 0.065)
    observe(ReceiveMessage("dlq", max_messages=10, wait_time_seconds=1), 0.072,
            ReceiveOk((ReceivedMessage("msg-1", "m1", None, None, None),)), 0.08)
    return rules


def test_a_fifo_message_moved_to_the_dead_letter_queue_may_have_its_old_handle_refused_as_expired():
    """A FIFO message moves only once its receipt has expired: nothing records what its old handle gets then, so
    the refusal an expired FIFO handle gets is permitted too (it was flagged as DEL-STALE). Accepting a change
    through it, while the message is in the dead-letter queue, names the redrive."""
    refused = Error("ReceiptHandleIsInvalid", "The input receipt handle is invalid.", 400)
    assert _fifo_message_moved_then_its_old_handle_used(refused) == []
    assert _fifo_message_moved_then_its_old_handle_used(EXPIRED) == []  # the change refused as expired too
    assert _fifo_message_moved_then_its_old_handle_used(ChangeOk())[:1] == ["REDRIVE-DLQ"]


def test_a_refusal_of_a_change_the_model_accepts_on_an_expired_handle_names_that_rule_only():
    """Received, released with a change to 0, changed again through the same handle: the model permits only
    acceptance (CMV-EXPIRED). A target answering MessageNotInflight breaks that rule, not VIS-EXTEND-NONADDITIVE
    (what the accepted change would have done to the deadline) nor VIS-TERMINATE (the release it did carry out)."""
    from sqs_conformance.model import Model
    from sqs_conformance.model.values import ChangeMessageVisibility, CreateQueue, ReceiveMessage, SendMessage

    model = Model("sqs-standard")
    model.step(CreateQueue("q", {}), 0)
    model.step(SendMessage("q", "b"), 0)
    handle = model.step(ReceiveMessage("q"), 0)[0].messages[0].receipt_handle
    model.step(ChangeMessageVisibility("q", handle, 0), 1)
    released = model.fork()
    verdict = model.observe(ChangeMessageVisibility("q", handle, 30), 2,
                            Error("MessageNotInflight", "The specified message isn't in flight.", 400))
    assert [d.rules for d in verdict.divergences] == [("CMV-EXPIRED",)]
    # the acceptance it should have given is no divergence at all
    assert not released.observe(ChangeMessageVisibility("q", handle, 30), 2, ChangeOk()).divergences


def test_a_refusal_where_no_rule_says_the_handle_still_works_keeps_the_rules_of_the_acceptance():
    # a receipt in flight refused: nothing but the change's own rules to name
    assert attribution([Outcome(ChangeOk(), ("VIS-EXTEND-NONADDITIVE",))], Error("X", "y", 400)) == \
        ("VIS-EXTEND-NONADDITIVE",)
    # a refusal with the ceiling's text still names the ceiling, stale handle or not
    assert attribution([Outcome(ChangeOk(), ("CMV-STALE", "VIS-EXTEND-NONADDITIVE"))], CEILING)[0] == \
        "VIS-CEILING-FROM-RECEIVE"


def test_a_refusal_naming_a_parameter_the_model_accepts_names_that_parameters_rule():
    """A queue created with a valid RedrivePolicy and refused as naming it wrong breaks redrive, not VIS-DEFAULT
    (the default timeout the creation also relied on)."""
    from sqs_conformance.model import Model
    from sqs_conformance.model.values import CreateQueue

    model = Model("sqs-standard")
    model.step(CreateQueue("dlq", {}), 0)
    refused = Error("InvalidParameterValue", "Value {...} for parameter RedrivePolicy is invalid. Reason: Redrive "
                    "policy does not contain mandatory attribute: deadLetterTargetArn.", 400)
    verdict = model.observe(CreateQueue("q", {"RedrivePolicy": {"deadLetterTargetQueue": "dlq",
                                                                "maxReceiveCount": 3}}), 0, refused)
    assert verdict.divergences[0].rules[0] == "REDRIVE-DLQ"
    # without a parameter named, the creation's own rule, as before
    assert attribution([Outcome(Ok(), ("VIS-DEFAULT",))], Error("InternalError", "boom", 500)) == ("VIS-DEFAULT",)
    # a parameter the model refused too is judged as before: the closest permitted refusal first
    range_refusal = Outcome(errors.out_of_range("VisibilityTimeout", 43201, "sqs"), ("VIS-RANGE",))
    assert attribution([range_refusal], Error("InvalidAttributeValue", "Invalid value for the parameter "
                                              "VisibilityTimeout.", 400)) == ("VIS-RANGE",)
