"""`--target endpoint --faketime-file FILE`: a server the user started under libfaketime, its clock moved by the
suite through FILE, as `:faketime` moves the emulators it starts. The servers here are started as the user guide
says (the environment `sqs-conformance faketime-env FILE` prints), on 127.0.0.1, and stopped by their process id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.endpoint import QUEUE_PREFIX, RUN_TAG, EndpointTarget
from sqs_conformance.adapters.servers import FakeTime, free_port, offset_in
from sqs_conformance.model.values import CreateQueue, SendMessage
from tests.cli import SQS_CONFORMANCE


def faketime_env(file: Path) -> dict[str, str]:
    """What `sqs-conformance faketime-env FILE` prints, as the user guide's example reads it."""
    printed = subprocess.run([*SQS_CONFORMANCE, "faketime-env", str(file)], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    return dict(line.split("=", 1) for line in printed.splitlines())


class UserServer:
    """moto's server as a user starts it (`python3 -m moto.server -H 127.0.0.1 -p PORT`), under `env`."""

    def __init__(self, env: dict[str, str] | None = None, file: Path | None = None) -> None:
        self.file = file  # the offset file it reads, if any
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                        env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        self.client = boto3.client("sqs", endpoint_url=self.url, region_name="us-east-1",
                                   aws_access_key_id="testing", aws_secret_access_key="testing")
        deadline = time.monotonic() + 30
        while True:
            try:
                self.client.list_queues()
                return
            except Exception:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise
                time.sleep(0.1)

    def queues(self) -> list[str]:
        return [url.rsplit("/", 1)[1] for url in self.client.list_queues().get("QueueUrls", [])]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    """moto's server started under libfaketime reading a file of its own, which does not exist yet (the suite
    makes it), and a queue of someone else's on it."""
    file = tmp_path_factory.mktemp("clock") / "sqs-clock"
    env = faketime_env(file)
    file.unlink()  # the suite writes it, made if missing: the server waits for it on the real clock
    server = UserServer(env, file)
    server.client.create_queue(QueueName="someone-elses-queue")
    yield server
    server.stop()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*SQS_CONFORMANCE, *args], capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_the_printed_environment_preloads_the_thread_safe_libfaketime_on_an_absolute_file_it_makes(tmp_path,
                                                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = faketime_env(Path("clock"))
    assert Path(env["LD_PRELOAD"]).is_file() and env["LD_PRELOAD"].endswith("libfaketimeMT.so.1")
    assert env["FAKETIME_TIMESTAMP_FILE"] == str(tmp_path / "clock")
    assert (tmp_path / "clock").read_text() == "+0.000000\n"
    assert env["FAKETIME_NO_CACHE"] == env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"
    assert env["FAKETIME_FORCE_MONOTONIC_FIX"] == "0"


def test_a_witnesses_run_moves_the_users_server_and_checks_the_12_hour_ceiling_in_minutes(moved, tmp_path):
    out = tmp_path / "runs"
    started = time.monotonic()
    done = run("run", "--target", "endpoint", "--endpoint-url", moved.url, "--faketime-file", str(moved.file),
               "--witnesses-only", "--profile", "sqs-standard", "--seed", "1", "--out", str(out))
    seconds = time.monotonic() - started
    assert done.returncode in (0, 1), done.stderr  # moto diverges on rules of its own (docs/emulators.md)
    (summary,) = [json.loads(path.read_text()) for path in out.glob("summary-*.json")]
    name = f"endpoint:127.0.0.1:{moved.port}:faketime"
    assert summary["target"] == name and f"{name} " in done.stdout
    assert not summary["errors"] and not summary["never_decisive"]
    assert summary["time"]["witnesses_played"] == summary["time"]["witnesses_in_all"] > 0
    for rule_id in ("VIS-CEILING", "VIS-CEILING-NO-RESET"):  # 12 hours a case, run in minutes
        assert summary["verdicts"][rule_id] == "conforms" and summary["rules"][rule_id]["decisive"] > 0
    records = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    assert {r["clock"] for r in records} == {"shifted"}
    assert max(r["complete"] - min(s["invoke"] for s in records if s["case"] == r["case"]) for r in records) > 43200
    assert seconds < 600
    # The server's clock was moved through the file, forward only, and is left where the run left it ...
    assert offset_in(moved.file) > 25 * 3600
    # ... the server still runs, the suite's queues are gone and nobody else's was touched; no key was printed
    assert moved.process.poll() is None
    assert moved.queues() == ["someone-elses-queue"]
    assert "testing" not in done.stdout + done.stderr
    # The last lines say how to replay a finding on the same moved clock
    if done.returncode == 1:
        assert f"confirm --target endpoint --endpoint-url {moved.url} --faketime-file {moved.file} " in done.stdout


def test_several_servers_of_the_users_share_out_the_witnesses_each_on_its_own_clock(tmp_path):
    """`--endpoint-url A --faketime-file FA --endpoint-url B --faketime-file FB`: the witnesses play on both
    servers, each probed and moved through its own file; one that does not follow its file is left out, said in
    one line, and the witnesses are all played on the others."""
    files = [tmp_path / f"clock-{i}" for i in range(3)]
    servers = [UserServer(faketime_env(file), file) for file in files[:2]]
    stray = UserServer()  # started without libfaketime: its clock does not follow files[2]
    try:
        out = tmp_path / "runs"
        pairs = [word for server, file in [(servers[0], files[0]), (servers[1], files[1]), (stray, files[2])]
                 for word in ("--endpoint-url", server.url, "--faketime-file", str(file))]
        done = run("run", "--target", "endpoint", *pairs, "--witnesses-only", "--profile", "sqs-standard",
                   "--seed", "1", "--out", str(out))
        assert done.returncode in (0, 1), done.stderr
        (summary,) = [json.loads(path.read_text()) for path in out.glob("summary-*.json")]
        assert summary["time"]["witnesses_played"] == summary["time"]["witnesses_in_all"] > 0
        assert not summary["errors"]
        assert all(offset_in(file) > 25 * 3600 for file in files[:2])  # each moved past its probe's jump
        said = " ".join(done.stdout.split())  # as read, whatever the width it was wrapped to
        assert "1 of the witnesses' other servers did not open" in said
        (why,) = summary["time"]["servers_left_out"]
        assert f"127.0.0.1:{stray.port}" in why and "stayed hidden after the clock moved 31 s" in why
        assert all(server.queues() == [] for server in [*servers, stray])  # every queue of the run deleted
    finally:
        for server in [*servers, stray]:
            server.stop()


def test_a_second_target_on_the_same_file_moves_the_clock_on_from_where_it_was(moved):
    before = offset_in(moved.file)
    target = EndpointTarget(endpoint_url=moved.url, local_credentials=True, faketime=FakeTime.given(moved.file))
    try:
        assert target.name.endswith(":faketime") and target.clock.kind == "shifted"
        assert offset_in(moved.file) >= before + 25 * 3600  # its own probe's jump, from the earlier offset
        target.execute(CreateQueue("q", {}))
        target.execute(SendMessage("q", "m"))
        url = target.url("q")
        sent = int(target.client.receive_message(QueueUrl=url, AttributeNames=["SentTimestamp"])
                   ["Messages"][0]["Attributes"]["SentTimestamp"]) / 1000
        assert abs(sent - (target.clock.epoch_zero + target.clock.now())) < 5  # the server's clock is the target's
        assert target.another_connection() is None  # one server, one clock: one job
    finally:
        target.close()


@pytest.mark.parametrize("how", ["without libfaketime", "reading another file"])
def test_a_server_that_does_not_follow_the_file_is_refused_in_one_line(how, tmp_path):
    other = tmp_path / "other-clock"
    server = UserServer(faketime_env(other) if how == "reading another file" else None)
    try:
        done = run("run", "--target", "endpoint", "--endpoint-url", server.url, "--faketime-file",
                   str(tmp_path / "clock"), "--witnesses-only", "--out", str(tmp_path / "runs"))
        line = one_line(done)
        assert "stayed hidden after the clock moved 31 s through" in line and "faketime-env" in line
        assert server.queues() == []  # the probe's queue is deleted, refused or not
        assert offset_in(tmp_path / "clock") > 0  # the suite made the file and moved it; the server did not follow
        assert not (tmp_path / "runs").exists()
    finally:
        server.stop()


def test_cleanup_counts_ages_on_the_servers_moved_clock(moved, tmp_path):
    """A queue an interrupted run left: created on the moved clock, so hours ahead of the real one. Without the file
    its age is negative and no `--older-than` finds it."""
    if offset_in(moved.file) < 3600:  # alone, without the run above: its clock moved as a run moves it, first
        FakeTime.given(moved.file).shift(25 * 3600)
    moved.client.create_queue(QueueName=f"{QUEUE_PREFIX}0123456789-0-left", tags={RUN_TAG: "0123456789"})
    base = ["cleanup", "--target", "endpoint", "--endpoint-url", moved.url, "--older-than", "0"]
    try:
        without = run(*base)
        assert without.returncode == 0 and "0 leftover queue(s)" in without.stdout, without.stderr
        seen = run(*base, "--faketime-file", str(moved.file))
        assert seen.returncode == 0 and "would delete sqsconf-0123456789-0-left" in seen.stdout, seen.stderr
        assert "1 leftover queue(s)" in seen.stdout
    finally:
        moved.client.delete_queue(QueueUrl=moved.client.get_queue_url(
            QueueName=f"{QUEUE_PREFIX}0123456789-0-left")["QueueUrl"])


@pytest.mark.parametrize("args, message", [
    (["run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--faketime-file", "/nowhere/clock"],
     "offset file /nowhere/clock: no folder /nowhere"),
    (["run", "--target", "endpoint", "--faketime-file", "{tmp}/clock"], "--target endpoint needs --endpoint-url"),
    (["run", "--target", "aws", "--allow-real-aws", "--faketime-file", "{tmp}/clock"],
     "--target aws takes no --faketime-file"),
    (["run", "--target", "aws", "--faketime-file", "{tmp}/clock"], "--target aws takes no --faketime-file"),
    (["cleanup", "--target", "aws", "--faketime-file", "{tmp}/clock"], "--target aws takes no --faketime-file"),
    (["run", "--target", "moto-server", "--faketime-file", "{tmp}/clock"], "--target moto-server:faketime"),
    (["run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--faketime-file", "{tmp}/clock",
      "--jobs", "2"], "it runs one job"),
    (["run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--faketime-file", "{tmp}/notes.txt"],
     "holds 'my notes', not an offset"),
    (["faketime-env", "/nowhere/clock"], "no folder /nowhere"),
    (["run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--endpoint-url", "http://127.0.0.1:10",
      "--faketime-file", "{tmp}/clock"], "one --faketime-file for each --endpoint-url"),
    (["run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--faketime-file", "{tmp}/clock",
      "--endpoint-url", "http://127.0.0.1:10", "--faketime-file", "/nowhere/clock"], "no folder /nowhere"),
    (["cleanup", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--faketime-file", "{tmp}/clock",
      "--endpoint-url", "http://127.0.0.1:10", "--faketime-file", "{tmp}/clock2"], "takes one server"),
])
def test_what_cannot_be_moved_is_refused_in_one_line_before_anything_is_sent(args, message, tmp_path):
    (tmp_path / "notes.txt").write_text("my notes\n")
    done = run(*(arg.replace("{tmp}", str(tmp_path)) for arg in args), "--out", str(tmp_path / "runs")) \
        if args[0] == "run" else run(*(arg.replace("{tmp}", str(tmp_path)) for arg in args))
    assert message in one_line(done)
    assert (tmp_path / "notes.txt").read_text() == "my notes\n" and not (tmp_path / "clock").exists()


def test_an_offset_file_is_moved_on_from_its_offset_and_never_written_over_when_it_holds_anything_else(tmp_path):
    file = tmp_path / "clock"
    assert offset_in(file) == 0 and not file.exists()
    file.write_text("+100.5\n")
    faketime = FakeTime.given(file)
    assert faketime.base == 100.5 and file.read_text() == "+100.500000\n"
    faketime.shift(3600)
    assert file.read_text() == "+3700.500000\n" and offset_in(file) == 3700.5
    file.write_text("@2020-01-01 00:00:00\n")
    with pytest.raises(TargetError, match="not an offset"):
        FakeTime.given(file)
    assert file.read_text() == "@2020-01-01 00:00:00\n"
    with pytest.raises(TargetError, match="is a folder"):
        FakeTime.given(tmp_path)
