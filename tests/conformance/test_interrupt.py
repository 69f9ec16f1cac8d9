"""Ctrl-C and SIGTERM stop a run, with real signals, against moto's server with eight jobs; the budget ends one.

A stopped run abandons the requests under way (some held unanswered by a proxy, as a dead connection would), deletes
the queues it created, keeps its trace valid and its findings so far, and exits 130; a second Ctrl-C exits at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import boto3
import pytest

from sqs_conformance.adapters import interrupt
from sqs_conformance.adapters.endpoint import QUEUE_PREFIX
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.adapters.moto_target import MotoTarget
from sqs_conformance.conformance.runner import RunInterrupted, RunOptions, run
from sqs_conformance.model.values import CreateQueue
from tests.fault_proxy import STALL, FaultProxy
from tests.cli import SQS_CONFORMANCE

# Bounds far from both sides: a stopped run ends in about a second (benchmarks/interrupt.py measures it), a run
# that is not stopped goes on for minutes, and a request held by the proxy lasts the client's 25 s read timeout.
STOPS_WITHIN = 10.0
STEPS_BEFORE_THE_SIGNAL = 150


def client_of(server):
    return boto3.client("sqs", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def queues_left(server) -> list[str]:
    return client_of(server).list_queues(QueueNamePrefix=QUEUE_PREFIX).get("QueueUrls", [])


def start_run(tmp_path: Path, url: str) -> subprocess.Popen:
    """The CLI against an endpoint on a real clock, eight jobs, in a process group of its own (as a shell runs it)."""
    return subprocess.Popen(
        [*SQS_CONFORMANCE, "run", "--target", "endpoint", "--endpoint-url", url, "--jobs", "8",
         "--out", str(tmp_path / "out")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})


def wait_for_steps(process: subprocess.Popen, trace: Path, steps: int) -> None:
    ends = time.monotonic() + 180
    while time.monotonic() < ends:
        assert process.poll() is None, process.communicate()
        if trace.exists() and trace.read_text().count("\n") >= steps:
            return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {steps} steps in {trace} after 180 s")


def stopped(process: subprocess.Popen, signals: list[tuple[int, bool]]) -> tuple[float, int, str]:
    """Sends each (signal, to the whole group?) 0.1 s apart; the seconds until the run exited, its code, stderr."""
    sent = time.monotonic()
    for number, (signum, to_group) in enumerate(signals):
        if number:
            time.sleep(0.1)
        if process.poll() is None:
            (os.killpg if to_group else os.kill)(process.pid, signum)
    stderr = exited(process, "the run did not stop within 120 s of the signal")
    return time.monotonic() - sent, process.returncode, stderr


def exited(process: subprocess.Popen, otherwise: str) -> str:
    """Its stderr once it has exited; if it has not within 120 s, its group killed and `otherwise` raised."""
    try:
        _, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(otherwise) from None
    return stderr


def assert_valid_trace(trace: Path) -> int:
    lines = trace.read_text().splitlines()
    for line in lines:
        record = json.loads(line)
        assert {"run_id", "case", "step", "operation", "response", "verdict"} <= set(record)
    return len(lines)


@pytest.mark.parametrize("signum, to_group", [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["ctrl-c to the group", "sigterm to the process"])
def test_a_signal_stops_a_real_clock_run_of_eight_jobs_with_requests_held_under_way(moto_server, tmp_path, signum,
                                                                                    to_group):
    # A fifth of the receives are held unanswered: when the signal comes, some jobs wait on a dead request.
    with FaultProxy(moto_server.url, (STALL,), rate=0.2, stalled=("ReceiveMessage",)) as proxy:
        process = start_run(tmp_path, proxy.url)
        wait_for_steps(process, tmp_path / "out" / "trace.jsonl", STEPS_BEFORE_THE_SIGNAL)
        assert proxy.done[STALL] > 0  # requests are being held
        seconds, code, stderr = stopped(process, [(signum, to_group)])
    assert code == 130, stderr
    assert seconds < STOPS_WITHIN, stderr
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith("sqs-conformance: interrupted (the queues it created were deleted"), line
    assert assert_valid_trace(tmp_path / "out" / "trace.jsonl") >= STEPS_BEFORE_THE_SIGNAL
    assert list((tmp_path / "out").glob("summary-*.json")), "the findings so far were not written"
    assert queues_left(moto_server) == []


def test_a_second_ctrl_c_exits_at_once(moto_server, tmp_path):
    with FaultProxy(moto_server.url, (STALL,), rate=0.2, stalled=("ReceiveMessage",)) as proxy:
        process = start_run(tmp_path, proxy.url)
        wait_for_steps(process, tmp_path / "out" / "trace.jsonl", STEPS_BEFORE_THE_SIGNAL)
        # The first stop waits half a second for the jobs held in requests: the second comes within it
        seconds, code, stderr = stopped(process, [(signal.SIGINT, True), (signal.SIGINT, True)])
    assert code == 130, stderr
    assert "stopped at once (a second interrupt)" in stderr
    assert "Traceback" not in stderr
    assert_valid_trace(tmp_path / "out" / "trace.jsonl")
    for url in queues_left(moto_server):  # what the second Ctrl-C left behind is not this test's to keep
        client_of(moto_server).delete_queue(QueueUrl=url)


class InterruptedAfter(MotoTarget):
    """moto in-process, where Ctrl-C comes after `steps` requests (as the signal handler would request it)."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.left = steps
        self.last = None  # the request during which Ctrl-C came

    def execute(self, op):
        self.left -= 1
        if self.left == 0:
            self.last = op
            interrupt.request()
        return super().execute(op)


