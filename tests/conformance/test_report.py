"""A divergence as a user sees it: the timeline, and a boto3 script that really runs against an endpoint."""

import io
import sys
from contextlib import redirect_stdout

import pytest
from moto import mock_aws

from conformance.report import boto3_script, describe_finding
from conformance.runner import run
from tests.conformance.planted import WrongMalformedHandleCode


def test_the_description_names_the_rule_its_source_and_the_diverging_step():
    result = run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", examples=60, seed=5, max_rounds=1,
                 coverage_rounds=0)
    text = describe_finding(result.findings["HANDLE-MALFORMED"])
    assert text.startswith("HANDLE-MALFORMED: ")
    assert "source:   docs/evidence.md row" in text and "<-- diverges" in text


def test_the_script_runs_against_an_endpoint_and_shows_the_answer(monkeypatch):
    result = run(WrongMalformedHandleCode("sqs-standard"), "sqs-standard", examples=30, seed=1,
                 max_rounds=1, coverage_rounds=0)
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
    as_found = script.replace("PERMITTED = [('error\\\\ ReceiptHandleIsInvalid'",
                              "PERMITTED = [('error\\\\ SomethingElse'")
    assert as_found != script
    output = io.StringIO()
    with mock_aws(), redirect_stdout(output), pytest.raises(SystemExit) as exited:
        exec(compile(as_found, "case.py", "exec"), {"__name__": "__main__"})
    assert exited.value.code == 1 and output.getvalue().splitlines()[-1].startswith("reproduced: ")


def test_a_timeline_of_several_queues_names_the_queue_on_each_row():
    from adapters.model_target import ModelTarget
    from conformance.runner import Finding
    from conformance.session import Session
    from model import Divergence
    from model.values import CreateQueue, ReceiveMessage, SendMessage

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
