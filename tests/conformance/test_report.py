"""A divergence as a user sees it: the timeline, and a boto3 script that really runs against an endpoint."""

import io
import sys
from contextlib import redirect_stdout
from unittest.mock import patch

import pytest
from moto import mock_aws

from sqs_conformance.adapters.sqs_calls import CLIENT_OPTIONS
from sqs_conformance.conformance.report import (
    _SCRIPT_HEAD, answer_words, boto3_script, describe_finding, permitted_checks,
)
from sqs_conformance.conformance.runner import RunOptions, run
from sqs_conformance.model.outcomes import (
    AttributeWithin, Divergence, ReceiveInOrder, ReceiveRepeated, ReceiveSome, ReceiveWithout,
)
from sqs_conformance.model.values import BatchOk, EntryFailure, ErrorSpec
from tests.conformance.planted import WrongMalformedHandleCode


def test_the_description_names_the_rule_its_source_and_the_diverging_step():
    result = run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", RunOptions(examples=60, seed=5, max_rounds=1,
                                                                                      coverage_rounds=0))
    text = describe_finding(result.findings["HANDLE-MALFORMED"])
    assert text.startswith("HANDLE-MALFORMED: ")
    assert "source:   docs/evidence.md row" in text and "<-- diverges" in text


def test_the_script_runs_against_an_endpoint_and_shows_the_answer(monkeypatch):
    result = run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", RunOptions(examples=30, seed=1, max_rounds=1,
                                                                                      coverage_rounds=0))
    finding = result.findings["HANDLE-MALFORMED"]
    script = boto3_script(finding, "sqs-standard", "planted")
    compile(script, "case.py", "exec")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setattr(sys, "argv", ["case.py"])
    output = io.StringIO()
    with mock_aws(), redirect_stdout(output):
        exec(compile(script, "case.py", "exec"), {"__name__": "__main__"})
    printed = output.getvalue()
    last = len(finding.steps) - 1
    assert f"step {last}:" in printed and "ReceiptHandleIsInvalid" in printed.splitlines()[-2]
    # moto answers as AWS does here: the planted divergence does not reproduce, and the script says so
    assert printed.splitlines()[-1].startswith("not reproduced: the diverging step answered error "
                                               "ReceiptHandleIsInvalid '")
    assert "(found: 'error InvalidParameterValue'" in printed.splitlines()[-1]
    # Where the model permitted another answer, moto's reproduces the divergence, and the script exits 1
    as_found = script.replace("PERMITTED = [('error', 'ReceiptHandleIsInvalid'",
                              "PERMITTED = [('error', 'SomethingElse'")
    assert as_found != script
    output = io.StringIO()
    with mock_aws(), redirect_stdout(output), pytest.raises(SystemExit) as exited:
        exec(compile(as_found, "case.py", "exec"), {"__name__": "__main__"})
    assert exited.value.code == 1 and output.getvalue().splitlines()[-1].startswith("reproduced: ")


def test_a_timeline_of_several_queues_names_the_queue_on_each_row():
    from sqs_conformance.adapters.model_target import ModelTarget
    from sqs_conformance.conformance.runner import Finding
    from sqs_conformance.conformance.session import Session
    from sqs_conformance.model import Divergence
    from sqs_conformance.model.values import CreateQueue, ReceiveMessage, SendMessage

    def finding(ops):
        session = Session(ModelTarget("sqs-standard"), "sqs-standard", run_id="t", case=1, trace=None)
        for op in ops:
            session.execute(op)
        return Finding("RCV-HIDE", Divergence(("RCV-HIDE",), "x", "y"), session.steps, [])

    two = describe_finding(finding([CreateQueue("dlq", {}), CreateQueue("q", {}), SendMessage("q", "m1"),
                                    ReceiveMessage("dlq")])).splitlines()
    rows = two[two.index(next(line for line in two if "t (s)" in line)) + 1:]
    assert [row.split()[1] for row in rows] == ["dlq:", "q:", "q:", "dlq:"]
    one = describe_finding(finding([CreateQueue("q", {}), SendMessage("q", "m1")]))
    assert "q: Send" not in one and "Send(m1)" in one