@pytest.fixture
def clears_the_interrupt():
    yield
    interrupt.clear()


@pytest.mark.parametrize("steps, in_the_search", [(400, False), (3000, True)],
                         ids=["in the witnesses", "in the search"])
def test_an_interrupted_run_keeps_what_it_found_so_far(tmp_path, clears_the_interrupt, steps, in_the_search):
    target = InterruptedAfter(steps)
    try:
        with pytest.raises(RunInterrupted) as stopped_run:
            run(target, "sqs-standard", RunOptions(seed=3, out_dir=tmp_path, budget=None, examples=1000))
    finally:
        target.close()
    result = stopped_run.value.result
    assert result.findings, "moto diverges early on: some divergence was found before the interrupt"
    assert 0 < result.steps <= steps
    assert (result.rounds > 0) == in_the_search
    assert (result.spent.witnesses_played < result.spent.witnesses_in_all) == (not in_the_search)
    # Every request the target answered is traced, and none is sent after the stop; but a queue whose creation was
    # answered after the stop is deleted at once, its answer never used (adapters/sqs_api.py): not a step
    deleted_on_its_way = isinstance(target.last, CreateQueue)
    assert assert_valid_trace(tmp_path / "trace.jsonl") == steps - deleted_on_its_way


class SlowModel(ModelTarget):
    """The model as a queue, each answer 5 ms in coming: its witnesses (some 140, of several requests each) take
    seconds, whatever the model's own speed."""

    def execute(self, op):
        time.sleep(0.005)
        return super().execute(op)


def test_a_budget_spent_in_the_witnesses_leaves_the_search_no_round_and_says_so():
    result = run(SlowModel("sqs-standard"), "sqs-standard", RunOptions(seed=1, budget=0.2))
    spent = result.spent
    assert spent.ran_out_in == "witnesses"
    assert spent.witnesses_played < spent.witnesses_in_all
    assert result.rounds == 0
    assert any(line.startswith("the search got no round") for line in spent.lines(result.rounds))


def test_a_budget_ends_a_round_under_way():
    # A round of 100,000 cases would take hours: the budget ends it at its next step
    result = run(ModelTarget("sqs-standard"), "sqs-standard", RunOptions(seed=1, budget=3.0, witnesses=False,
                                                                         examples=100_000, shrink=False))
    assert result.spent.ran_out_in == "search"
    assert result.rounds == 1 and 0 < result.cases < 100_000
    assert not [line for line in result.spent.lines(result.rounds) if line.startswith("the search got no round")]


def test_a_run_with_no_budget_plays_every_witness():
    result = run(ModelTarget("sqs-standard"), "sqs-standard", RunOptions(seed=1, search=False))
    assert result.spent.ran_out_in is None
    assert result.spent.witnesses_played == result.spent.witnesses_in_all > 0


def test_a_budget_ends_a_case_that_only_waits():
    """A machine step that only lets time pass (on a real clock, a sleep) is stopped by the budget as a request
    is: a case of waits alone must not carry a run past its budget."""
    import time

    from sqs_conformance.adapters.base import RealClock
    from sqs_conformance.conformance.session import BudgetSpent, Session

    target = ModelTarget("sqs-standard")
    target.clock = RealClock()
    session = Session(target, "sqs-standard", run_id="t", case=1, trace=None, deadline=time.monotonic() + 0.3)
    waited = 0
    with pytest.raises(BudgetSpent):
        for _ in range(100):  # 50 s of waits, were the budget not kept
            session.advance(0.5)
            waited += 1
    assert waited == 1  # the second wait begins past the deadline


def test_a_budget_spent_in_the_witnesses_leaves_no_queue_of_their_extra_connections(moto_server):
    """On a real clock the witnesses are played on more connections than the jobs'; those are the run's to close,
    also when the budget ends the witnesses."""
    from sqs_conformance.adapters.endpoint import EndpointTarget

    jobs = [EndpointTarget(endpoint_url=moto_server.url, local_credentials=True) for _ in range(2)]
    try:
        result = run(jobs, "sqs-standard", RunOptions(seed=1, budget=2.0, search=False))
    finally:
        for job in jobs:
            job.close()
    assert result.spent.ran_out_in == "witnesses"
    assert queues_left(moto_server) == []


