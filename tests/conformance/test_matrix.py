"""The emulator matrix: installing and starting emulators on loopback, the time-travel probe, the page it writes."""

import datetime
import os
import platform
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

import boto3
import pytest

from sqs_conformance.adapters import emulators
from sqs_conformance.adapters.base import ShiftedClock, TargetError
from sqs_conformance.adapters.scan_sentinel import ScanSentinel
from sqs_conformance.adapters.endpoint import EmulatorTarget, TimeTravelUnsupported, settle_for
from sqs_conformance.conformance import matrix
from sqs_conformance.conformance.runner import MOVED_CLOCK_SERVERS
from sqs_conformance.model.rules import rules_for
from tests.loopback import LOOPBACK_V4, listening_addresses
from tests.cli import SQS_CONFORMANCE


@pytest.mark.skipif(shutil.which("npm") is None, reason="Node.js and npm are needed for the npm emulators")
def test_an_npm_emulator_is_installed_in_its_own_folder_and_served_on_loopback_only(tmp_path):
    emu = emulators.EMULATORS["fauxqs"]
    server = emulators.start(emu, home=tmp_path)
    try:
        assert (tmp_path / "fauxqs-1.9.2" / "node_modules" / "fauxqs").is_dir()
        assert listening_addresses(server.port) == {LOOPBACK_V4}
        client = boto3.client("sqs", endpoint_url=server.url, region_name="us-east-1",
                              aws_access_key_id="x", aws_secret_access_key="x")
        url = client.create_queue(QueueName="matrix-test")["QueueUrl"]
        client.send_message(QueueUrl=url, MessageBody="hello")
        assert client.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "hello"
    finally:
        server.stop()
    assert server.process.poll() is not None
    installed_at = (tmp_path / "fauxqs-1.9.2" / "installed.json").stat().st_mtime
    emulators.install(emu, home=tmp_path)  # already there: nothing is done again
    assert (tmp_path / "fauxqs-1.9.2" / "installed.json").stat().st_mtime == installed_at


def test_a_failed_install_is_one_line_naming_its_log(tmp_path):
    broken = emulators.Emulator("ministack", "0.0.0-none", "pip", ("ministack==0.0.0-none",))
    with pytest.raises(TargetError, match=r"installing ministack 0.0.0-none failed \(see .*install.log\)"):
        emulators.install(broken, home=tmp_path)
    assert not (tmp_path / "ministack-0.0.0-none" / "installed.json").exists()


