"""What makes a moved clock cheap: the witnesses shared out between servers of their own (a move moves a server's
clock for all its clients), started at once and outliving the threads that started them, and a libfaketime whose
waits on the monotonic clock keep their deadlines (else every waiting thread of a Python server spins)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.servers import FakeTime, LocalServer, free_port

# A wait of 0.3 s on a condition variable of the monotonic clock, as CPython's GIL waits, timed.
_MONOTONIC_WAIT = """
import ctypes, time
libc = ctypes.CDLL(None)
class timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
attr, cond, mutex = (ctypes.create_string_buffer(64) for _ in range(3))
libc.pthread_condattr_init(attr)
libc.pthread_condattr_setclock(attr, 1)  # CLOCK_MONOTONIC
libc.pthread_cond_init(cond, attr)
libc.pthread_mutex_init(mutex, None)
libc.pthread_mutex_lock(mutex)
deadline = timespec()
libc.clock_gettime(1, ctypes.byref(deadline))
deadline.tv_sec, deadline.tv_nsec = divmod(deadline.tv_sec * 10**9 + deadline.tv_nsec + 300_000_000, 10**9)
started = time.monotonic()
libc.pthread_cond_timedwait(cond, mutex, ctypes.byref(deadline))
print(time.monotonic() - started)
"""


def test_under_libfaketime_a_wait_on_the_monotonic_clock_lasts_its_time_on_a_moved_clock(tmp_path):
    """libfaketime's default on this glibc recomputes such a deadline from the faked time, years in the past: the
    wait returns at once, and a Python server's threads then spin for the GIL (10 times the CPU)."""
    faketime = FakeTime(tmp_path)
    faketime.shift(25 * 3600)
    waited = subprocess.run([sys.executable, "-c", _MONOTONIC_WAIT], capture_output=True, text=True, timeout=60,
                            env={**os.environ, **faketime.env})
    assert waited.returncode == 0, waited.stderr
    assert 0.25 <= float(waited.stdout) < 5


def test_a_server_started_from_a_passing_thread_outlives_it(tmp_path):
    """Servers started at once are started from threads that end; the signal that stops a server with the suite
    comes when the thread that started it ends, so they are started from one that lasts."""
    started: list[LocalServer] = []
    port = free_port()
    thread = threading.Thread(target=lambda: started.append(LocalServer(
        "sleeper", [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)], port)))
    thread.start()
    thread.join()
    (server,) = started
    try:
        time.sleep(1)
        assert server.process.poll() is None, "the server ended with the thread that started it"
    finally:
        server.stop()
    assert server.process.poll() is not None


# A suite that starts a server ignoring SIGTERM (as LocalStack on a moved clock did) and dies without a cleanup.
_DIES_WITH_A_SERVER = """
import os, sys
from sqs_conformance.adapters.servers import LocalServer
port = int(sys.argv[1])
deaf = ("import signal, sys, http.server; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "http.server.test(HandlerClass=http.server.SimpleHTTPRequestHandler, bind='127.0.0.1', port=int(sys.argv[1]))")
server = LocalServer("deaf", [sys.executable, "-c", deaf, str(port)], port, disposable=sys.argv[2] == "yes")
print(server.process.pid, flush=True)
os._exit(1)
"""


def test_a_disposable_server_dies_with_the_suite_even_one_deaf_to_sigterm():
    """A server on a moved clock holds nothing to keep: killed outright when the suite dies before its cleanup, even
    one that ignores SIGTERM (the signal any other server is sent, to end in its own way)."""
    def pid_left_by(disposable: bool) -> int:
        died = subprocess.run([sys.executable, "-c", _DIES_WITH_A_SERVER, str(free_port()),
                               "yes" if disposable else "no"], capture_output=True, text=True, timeout=60)
        return int(died.stdout.split()[0])

    def alive(pid: int, for_seconds: float = 5.0) -> bool:
        deadline = time.monotonic() + for_seconds
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            time.sleep(0.05)
        return True

    deaf = pid_left_by(disposable=False)
    try:
        assert alive(deaf, 1.0)  # the SIGTERM it was sent did not end it
    finally:
        os.kill(deaf, 9)
    assert not alive(pid_left_by(disposable=True))