def script_reading(divergence: Divergence) -> dict:
    """The functions a RULE.py script reads its last answer with, as generated for this divergence."""
    head = _SCRIPT_HEAD.format(rule_id="X", profile="sqs-standard", target="t", statement="", source="",
                               expected="", observed="", filename="case.py", waits="", observed_kind="",
                               expected_kind="", entry=divergence.entry, client_options=CLIENT_OPTIONS,
                               permitted=permitted_checks(divergence), judged="")
    names: dict = {"__name__": "case"}
    with patch.object(sys, "argv", ["case.py"]):  # no endpoint: it only reads replies
        exec(compile(head.removesuffix("try:\n"), "case.py", "exec"), names)
    return names


def received(*bodies: str, group: str = "g1") -> dict:
    return {"Messages": [{"Body": b, "ReceiptHandle": f"h-{b}", "Attributes": {"MessageGroupId": group}}
                         for b in bodies]}


@pytest.mark.parametrize("permitted, reply, allowed", [
    (ReceiveWithout(("m1",)), received("m1"), False),
    (ReceiveWithout(("m1",)), received("m2", "m1", "m3"), False),
    (ReceiveWithout(("m1",)), received("m10"), True),
    (ReceiveWithout(("m1",)), {}, True),
    (ReceiveSome(least=1), {}, False),
    (ReceiveSome(least=1), received("m1"), True),
    (ReceiveSome(most=2), received("m1", "m2"), True),
    (ReceiveSome(most=2), received("m1", "m2", "m3"), False),
    (ReceiveSome(), {"Error": {"Code": "OverLimit", "Message": "too many"}}, False),
    (ReceiveInOrder("g1", (("m1", "m2"),)), received("m2"), False),
    (ReceiveInOrder("g1", (("m1", "m2"),)), received("m1", "m2"), True),
    (ReceiveInOrder("g1", (("m1", "m2"),)), received("m3", group="g2"), True),
    (ReceiveRepeated((("m1", "rh-1"),)), received("m1"), True),
    (ReceiveRepeated((("m1", "rh-1"),)), {}, False),
    (ReceiveRepeated((("m1", "rh-2"),)), received("m1"), False),
    (AttributeWithin("ApproximateNumberOfMessages", 0, 1), {"Attributes": {"ApproximateNumberOfMessages": "1"}}, True),
    (AttributeWithin("ApproximateNumberOfMessages", 0, 0), {"Attributes": {"ApproximateNumberOfMessages": "1"}}, False),
    (AttributeWithin("VisibilityTimeout", values=("30",)), {"Attributes": {"VisibilityTimeout": "31"}}, False),
])
def test_a_script_permits_every_answer_without_the_fault_and_none_with_it(permitted, reply, allowed):
    """A receive that returned a message it had to hide or out of its group's order, an empty long poll, too many
    messages, a repeat that is not one, a count out of its bounds: the script reads each as the model does."""
    reading = script_reading(Divergence(("RCV-HIDE",), "hidden", "returned", permitted=(permitted,)))
    reading["handles"].update({"rh-1": "h-m1"})
    assert any(reading["fits"](answer, reply, "receive_message") for answer in reading["PERMITTED"]) is allowed


def test_a_batch_entry_is_read_alone_where_the_divergence_is_in_it():
    answer = BatchOk(("e1",), (EntryFailure("e0", "ReceiptHandleIsInvalid", "bad"),))
    assert answer_words(answer, "e0") == "error ReceiptHandleIsInvalid"
    assert answer_words(answer, "e1") == "ok"
    assert answer_words(answer) == "failed e0:ReceiptHandleIsInvalid"
    reading = script_reading(Divergence(("CMV-DELETED",), "e", "o", permitted=(ErrorSpec("InvalidParameterValue",
                                                                                         "Value .+"),), entry="e0"))
    reply = {"Successful": [{"Id": "e1"}], "Failed": [{"Id": "e0", "Code": "ReceiptHandleIsInvalid",
                                                        "Message": "bad", "SenderFault": True}]}
    assert reading["kind"](reply, "change_message_visibility_batch") == "error ReceiptHandleIsInvalid"
    assert not reading["fits"](reading["PERMITTED"][0], reply, "change_message_visibility_batch")
    reply["Failed"][0].update(Code="InvalidParameterValue", Message="Value x for parameter ReceiptHandle")
    assert reading["fits"](reading["PERMITTED"][0], reply, "change_message_visibility_batch")