def test_an_unknown_emulator_is_refused_in_one_line():
    with pytest.raises(TargetError, match="unknown emulator 'nope'; known: moto-server, localstack"):
        emulators.emulator("nope")
    result = subprocess.run([*SQS_CONFORMANCE, "matrix", "--emulator", "nope", "--no-page"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "unknown emulator nope" in result.stderr


@pytest.mark.parametrize("fifo", [False, True])
def test_an_emulator_whose_clock_libfaketime_cannot_move_is_refused_for_time_travel(monkeypatch, fifo):
    """moto's server with a libfaketime that moves nothing stands for an emulator timing on the monotonic clock:
    the probe must notice that the hidden message never came back, and the server must be stopped. It probes a
    queue of the kind the run will use (a FIFO queue's messages may come back by other timers)."""
    from sqs_conformance.adapters import servers

    monkeypatch.setattr(servers.FakeTime, "shift", lambda self, offset: self.file.write_text("+0\n"))
    started = []
    real_start = emulators.start
    monkeypatch.setattr(emulators, "start", lambda *a, **k: started.append(real_start(*a, **k)) or started[-1])
    with pytest.raises(TimeTravelUnsupported, match="stayed hidden after the clock moved 31 s"):
        EmulatorTarget("moto-server", time_travel=True, fifo=fifo)
    assert started and started[0].process.poll() is not None


def test_the_time_travel_probe_of_a_fifo_run_uses_a_fifo_queue(monkeypatch):
    created = []
    real_check = EmulatorTarget._check_time_travel

    def spy(self, fifo, *more):
        real_create = self.client.create_queue
        self.client.create_queue = lambda **kw: created.append(kw) or real_create(**kw)
        return real_check(self, fifo, *more)

    monkeypatch.setattr(EmulatorTarget, "_check_time_travel", spy)
    target = EmulatorTarget("moto-server", time_travel=True, fifo=True)  # moto keeps time under libfaketime
    target.close()
    (queue,) = created
    assert queue["QueueName"].endswith(".fifo") and queue["Attributes"]["FifoQueue"] == "true"


def test_a_shifted_clock_moves_at_once_but_lets_the_last_seconds_of_an_advance_pass_in_real_time():
    shifts = []
    clock = ShiftedClock(shifts.append, settle=0.4)
    started, real_started = clock.now(), time.monotonic()
    clock.advance(100)
    assert shifts == [pytest.approx(99.6)] and time.monotonic() - real_started >= 0.4
    assert clock.now() - started == pytest.approx(100, abs=0.2)
    clock.advance(0.3)  # shorter than the settling: a real wait, no move
    assert len(shifts) == 1 and clock.now() - started == pytest.approx(100.3, abs=0.2)
    unsettled = ShiftedClock(shifts.append)
    real_started = time.monotonic()
    unsettled.advance(3600)
    assert shifts[-1] == 3600 and time.monotonic() - real_started < 0.2


class _Watch:
    """A scan watch that sees the scan `after` seconds into its wait (None: never), recording what it was asked."""

    def __init__(self, after: float | None) -> None:
        self.after, self.armed, self.waits = after, 0, []

    def arm(self, jump: float, within: float) -> str | None:
        if jump < 1.5:  # too short for a delay that real time cannot pass
            return None
        self.armed += 1
        return f"mark-{self.armed}"

    def seen(self, mark: str, within: float) -> bool:
        self.waits.append((mark, within))
        if self.after is None or self.after > within:
            time.sleep(within)
            return False
        time.sleep(self.after)
        return True


def test_a_shifted_clock_ends_the_settling_at_the_scan_it_sees_and_passes_the_rest_at_once():
    shifts = []
    clock = ShiftedClock(shifts.append, settle=1.25)
    clock.scan_watch = watch = _Watch(after=0.6)
    started = clock.now()
    clock.advance(100)
    # the jump, then the settling's rest once the scan was seen: the clock moved the whole advance
    assert watch.waits == [("mark-1", pytest.approx(1.25, abs=0.05))]
    assert len(shifts) == 2 and shifts[0] == pytest.approx(98.75, abs=0.01) and 99.0 < shifts[1] < 99.5
    assert clock.now() - started == pytest.approx(100, abs=0.3)
    # a scan seen at once after the jump came more than a period before the end: the rest is waited
    clock.scan_watch = _Watch(after=0.0)
    clock.advance(100)
    assert len(shifts) == 3 and shifts[2] - shifts[1] == pytest.approx(98.75, abs=0.01)
    assert clock.now() - started == pytest.approx(200, abs=0.3)


def test_a_shifted_clock_waits_the_settling_out_where_no_scan_is_seen_and_watches_no_short_jump():
    shifts = []
    clock = ShiftedClock(shifts.append, settle=1.25)
    clock.scan_watch = watch = _Watch(after=None)
    started = clock.now()
    clock.advance(100)
    assert shifts == [pytest.approx(98.75, abs=0.01)] and watch.armed == 1  # as without a watch: the rest in real time
    assert clock.now() - started == pytest.approx(100, abs=0.1)
    clock.advance(2.5)  # a jump of 1.25 s: too short for the watch to arm
    assert watch.armed == 1 and shifts[-1] == pytest.approx(98.75 + 1.25, abs=0.01)
    assert clock.now() - started == pytest.approx(102.5, abs=0.1)


@pytest.mark.parametrize("lags, settle", [([], 0.0), ([0.02, 0.06, 0.01], 0.0), ([0.3, 0.7, 0.2], 1.25),
                                          ([0.95, 1.05, 0.13], 1.3)])
def test_settling_is_none_for_timers_read_on_demand_and_a_scan_period_with_a_margin_else(lags, settle):
    assert settle_for(lags) == pytest.approx(settle)


def test_an_emulator_that_brings_messages_back_on_a_periodic_scan_is_given_the_time_for_one_after_each_move(
        monkeypatch):
    """moto's server seeing each move of its clock 0.6 s late stands for an emulator that requeues on a scan once a
    second (LocalStack): after an instant jump past a deadline its next scan is still up to a period away, where a
    real wait would have scanned. The probe measures that lag; each advance then waits for the scan, seen through
    a message of the run's own that only a scan after the jump can release (or the settling's second and more),
    so the step after it finds what the wait released, as it would on a real clock."""
    from sqs_conformance.adapters import servers

    real_shift = servers.FakeTime.shift
    moves: queue.SimpleQueue = queue.SimpleQueue()
    closed = threading.Event()

    def view() -> None:  # each move seen 0.6 s after it is made, in the order made, until the target closes
        while (move := moves.get()) is not None:
            due, faketime, offset = move
            time.sleep(max(0.0, due - time.monotonic()))
            if not closed.is_set():
                real_shift(faketime, offset)

    threading.Thread(target=view, daemon=True).start()

    def seen_late(self, offset):
        if not offset:
            return real_shift(self, offset)
        moves.put((time.monotonic() + 0.6, self, offset))

    monkeypatch.setattr(servers.FakeTime, "shift", seen_late)
    target = EmulatorTarget("moto-server", time_travel=True)
    try:
        assert target.clock.settle == pytest.approx(1.25)
        url = target.client.create_queue(QueueName=f"{target.prefix}scan", tags=target.tags)["QueueUrl"]
        target.client.send_message(QueueUrl=url, MessageBody="m")
        assert target.client.receive_message(QueueUrl=url, VisibilityTimeout=30).get("Messages")
        for _ in range(2):
            started = target.clock.now()
            target.clock.advance(31)
            assert target.clock.now() - started == pytest.approx(31, abs=0.5)
            assert target.client.receive_message(QueueUrl=url, VisibilityTimeout=30).get("Messages"), \
                "the message the move released"
        # each advance armed the sentinel, and ended when its message came back through the server's late view of
        # the move (or, on a machine too busy for that within the settling, once the settling was over)
        watch = target.clock.scan_watch
        assert isinstance(watch, ScanSentinel) and watch.caught_up + watch.waited_out == 2
        sentinels = f"{target.prefix}scan-sentinel"
        assert target.client.list_queues(QueueNamePrefix=sentinels).get("QueueUrls"), "a queue of the run's own"
        watch.close()  # as the target's close does
        assert not target.client.list_queues(QueueNamePrefix=sentinels).get("QueueUrls")
    finally:
        closed.set()
        moves.put(None)
        target.close()


def test_the_matrix_checks_on_a_real_clock_what_cannot_travel_in_time(monkeypatch, tmp_path):
    """Stands the model in for the emulator, so the fallback and the cell's verdicts come from a real run."""
    from sqs_conformance.adapters.model_target import ModelTarget

    asked = []

    def make_targets(spec, profile, options=None, jobs=1, say=None):
        asked.append((spec, jobs, options.moved_spares if options is not None else 0))
        if spec.endswith(":faketime"):
            raise TimeTravelUnsupported("its timers do not follow the wall clock")
        return [ModelTarget(profile) for _ in range(jobs)]

    monkeypatch.setattr(matrix, "make_targets", make_targets)
    cell = matrix.check("local-aws-sqs", "sqs-standard", examples=3, steps=5, seed=1, out_dir=tmp_path, budget=0)
    # the moved attempt had its witnesses' servers started beside the first
    assert asked == [("local-aws-sqs:faketime", 1, MOVED_CLOCK_SERVERS - 1),
                     ("local-aws-sqs", matrix.REAL_CLOCK_JOBS, 0)]
    assert cell.clock == "real" and not cell.error and cell.cases >= 3
    assert set(cell.verdicts) == {r.id for r in rules_for("sqs-standard")}
    assert "diverges" not in cell.verdicts.values() and "conforms" in cell.verdicts.values()
    assert (tmp_path / "local-aws-sqs" / "sqs-standard" / "trace.jsonl").is_file()


def test_a_real_clock_matrix_never_moves_an_emulator_and_witnesses_only_searches_nothing(monkeypatch, tmp_path):
    from sqs_conformance.adapters.model_target import ModelTarget

    asked = []

    def make_targets(spec, profile, options=None, jobs=1, say=None):
        asked.append(spec)
        return [ModelTarget(profile) for _ in range(jobs)]

    monkeypatch.setattr(matrix, "make_targets", make_targets)
    witnesses_only = matrix.check("fauxqs", "sqs-standard", examples=3, steps=5, seed=1, out_dir=tmp_path,
                                  real_clock=True, search=False)
    searched = matrix.check("fauxqs", "sqs-standard", examples=3, steps=5, seed=1, out_dir=tmp_path / "s",
                            real_clock=True, budget=0)
    assert asked == ["fauxqs", "fauxqs"] and witnesses_only.clock == "real"
    assert witnesses_only.cases < searched.cases  # the witnesses, then at least one round of three cases


def test_an_emulator_that_does_not_start_is_a_cell_with_its_error(monkeypatch, tmp_path):
    def make_targets(spec, profile, options=None, jobs=1, say=None):
        raise TargetError("localstack exited at start (exit code 1)")

    monkeypatch.setattr(matrix, "make_targets", make_targets)
    cell = matrix.check("localstack", "sqs-fifo", examples=3, steps=5, seed=1, out_dir=tmp_path)
    assert cell.error == "localstack exited at start (exit code 1)" and not cell.verdicts


def cells():
    rules = [r.id for r in rules_for("sqs-standard")]
    good = matrix.Cell("fauxqs", "sqs-standard", "1.9.2", "libfaketime", 12.0, 40,
                       {r: "conforms" for r in rules} | {"VIS-TERMINATE": "diverges", "VIS-CEILING": "not exercised"},
                       checked="2026-11-21T10:15:00+00:00", command="sqs-conformance matrix --emulator fauxqs",
                       suite="sqs-conformance 0.1.0", machine="2 cores, CPython 3.11.7",
                       witnesses_played=60, witnesses_in_all=105, ran_out_in="witnesses")
    broken = matrix.Cell("localstack", "sqs-standard", error="localstack exited at start (exit code 1)",
                         checked="2026-11-21T10:20:00+00:00", command="sqs-conformance matrix --emulator localstack",
                         suite="sqs-conformance 0.1.0", machine="2 cores, CPython 3.11.7")
    return [good, broken]


WRITTEN = datetime.datetime(2026, 11, 21, 11, 0, tzinfo=datetime.UTC)


def test_the_matrix_table_has_a_row_per_rule_and_a_column_per_emulator():
    text = matrix.markdown(cells())
    assert "| rule | fauxqs 1.9.2 | localstack |" in text
    assert "| VIS-TERMINATE | **✗** | — |" in text
    assert "| VIS-CEILING | · | — |" in text
    assert "| VIS-EXTEND-NONADDITIVE | ✓ | — |" in text
    assert "| diverging rules | 1 | — |" in text
    assert "| minutes | 0.2 | 0.0 |" in text
    assert "- localstack (sqs-standard) was not checked: localstack exited at start (exit code 1)" in text
    # a cell whose budget ran out before its witnesses all played says so, in the table and under it
    assert "| witnesses played | 60 of 105 | — |" in text
    assert "- fauxqs (sqs-standard): the budget ran out during the witnesses (60 of 105 played)" in text
    # two commands checked these cells: each column says which
    assert "| checked by | 1 | 2 |" in text
    # each column's day of measurement, under its name and version
    assert "| rule | fauxqs 1.9.2 | localstack |\n|---|---|---|\n| measured | 2026-11-21 | 2026-11-21 |\n" in text
    assert sum(line.startswith("| ") for line in text.splitlines()) == len(rules_for("sqs-standard")) + 8
    one_command = [matrix.Cell("fauxqs", "sqs-standard", "1.9.2", "real", 60.0, 10, {}, command="c",
                               witnesses_played=105, witnesses_in_all=105, ran_out_in="search")]
    text = matrix.markdown(one_command)
    assert "| witnesses played | 105 of 105 |" in text and "checked by" not in text and "budget ran out" not in text


def test_the_page_is_headed_with_when_by_what_on_which_versions_and_machine():
    text = matrix.page(cells(), "sqs-conformance matrix --merge a.json", WRITTEN)
    assert text.startswith("# Emulator matrix\n")
    assert "| written | 2026-11-21 11:00 UTC by `sqs-conformance matrix --merge a.json` |" in text
    assert "| checked | 2026-11-21 10:14 to 2026-11-21 10:20 UTC |" in text  # the first began 12 s before it ended
    # cells merged from two commands: each is named
    assert ("| checked by | 1. `sqs-conformance matrix --emulator fauxqs`; "
            "2. `sqs-conformance matrix --emulator localstack` (each cell's below) |") in text
    assert "| emulators | fauxqs 1.9.2 |" in text  # localstack never started: no version to show
    assert "| suite | sqs-conformance 0.1.0 |" in text and "| machine | 2 cores, CPython 3.11.7 |" in text
    # Every emulator and profile not on the page is named: a stopped matrix says what it lacks.
    assert "**Incomplete:** not checked: moto-server on sqs-standard, ministack on sqs-standard," in text
    assert "fauxqs on sqs-fifo" in text and "fauxqs on sqs-standard," not in text
    assert text.endswith(matrix.markdown(cells()))


def test_a_complete_page_says_nothing_is_missing_and_cells_of_older_matrices_say_they_are_unrecorded():
    rules = {r.id: "conforms" for r in rules_for("sqs-standard")}
    every = [matrix.Cell(e, p, "1", "real", 60.0, 10, rules) for p in matrix.PROFILES for e in emulators.EMULATORS]
    text = matrix.page(every, "sqs-conformance matrix", WRITTEN)
    assert "Incomplete" not in text
    assert "| checked | not recorded |" in text and "| machine | not recorded |" in text


def test_the_machine_and_the_suite_are_described_in_one_line():
    assert matrix.machine().startswith(f"{os.cpu_count()} cores, ") and platform.python_version() in matrix.machine()
    assert matrix.suite_version().startswith("sqs-conformance ")


def test_the_page_is_written_whole_and_its_folder_made(tmp_path):
    path = tmp_path / "docs" / "emulators.md"
    matrix.write_page(path, "first\n")
    matrix.write_page(path, "second\n")
    assert path.read_text() == "second\n" and [p.name for p in path.parent.iterdir()] == ["emulators.md"]


def test_matrices_checked_side_by_side_are_merged_into_one_page(tmp_path):
    first, second = cells()
    matrix.save([first], tmp_path / "a.json")
    matrix.save([second], tmp_path / "b.json")
    assert matrix.load([tmp_path / "a.json", tmp_path / "b.json"]) == [first, second]
    # an emulator checked again: the later file's cell takes the earlier one's place
    again = matrix.Cell("fauxqs", "sqs-standard", "1.9.2", "libfaketime", 30.0, 80, first.verdicts,
                        command="sqs-conformance matrix --emulator fauxqs --budget 600")
    matrix.save([again], tmp_path / "again.json")
    assert matrix.load([tmp_path / "a.json", tmp_path / "b.json", tmp_path / "again.json"]) == [again, second]
    page = tmp_path / "site" / "emulators.md"
    result = subprocess.run([*SQS_CONFORMANCE, "matrix", "--merge", str(tmp_path / "a.json"),
                             "--merge", str(tmp_path / "b.json"), "--page", str(page)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1  # one emulator was not checked
    text = page.read_text()
    assert "| rule | fauxqs 1.9.2 | localstack |" in text
    assert f"by `sqs-conformance matrix --merge {tmp_path / 'a.json'} --merge {tmp_path / 'b.json'} --page" in text
    assert "| checked | 2026-11-21 10:14 to 2026-11-21 10:20 UTC |" in text
    # --no-page writes nothing, and prints the tables
    result = subprocess.run([*SQS_CONFORMANCE, "matrix", "--merge", str(tmp_path / "a.json"), "--no-page",
                             "--page", str(tmp_path / "other.md")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "| rule | fauxqs 1.9.2 |" in result.stdout
    assert not (tmp_path / "other.md").exists()
    (tmp_path / "bad.json").write_text("{}")
    result = subprocess.run([*SQS_CONFORMANCE, "matrix", "--merge", str(tmp_path / "bad.json"),
                             "--no-page"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "is not a matrix.json written by" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_page_that_cannot_be_written_is_refused_in_one_line_before_anything_is_checked(tmp_path):
    (tmp_path / "file").write_text("")
    result = subprocess.run([*SQS_CONFORMANCE, "matrix", "--emulator", "fauxqs", "--page",
                             str(tmp_path / "file" / "emulators.md")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "cannot write the page" in result.stderr and "against" not in result.stdout


def test_an_emulator_that_stops_keeping_time_after_a_large_jump_is_refused_for_time_travel(monkeypatch):
    """A clock that moves for seconds but not after hours of jump stands for an emulator whose sleeps break
    there: its lateness would be the probe's, not its own."""
    from sqs_conformance.adapters import servers

    real_shift = servers.FakeTime.shift
    monkeypatch.setattr(servers.FakeTime, "shift",
                        lambda self, offset: real_shift(self, offset if offset < 3600 else 0.0))
    with pytest.raises(TimeTravelUnsupported, match="after the clock moved 25 h under libfaketime it no longer"):
        EmulatorTarget("moto-server", time_travel=True)


def test_a_server_that_dies_during_the_time_travel_probe_is_one_line_and_stopped(monkeypatch):
    from sqs_conformance.adapters import servers

    started = []
    real_start = emulators.start
    monkeypatch.setattr(emulators, "start", lambda *a, **k: started.append(real_start(*a, **k)) or started[-1])
    monkeypatch.setattr(servers.FakeTime, "shift", lambda self, offset: started and started[0].stop())
    with pytest.raises(TargetError, match="moto-server:faketime: the time-travel probe failed: "):
        EmulatorTarget("moto-server", time_travel=True)
    assert started[0].process.poll() is not None


def test_an_emulator_checked_with_many_clients_gets_their_table_on_its_profile(monkeypatch, tmp_path):
    """Stands the model (and a model with a fault among consumers) in for emulators: the clients' run is real."""
    from sqs_conformance.adapters.model_target import ModelTarget
    from tests.concurrent.targets import ForgetfulConsumers

    def make_targets(spec, profile, options=None, jobs=1, say=None):
        return [ForgetfulConsumers(profile) if spec == "fauxqs" else ModelTarget(profile)]

    monkeypatch.setattr(matrix, "make_targets", make_targets)
    good, faulty = matrix.Cell("moto-server", "sqs-fifo", "5"), matrix.Cell("fauxqs", "sqs-fifo", "1")
    for cell in (good, faulty):
        matrix.check_clients(cell, 4, cases=4, seed=2, out_dir=tmp_path)
    assert good.clients == 4 and not good.concurrent_error and good.concurrent_cases == 4
    assert good.concurrent["RCV-EXCLUSIVE"] == "conforms" and "diverges" not in good.concurrent.values()
    assert faulty.concurrent["RCV-EXCLUSIVE"] == "diverges"
    assert (Path(faulty.concurrent_findings) / "RCV-EXCLUSIVE" / "TIMELINE.txt").is_file()
    text = matrix.markdown([good, faulty])
    table = text[text.index("### sqs-fifo: 4 clients on one queue"):]
    assert "| rule | moto-server 5 | fauxqs 1 |" in table
    assert "| RCV-EXCLUSIVE | ✓ | **✗** |" in table
    assert "Checked 20" in table and " UTC by a command not recorded" in table  # dated, whatever the command
    # a cell checked without clients gets no such table
    assert "clients on one queue" not in matrix.markdown([matrix.Cell("moto-server", "sqs-fifo", "5")])