class _Opened:
    closed = 0

    def close(self) -> None:
        type(self).closed += 1


def test_servers_that_do_not_open_are_left_out_and_a_target_without_more_gives_none(monkeypatch):
    from sqs_conformance.conformance import runner

    monkeypatch.setattr(runner, "MOVED_CLOCK_SERVERS", 5)
    calls = iter(range(100))

    def another():
        if next(calls) == 1:
            raise TargetError("a server that did not start")
        return _Opened()

    first = SimpleNamespace(clock=SimpleNamespace(kind="shifted"), another_connection=another)
    opening = runner._servers_opening([first])
    assert opening is not None and len(list(opening.arrivals(lambda: True))) == 3  # 4 asked for, one failed
    assert len(opening.stop()) == 3
    assert runner._servers_opening([first] * 5) is None  # as many jobs as servers already
    alone = SimpleNamespace(clock=SimpleNamespace(kind="shifted"), another_connection=lambda: None)
    opening = runner._servers_opening([alone])
    assert opening is not None and list(opening.arrivals(lambda: True)) == [] and opening.stop() == []



def test_a_server_whose_opening_a_stop_reaches_is_left_out_quietly(monkeypatch):
    """Ctrl-C reaching a server's probe (its waits give way to the stop) ends that opening: no traceback from its
    thread, no failure to report, and the witnesses are not kept waiting for it."""
    from sqs_conformance.adapters.interrupt import Interrupted
    from sqs_conformance.conformance import runner

    monkeypatch.setattr(runner, "MOVED_CLOCK_SERVERS", 3)
    escaped: list[type] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_type))

    def another():
        raise Interrupted()

    first = SimpleNamespace(clock=SimpleNamespace(kind="shifted"), another_connection=another)
    opening = runner._servers_opening([first])
    assert opening is not None
    gives_up = time.monotonic() + 5
    assert list(opening.arrivals(lambda: time.monotonic() < gives_up)) == []
    assert time.monotonic() < gives_up and opening.failures == [] and escaped == []

def test_servers_join_as_they_open_and_one_opening_once_no_witness_is_left_is_closed(monkeypatch):
    """The witnesses never wait for a server: each is taken as it opens, while witnesses are left to play; one
    still starting when they are all taken is closed once it opens."""
    from sqs_conformance.conformance import runner

    monkeypatch.setattr(runner, "MOVED_CLOCK_SERVERS", 4)
    calls, late = iter(range(100)), _Opened()

    def another():
        if next(calls) == 0:
            time.sleep(3)  # stuck at its start, as a LocalStack of a dozen started at once once was
            return late
        time.sleep(0.1)
        return _Opened()

    _Opened.closed = 0
    first = SimpleNamespace(clock=SimpleNamespace(kind="shifted"), another_connection=another)
    started = time.monotonic()
    opening = runner._servers_opening([first])
    assert opening is not None
    taken = []
    for target in opening.arrivals(lambda: len(taken) < 2):  # two witnesses left to take a server each
        taken.append(target)
    assert len(taken) == 2 and late not in taken and time.monotonic() - started < 2
    assert opening.stop() == taken
    deadline = time.monotonic() + 10
    while _Opened.closed < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _Opened.closed == 1, "the late server was not closed once it opened"


