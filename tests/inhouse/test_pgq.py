"""The PostgreSQL design (benchmarks/reference_designs/pgq): its server, its answers step by step on its virtual clock
(seeds 000-003, EVIDENCE.md), and the suite run against it and its race variants as a black box."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from benchmarks.reference_designs.pgq.server import PostgresServer
from benchmarks.reference_designs.pgq.target import URL_VARIABLE, PostgresQueue
from benchmarks.reference_designs.pgq.variants import VARIANTS
from sqs_conformance.adapters.base import Unsupported
from sqs_conformance.model.values import (
    BatchOk,
    ChangeEntry,
    ChangeMessageVisibility,
    ChangeMessageVisibilityBatch,
    CreateQueue,
    DeleteEntry,
    DeleteMessage,
    DeleteMessageBatch,
    Error,
    GetQueueAttributes,
    Ok,
    PeekMessage,
    PurgeQueue,
    ReceiveMessage,
    ReceiveOk,
    SendMessage,
    SendOk,
    SetQueueAttributes,
)

REPOSITORY = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not Path("/usr/lib/postgresql/15/bin/initdb").is_file(),
                                reason="PostgreSQL 15 is not installed (Debian: apt-get install postgresql-15)")


@pytest.fixture
def queue(shared_postgres):
    target = PostgresQueue("sqs-standard")
    assert target.execute(CreateQueue("q", {"VisibilityTimeout": 30})) == Ok()
    assert isinstance(target.execute(SendMessage("q", "hello")), SendOk)
    yield target
    target.close()


def receive(target: PostgresQueue, queue_name: str = "q", **kwargs: object) -> ReceiveOk:
    answer = target.execute(ReceiveMessage(queue_name, **kwargs))
    assert isinstance(answer, ReceiveOk), answer
    return answer


def at(target: PostgresQueue, t: float) -> None:
    target.clock.advance_to(t)


def _listening(port: int) -> list[tuple[str, str]]:
    """(family, local address) of every listening TCP socket on `port`, from /proc/net."""
    found = []
    for family in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{family}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.append((family, address))
    return found


# --- the server ------------------------------------------------------------------------------------------------


def test_the_server_listens_on_127_0_0_1_only(shared_postgres):
    assert _listening(shared_postgres.port) == [("tcp", "0100007F")]  # 127.0.0.1, and no IPv6 socket
    with psycopg.connect(shared_postgres.url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        socket_dir = conn.execute("SHOW unix_socket_directories").fetchone()[0]
    assert Path(socket_dir).is_relative_to(shared_postgres.scratch)


def test_the_server_is_stopped_by_its_pid_and_its_folder_removed():
    server = PostgresServer()
    pid, scratch = server.pid, server.scratch
    assert pid is not None and scratch.is_dir()
    server.stop()
    assert server.process is not None and server.process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not scratch.exists()
    assert _listening(server.port) == []


def test_without_a_url_the_target_starts_its_own_server_and_close_stops_it(monkeypatch):
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    target = PostgresQueue("sqs-standard")
    server = target._server
    assert server is not None and server.pid is not None
    assert target.execute(CreateQueue("q")) == Ok()
    target.close()
    assert server.process is not None and server.process.poll() is not None
    assert not server.scratch.exists()


def test_targets_sharing_a_server_keep_apart_and_reset_forgets_every_queue(shared_postgres):
    one, other = PostgresQueue("sqs-standard"), PostgresQueue("sqs-standard")
    try:
        assert one.execute(CreateQueue("q")) == Ok()
        assert isinstance(one.execute(SendMessage("q", "x")), SendOk)
        assert other.execute(ReceiveMessage("q")).code == "QueueDoesNotExist"
        one.reset()
        assert one.execute(ReceiveMessage("q")).code == "QueueDoesNotExist"
    finally:
        one.close()
        other.close()
    with psycopg.connect(shared_postgres.url) as conn:  # close() dropped each target's schema
        assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pgq\\_%'").fetchone() == (0,)


def test_only_the_standard_profile_is_spoken():
    assert PostgresQueue.profiles == frozenset({"sqs-standard"})


# --- the queue, step by step -----------------------------------------------------------------------------------


def test_a_received_message_is_hidden_then_returns_with_a_new_handle(queue):
    first = receive(queue)
    assert [(m.body, m.receive_count, m.first_receive_ms) for m in first.messages] == [("hello", 1, 0)]
    at(queue, 29.999)
    assert receive(queue).messages == ()
    at(queue, 30)
    again = receive(queue).messages
    assert [(m.receive_count, m.first_receive_ms) for m in again] == [(2, 0)]
    assert again[0].receipt_handle != first.messages[0].receipt_handle
    assert again[0].message_id == first.messages[0].message_id


def test_the_receive_override_is_for_that_receive_only(queue):
    receive(queue, visibility_timeout=5)
    at(queue, 5)
    assert len(receive(queue).messages) == 1
    at(queue, 34.9)
    assert receive(queue).messages == ()
    assert queue.execute(GetQueueAttributes("q")).attributes["VisibilityTimeout"] == "30"


def test_a_change_counts_from_the_call_and_zero_releases(queue):
    handle = receive(queue).messages[0].receipt_handle
    at(queue, 20)
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", handle, 60)), Error)  # to 80, not 90
    at(queue, 79.9)
    assert receive(queue).messages == ()
    at(queue, 80)
    again = receive(queue).messages[0]
    at(queue, 81)
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", again.receipt_handle, 0)), Error)
    assert len(receive(queue).messages) == 1  # and the next receive used the queue's 30 s, not the 60


def test_the_ceiling_counts_from_the_receive_and_is_not_reset(queue):
    at(queue, 100)  # the time spent waiting does not count
    handle = receive(queue).messages[0].receipt_handle
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", handle, 43200)), Error)
    at(queue, 200)
    refused = queue.execute(ChangeMessageVisibility("q", handle, 43200))
    assert isinstance(refused, Error) and refused.code == "InvalidParameterValue"
    assert "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]" in refused.message
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", handle, 43100)), Error)


def test_a_stale_handle_changes_the_message_and_deletes_nothing(queue):
    old = receive(queue, visibility_timeout=0).messages[0].receipt_handle
    current = receive(queue).messages[0].receipt_handle
    assert queue.execute(DeleteMessage("q", old)) == Ok()  # accepted, but the message is someone else's now
    assert not isinstance(queue.execute(ChangeMessageVisibility("q", old, 0)), Error)  # takes effect
    assert len(receive(queue, visibility_timeout=0).messages) == 1
    assert current is not None


def test_deletes_and_the_handles_they_leave(queue):
    handle = receive(queue, visibility_timeout=1).messages[0].receipt_handle
    at(queue, 5)  # expired, not received again: the delete still deletes
    assert queue.execute(DeleteMessage("q", handle)) == Ok()
    assert queue.execute(DeleteMessage("q", handle)) == Ok()
    assert receive(queue).messages == ()
    gone = queue.execute(ChangeMessageVisibility("q", handle, 10))
    assert isinstance(gone, Error) and gone.code == "InvalidParameterValue"
    assert "Message does not exist or is not available for visibility timeout change" in gone.message
    malformed = queue.execute(DeleteMessage("q", "nonsense"))
    assert malformed == Error("ReceiptHandleIsInvalid",
                              'The input receipt handle "nonsense" is not a valid receipt handle.', 404)
    assert queue.execute(ChangeMessageVisibility("q", "nonsense", 10)).code == "ReceiptHandleIsInvalid"


def test_parameters_out_of_range_are_refused(queue):
    assert queue.execute(ReceiveMessage("q", max_messages=11)) == Error(
        "InvalidParameterValue",
        "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.")
    assert queue.execute(ReceiveMessage("q", wait_time_seconds=21)) == Error(
        "InvalidParameterValue",
        "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.")
    assert queue.execute(ReceiveMessage("q", visibility_timeout=43201)).code == "InvalidParameterValue"
    assert queue.execute(ReceiveMessage("q", visibility_timeout=-1)).code == "InvalidParameterValue"
    assert queue.execute(SendMessage("q", "x", delay_seconds=901)).code == "InvalidParameterValue"
    assert queue.execute(SetQueueAttributes("q", {"VisibilityTimeout": 43201})).code == "InvalidAttributeValue"
    assert queue.execute(CreateQueue("r", {"DelaySeconds": "-1"})).code == "InvalidAttributeValue"


def test_delay_hides_a_message_before_its_first_receive(queue):
    queue.execute(PurgeQueue("q"))
    assert isinstance(queue.execute(SendMessage("q", "later", delay_seconds=10)), SendOk)
    counts = queue.execute(GetQueueAttributes("q")).attributes
    assert (counts["ApproximateNumberOfMessagesDelayed"], counts["ApproximateNumberOfMessagesNotVisible"]) == ("1", "0")
    at(queue, 9.9)
    assert receive(queue).messages == ()
    at(queue, 10)
    assert [m.body for m in receive(queue).messages] == ["later"]


def test_a_long_poll_returns_when_a_message_falls_due_and_an_empty_one_waits_it_out(queue):
    receive(queue, visibility_timeout=7)
    answer = receive(queue, wait_time_seconds=20)
    assert len(answer.messages) == 1 and queue.clock.now() == 7
    assert receive(queue, wait_time_seconds=5).messages == () and queue.clock.now() == 12


def test_batches(queue):
    for body in ("a", "b"):
        queue.execute(SendMessage("q", body))
    handles = [m.receipt_handle for m in receive(queue, max_messages=10).messages]
    assert len(handles) == 3
    changed = queue.execute(ChangeMessageVisibilityBatch("q", (
        ChangeEntry("ok", handles[0], 0), ChangeEntry("bad", "nonsense", 0))))
    assert isinstance(changed, BatchOk) and changed.successful == ("ok",)
    assert [(f.id, f.code, f.sender_fault) for f in changed.failed] == [("bad", "ReceiptHandleIsInvalid", True)]
    deleted = queue.execute(DeleteMessageBatch("q", tuple(DeleteEntry(f"e{i}", h) for i, h in enumerate(handles))))
    assert isinstance(deleted, BatchOk) and len(deleted.successful) == 3
    assert queue.execute(DeleteMessageBatch("q", ())).code == "EmptyBatchRequest"
    eleven = tuple(DeleteEntry(f"e{i}", handles[0]) for i in range(11))
    assert queue.execute(DeleteMessageBatch("q", eleven)) == Error(
        "TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent 11.")
    twice = (DeleteEntry("x", handles[0]), DeleteEntry("x", handles[1]))
    assert queue.execute(DeleteMessageBatch("q", twice)).code == "BatchEntryIdsNotDistinct"
    assert queue.execute(DeleteMessageBatch("q", (DeleteEntry("no spaces", handles[0]),))).code == \
        "InvalidBatchEntryId"


def test_purge_removes_in_flight_messages_and_refuses_a_second_within_60_s(queue):
    receive(queue)
    assert queue.execute(PurgeQueue("q")) == Ok()
    at(queue, 30)
    assert receive(queue).messages == ()  # its 30 s are over, and it does not come back
    assert queue.execute(PurgeQueue("q")).code == "PurgeQueueInProgress"
    at(queue, 60)
    assert queue.execute(PurgeQueue("q")) == Ok()


def test_redrive_moves_a_message_to_the_dead_letter_queue_keeping_its_count(queue):
    assert queue.execute(CreateQueue("dlq")) == Ok()
    arn = queue.execute(GetQueueAttributes("dlq")).attributes["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})
    assert queue.execute(SetQueueAttributes("q", {"RedrivePolicy": policy})) == Ok()
    assert len(receive(queue, visibility_timeout=0).messages) == 1
    assert receive(queue).messages == ()  # a second receive would exceed 1: moved instead
    moved = receive(queue, "dlq").messages
    assert [(m.body, m.receive_count) for m in moved] == [("hello", 2)]


def test_unknown_queues_and_peek(queue):
    assert queue.execute(SendMessage("nowhere", "x")).code == "QueueDoesNotExist"
    with pytest.raises(Unsupported):
        queue.execute(PeekMessage("q"))


# --- the suite, as a black box ---------------------------------------------------------------------------------


def _run_suite(target: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqs_conformance.conformance", "run", "--target", target, "--profile", "sqs-standard",
         "--witnesses-only", "--out", str(out)],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=300)


def test_the_suite_finds_the_design_conforming(shared_postgres, tmp_path):
    done = _run_suite("python:benchmarks.reference_designs.pgq.target:PostgresQueue", tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "pgq conforms to sqs-standard" in done.stdout


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.__name__)
def test_each_race_variant_is_the_design_to_a_single_client(shared_postgres, tmp_path, variant):
    assert variant.__doc__ and "\n" not in variant.__doc__.strip()  # one line each
    done = _run_suite(f"python:benchmarks.reference_designs.pgq.variants:{variant.__name__}", tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
