"""A finding's RULE.py and `confirm` say the same of every rule moto diverges on: reproduced against moto's server,
not reproduced against an endpoint that answers as AWS does (the model behind AWS's wire format).

The findings are those of a real-clock run of the witnesses against moto's server, as a user's would be, so their
waits are short enough to replay for real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from sqs_conformance.adapters.emulators import start_moto_server
from sqs_conformance.adapters.endpoint import EndpointTarget
from sqs_conformance.conformance.cases import FoundCase
from sqs_conformance.conformance.confirm import confirm
from sqs_conformance.conformance.report import write_findings
from sqs_conformance.conformance.runner import RunOptions, run
from tests.aws_wire import AwsLikeEndpoint

# Rules whose divergence on moto is in an answer's text, not its code: a script comparing codes would call them
# reproduced against AWS too.
IN_THE_TEXT = {"HANDLE-MALFORMED", "RCV-MAX-MESSAGES", "RCV-WAIT-RANGE"}


@pytest.fixture(scope="module", params=["sqs-standard", "sqs-fifo"])
def profile(request):
    return request.param


@pytest.fixture(scope="module")
def endpoints(profile):
    moto, aws_like = start_moto_server(), AwsLikeEndpoint(profile)
    yield {"moto": moto.url, "aws-like": aws_like.url}
    aws_like.stop()
    moto.stop()


@pytest.fixture(scope="module")
def findings(endpoints, profile, tmp_path_factory):
    first = EndpointTarget(endpoint_url=endpoints["moto"], local_credentials=True)
    jobs = [first] + [first.another_connection() for _ in range(3)]
    try:
        result = run(jobs, profile, RunOptions(seed=1, search=False))
    finally:
        for job in reversed(jobs):
            job.close()
    assert profile == "sqs-fifo" or IN_THE_TEXT <= set(result.findings)
    return write_findings(result, tmp_path_factory.mktemp("out"))


def script_says(script, url: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, str(script), url], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout.strip().splitlines()[-1]


def confirm_says(case_file, url: str) -> bool | None:
    target = EndpointTarget(endpoint_url=url, local_credentials=True)
    try:
        return confirm(target, FoundCase.load(case_file), max_waiting=120).reproduced
    finally:
        target.close()


# Rules whose divergence on moto's server shows only where moto's timing falls one way: its long poll wakes
# once a second, so a message made visible 40 ms into the wait is missed only where the poll began before it.
# Each replay on a real clock is a new draw of that timing: script and confirm are each given a few.
TIMING_DEPENDENT = {"RCV-LONG-POLL"}
REPLAYS = 3


def judged_alike(case, url: str, reproduced: bool) -> tuple[tuple[int, str], bool | None]:
    """The script's and confirm's verdicts on one case: one replay each, or, for a timing-dependent divergence,
    up to REPLAYS each, until both say what they should."""
    for _ in range(REPLAYS if case.stem in TIMING_DEPENDENT else 1):
        script, by_confirm = script_says(case.with_suffix(".py"), url), confirm_says(case, url)
        if (script[0] == 1) == by_confirm is reproduced:
            break
    return script, by_confirm


@pytest.mark.parametrize("where, reproduced", [("moto", True), ("aws-like", False)])
def test_every_script_agrees_with_confirm(findings, endpoints, where, reproduced):
    cases = sorted(findings.glob("*.json"))
    assert len(cases) >= 5
    # Each script checks what diverged (an error's text, a batch entry's answer, a receive's messages), not a kind
    assert [c.stem for c in cases if "\nPERMITTED = None\n" in c.with_suffix(".py").read_text()] == []
    url = endpoints[where]
    with ThreadPoolExecutor(4) as pool:  # their waits overlap
        judged = list(pool.map(lambda case: judged_alike(case, url, reproduced), cases))
    scripts = [script for script, _ in judged]
    disagree = {case.stem: (script, by_confirm) for case, (script, by_confirm) in zip(cases, judged, strict=True)
                if (script[0] == 1) != by_confirm or by_confirm is not reproduced}
    assert disagree == {}
    for (_, last), case in zip(scripts, cases, strict=True):
        assert last.startswith("reproduced: " if reproduced else "not reproduced: "), (case.stem, last)
        if case.stem in IN_THE_TEXT and reproduced:
            assert "which the model does not permit" in last  # judged by its text, not its code


def test_every_finding_of_a_virtual_clock_run_replays_on_a_real_clock_within_a_minute(endpoints, profile, tmp_path):
    """On moto in-process, waiting is free and time exact; its findings are still ones a real clock replays: those
    a real clock's timing would show first, then the least waiting among the shortest, so `confirm` against moto's
    server (a real clock) reproduces each, in seconds."""
    from sqs_conformance.adapters.moto_target import MotoTarget

    target = MotoTarget()
    try:
        result = run(target, profile, RunOptions(seed=1, search=False))
    finally:
        target.close()
    found = write_findings(result, tmp_path)
    cases = sorted(found.glob("*.json"))
    assert len(cases) >= 5
    assert profile == "sqs-fifo" or "VIS-CEILING-FROM-RECEIVE.json" in [c.name for c in cases]
    assert {c.stem: FoundCase.load(c).waiting for c in cases if FoundCase.load(c).waiting >= 60} == {}
    with ThreadPoolExecutor(4) as pool:
        confirmed = dict(zip([c.stem for c in cases], pool.map(lambda c: confirm_says(c, endpoints["moto"]), cases),
                             strict=True))
    assert {rule: by_confirm for rule, by_confirm in confirmed.items() if by_confirm is not True} == {}


@pytest.mark.parametrize("wait, timeout, exact_only", [(1.5, 43199, True), (3.08, 43198, False)],
                         ids=["a margin only exact time keeps", "a margin a real clock keeps"])
def test_a_divergence_shown_only_by_exact_time_is_marked_so(tmp_path, wait, timeout, exact_only):
    """moto counts the 12-hour ceiling from the send: a change just under it, counted from a receive `wait` s
    after the send, diverges on its virtual clock either way; judged as a real clock would judge the same case,
    1.5 s is inside the band the tolerance and the evidence's hedge leave open, 3.08 s is not."""
    import json

    from sqs_conformance.adapters.moto_target import MotoTarget
    from sqs_conformance.conformance.session import Session
    from sqs_conformance.conformance.trace import TraceWriter
    from sqs_conformance.model.values import ChangeMessageVisibility, CreateQueue, ReceiveMessage, SendMessage

    target = MotoTarget()
    trace = TraceWriter(tmp_path / "trace.jsonl", columnar=False)
    try:
        session = Session(target, "sqs-standard", run_id="t", case=1, trace=trace)
        for advance, op in ((0, CreateQueue("q", {})), (0, SendMessage("q", "m1")), (wait, ReceiveMessage("q", 1)),
                            (0, ChangeMessageVisibility("q", "rh-1", timeout))):
            session.advance(advance)
            step = session.execute(op)
    finally:
        trace.close()
        target.close()
    assert [d.rule for d in step.reported] == ["VIS-CEILING-FROM-RECEIVE"]
    last = json.loads((tmp_path / "trace.jsonl").read_text().splitlines()[-1])
    assert last["exact_timing_only"] is exact_only


def test_a_concurrent_findings_script_replays_it_with_threads_on_an_endpoint(moto_server, tmp_path):
    """RULE.py of a concurrent finding (a fault among consumers of an in-house queue) run against moto's server,
    which hides what it hands out: the replay ends, judged, as not reproduced."""
    from sqs_conformance.conformance.concurrent.command import run_clients
    from sqs_conformance.conformance.concurrent.run import ConcurrentOptions
    from tests.concurrent.targets import ForgetfulConsumers

    result = run_clients(ForgetfulConsumers("sqs-standard"), "sqs-standard",
                         ConcurrentOptions(clients=3, cases=6, seed=1, mode="drawn"), tmp_path)
    assert "RCV-EXCLUSIVE" in result.findings
    script = tmp_path / "concurrent" / "RCV-EXCLUSIVE" / "RULE.py"
    done = subprocess.run([sys.executable, str(script), "--endpoint-url", moto_server.url, "--tries", "2"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RCV-EXCLUSIVE not shown in 2 tries" in done.stdout