def test_the_witnesses_start_on_the_connections_there_are_and_take_each_arrival_while_some_are_left():
    """Played on the model: the first connection starts at once, an arrival once it has played plays a share of
    the rest, and none is asked for once every witness was taken."""
    from sqs_conformance.adapters.model_target import ModelTarget
    from sqs_conformance.conformance import witnesses
    from sqs_conformance.conformance.witnesses.replay import Replayed

    catalogue = witnesses.load("sqs-standard", "virtual")
    asked: list[str] = []

    def arrivals(wanted):
        while not parts[0].played:  # a server opening once the first has played a witness: it did not wait
            time.sleep(0.001)
        asked.append("second")
        yield ModelTarget("sqs-standard")
        while wanted():
            time.sleep(0.05)
        asked.append("after the last witness was taken")

    parts: list[Replayed] = []
    first = ModelTarget("sqs-standard")
    result = witnesses.replay([first], catalogue, run_id="t", trace=None, case_ids=iter(range(10_000)),
                              parts=parts, arrivals=arrivals)
    assert result.played == len(witnesses.distinct_witnesses(catalogue.witnesses))
    assert len(parts) == 2 and parts[0].played > 0 and parts[1].played > 0
    assert asked == ["second", "after the last witness was taken"]


def test_on_a_moved_clock_the_witnesses_needing_no_move_share_the_first_server_and_the_others_have_servers_of_their_own(
        monkeypatch):
    """A witness that never moves the clock is played on a connection to the first server that never moves it,
    beside the others like it; one that moves it, on a server of its own on a clock of its own (or on the first
    once no held connection uses it), which takes the others too once none that moves the clock is left."""
    import importlib
    import math

    from sqs_conformance.adapters.endpoint import EmulatorTarget
    from sqs_conformance.conformance import runner, witnesses
    from sqs_conformance.conformance.runner import RunOptions, run
    from sqs_conformance.conformance.witnesses.catalogue import HELD_WAIT_MAX

    replay_module = importlib.import_module("sqs_conformance.conformance.witnesses.replay")
    monkeypatch.setattr(runner, "MOVED_CLOCK_SERVERS", 3)
    monkeypatch.setattr(runner, "HELD_CONNECTIONS", 2)
    real_load, real_one, played = witnesses.load, replay_module._replay_one, []

    def some(*args):
        held, moving = witnesses.held_and_moving(real_load(*args))
        return replace(held, witnesses=held.witnesses[:10] + moving.witnesses[:6])

    def one(target, profile, pace, witness, *args, **kwargs):
        played.append((target, witness))
        return real_one(target, profile, pace, witness, *args, **kwargs)

    monkeypatch.setattr(witnesses, "load", some)
    monkeypatch.setattr(replay_module, "_replay_one", one)
    target = EmulatorTarget("moto-server", time_travel=True)
    try:
        result = run([target], "sqs-standard", RunOptions(seed=1, search=False))
    finally:
        target.close()
    assert result.spent.witnesses_played == result.spent.witnesses_in_all == len(played) == 16 and not result.errors

    def moves(witness) -> bool:
        return any(advance > HELD_WAIT_MAX for advance, _ in witness.steps)

    at_first = {c for c, _ in played if getattr(c.clock, "settle", None) == math.inf}
    extras = {c for c, _ in played if c not in at_first and c is not target}
    assert sum(moves(w) for _, w in played) == 6 and not any(moves(w) for c, w in played if c in at_first)
    assert 1 <= len(at_first) <= 2 and all(c.client.meta.endpoint_url == target.server.url for c in at_first)
    assert all(c.clock.kind == "shifted" for c in at_first)  # the server's moved time, never moved by them
    assert extras and len({c.server.url for c in extras} | {target.server.url}) == len(extras) + 1
    assert len({c.faketime.file for c in extras}) == len(extras) and all(c.clock is not target.clock for c in extras)
    assert len({id(c.budget) for c in [target, *at_first, *extras]}) == 1
    for extra in extras:  # stopped with the witnesses' phase, their offset files gone
        assert extra.server.process.poll() is not None and not Path(extra.faketime.file).exists()


def test_a_moved_clock_emulator_that_cannot_start_more_servers_still_plays_every_witness(monkeypatch):
    """Servers of their own are a speed-up, not a condition: where none more starts, the one plays them all."""
    from sqs_conformance.adapters.endpoint import EmulatorTarget
    from sqs_conformance.conformance import witnesses
    from sqs_conformance.conformance.runner import RunOptions, run

    real_load = witnesses.load
    monkeypatch.setattr(witnesses, "load", lambda *a: replace(real_load(*a), witnesses=real_load(*a).witnesses[:4]))
    monkeypatch.setattr(EmulatorTarget, "another_connection",
                        lambda self: (_ for _ in ()).throw(TargetError("no more servers here")))
    target = EmulatorTarget("moto-server", time_travel=True)
    try:
        result = run([target], "sqs-standard", RunOptions(seed=1, search=False))
    finally:
        target.close()
    assert result.spent.witnesses_played == result.spent.witnesses_in_all > 0 and not result.errors