def test_a_signal_stops_a_run_of_eight_clients_on_one_queue_with_requests_held_under_way(moto_server, tmp_path):
    with FaultProxy(moto_server.url, (STALL,), rate=0.2, stalled=("ReceiveMessage",)) as proxy:
        process = subprocess.Popen(
            [*SQS_CONFORMANCE, "run", "--target", "endpoint", "--endpoint-url", proxy.url, "--clients", "8",
             "--examples", "50", "--out", str(tmp_path / "out")],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
        ends = time.monotonic() + 120
        while not proxy.done[STALL] and time.monotonic() < ends:  # the clients are under way, one of them held
            assert process.poll() is None, process.communicate()
            time.sleep(0.2)
        assert proxy.done[STALL]
        seconds, code, stderr = stopped(process, [(signal.SIGINT, True)])
    assert code == 130, stderr
    assert seconds < STOPS_WITHIN, stderr
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith("sqs-conformance: interrupted (the queues it created were deleted"), line
    assert "no divergence so far" in line or "divergence(s) so far in" in line, line  # its findings' account
    trace = tmp_path / "out" / "trace.jsonl"  # kept, with every case checked before the signal
    assert trace.exists() and all(json.loads(line)["client"] is not None for line in trace.open())
    assert queues_left(moto_server) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_a_check_spread_over_processes_and_leaves_none_behind(tmp_path, signum):
    """A stored concurrent history large enough to be searched by several processes: Ctrl-C or SIGTERM (to the
    group, as a shell sends Ctrl-C) while they work ends the check as stopped, with every process of it, each of
    several times (a worker of a Pool that died of the signal once got replaced by a copy that never started, and
    the check never exited; a worker that dies of it is taken for a lost one)."""
    from benchmarks.interrupt import stored_history
    from sqs_conformance.conformance.concurrent.spread import SPREAD_FROM

    history = stored_history(tmp_path / "history.jsonl", size=int(SPREAD_FROM * 1.5))
    for _ in range(3):
        process = check_searching(history)
        seconds, code, stderr = stopped(process, [(signum, True)])
        assert code == 130 and seconds < STOPS_WITHIN and "Traceback" not in stderr, stderr
        ends = time.monotonic() + STOPS_WITHIN
        while group_alive(process.pid):
            assert time.monotonic() < ends, "a process of the check outlived it"
            time.sleep(0.05)


def test_a_check_whose_searching_process_is_killed_ends_with_one_line_and_leaves_none_behind(tmp_path):
    """One of the processes searching a stored history's parts killed as the out-of-memory killer would: the check
    says so in one line and exits 1 (a pool of multiprocessing's waited for its answer for ever), every other
    process of it gone."""
    from benchmarks.interrupt import stored_history
    from sqs_conformance.conformance.concurrent.spread import SPREAD_FROM

    history = stored_history(tmp_path / "history.jsonl", size=int(SPREAD_FROM * 1.5))
    process = check_searching(history)
    searching = [int(pid) for task in Path(f"/proc/{process.pid}/task").iterdir()
                 for pid in (task / "children").read_text().split()]
    os.kill(searching[0], signal.SIGKILL)
    stderr = exited(process, "the check did not end within 120 s of losing a process")
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith("sqs-conformance: error: a checking process was killed"), line
    assert not group_alive(process.pid), "a process of the check outlived it"


def check_searching(history: Path) -> subprocess.Popen:
    """`check` of the stored history, in a process group of its own, once its processes are searching."""
    from benchmarks.interrupt import has_children

    process = subprocess.Popen([*SQS_CONFORMANCE, "check", str(history)], cwd=history.parent,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    ends = time.monotonic() + 120
    while not has_children(process):
        assert process.poll() is None and time.monotonic() < ends, process.communicate()
        time.sleep(0.02)
    return process


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def servers_of(folder: Path) -> list[int]:
    """The moto servers running in `folder` (the run's, whose working folder they inherit)."""
    found = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            if Path(os.readlink(cwd)) == folder and b"moto.server" in (cwd.parent / "cmdline").read_bytes():
                found.append(int(cwd.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def test_ctrl_c_stops_a_moved_clock_run_while_its_servers_open_and_leaves_none_behind(tmp_path):
    """The witnesses play on the first server while the others open: Ctrl-C then ends the run, every server it
    started, the ones still opening too."""
    process = subprocess.Popen(
        [*SQS_CONFORMANCE, "run", "--target", "moto-server:faketime", "--witnesses-only", "--out",
         str(tmp_path / "out")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_steps(process, tmp_path / "out" / "trace.jsonl", 5)
    assert servers_of(tmp_path), "no server on a moved clock started"
    seconds, code, stderr = stopped(process, [(signal.SIGINT, True)])
    assert code == 130 and seconds < STOPS_WITHIN and "Traceback" not in stderr, stderr
    ends = time.monotonic() + STOPS_WITHIN
    while servers_of(tmp_path):
        assert time.monotonic() < ends, f"servers outlived the run: {servers_of(tmp_path)}"
        time.sleep(0.1)