def test_an_emulators_extra_server_is_probed_by_one_move_and_settles_as_the_first():
    """The first server of an emulator on a moved clock takes the whole time-travel probe; another of the same
    build under the same libfaketime shows by one move of 31 s that it follows a file of its own (no long jump: on
    LocalStack each costs most of a second of CPU), and settles each advance as the first does, however short the
    lag its one move happened to show."""
    from sqs_conformance.adapters.endpoint import TIME_TRAVEL_JUMP, EmulatorTarget
    from sqs_conformance.adapters.servers import offset_in

    first = EmulatorTarget("moto-server", time_travel=True)
    try:
        first.clock.settle = 1.25  # as if it scanned once a second (moto's server reads its timers on demand)
        extra = first.another_connection()
        assert extra is not None
        try:
            assert offset_in(Path(first.faketime.file)) == TIME_TRAVEL_JUMP + 3 * 31
            assert offset_in(Path(extra.faketime.file)) == 31
            assert extra.faketime.file != first.faketime.file and extra.clock.kind == "shifted"
            assert extra.clock.settle == 1.25 and extra.clock.scan_watch is not None
        finally:
            extra.close()
    finally:
        first.close()


def test_spare_servers_start_beside_the_first_and_each_stops_with_its_connection_or_the_first():
    """`spares` servers start as soon as the first is up, while it is probed: `another_connection` takes them (no
    server started then), each on a clock of its own and probed as an extra; one taken stops with its connection,
    and those never taken stop when the first is closed, their offset files gone."""
    from sqs_conformance.adapters.endpoint import EmulatorTarget

    first = EmulatorTarget("moto-server", time_travel=True, spares=2)
    try:
        assert first._spares is not None
        spares = list(first._spares._untaken)
        started = [future.result(timeout=60) for future in spares]  # up with no connection asked for yet
        extra = first.another_connection()
        assert extra is not None
        try:
            assert extra.server is started[0][0] and extra.faketime is started[0][1]
            assert extra.clock.kind == "shifted" and extra.faketime.file != first.faketime.file
        finally:
            extra.close()
        assert started[0][0].process.poll() is not None and started[1][0].process.poll() is None
    finally:
        first.close()
    for server, faketime in started:
        assert server.process.poll() is not None and not Path(faketime.file).exists()


def test_a_spare_that_did_not_start_is_its_takers_error_and_the_rest_still_stop(monkeypatch, tmp_path):
    """A spare whose start failed is the error of the connection that takes it (the runner leaves that one out);
    a stop with spares still starting stops each as it comes up."""
    from sqs_conformance.adapters import emulators

    real_start = emulators.start

    def start(emu, home=emulators.EMULATORS_HOME, faketime=None, say=lambda message: None):
        if threading.current_thread().name == "moved-server-0":  # the first to be taken
            raise TargetError("no room for another server")
        time.sleep(0.5)  # still starting when stopped below
        return real_start(emu, home, faketime, say)

    monkeypatch.setattr(emulators, "start", start)
    spares = emulators.MovedServersStarting(emulators.emulator("moto-server"), 2, tmp_path)
    try:
        spares.take()
    except TargetError as error:
        assert "no room" in str(error)
    else:
        raise AssertionError("a spare that did not start was taken")
    untaken = list(spares._untaken)
    spares.stop()
    assert spares.take() is None
    server, faketime = untaken[0].result(timeout=60)
    deadline = time.monotonic() + 30  # stopped by the thread that started it, once up
    while (server.process.poll() is None or Path(faketime.file).exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.process.poll() is not None and not Path(faketime.file).exists()
