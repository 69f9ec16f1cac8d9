"""Servers the suite starts itself: bound to 127.0.0.1, waited for, and stopped by their process id."""

from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sqs_conformance.adapters.base import TargetError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _end_with_parent(death: signal.Signals = signal.SIGTERM) -> None:
    """In the child, before it runs the server: on Linux, ask for `death` when the suite dies, so that a suite
    killed before its cleanup (SIGKILL, or a SIGTERM to a program without a handler) leaves no server behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, death)


def _killed_with_parent() -> None:
    _end_with_parent(signal.SIGKILL)


_SPAWNER: concurrent.futures.ThreadPoolExecutor | None = None
_SPAWNER_LOCK = threading.Lock()


def _from_a_lasting_thread(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """`start()` (a Popen) in the main thread or in one that lasts as long as the suite: the death signal asked for
    by `_end_with_parent` comes when the *thread* that started the child ends, so a server started in a passing
    thread (several started at once) would be stopped with it."""
    global _SPAWNER
    if threading.current_thread() is threading.main_thread():
        return start()
    with _SPAWNER_LOCK:
        if _SPAWNER is None:  # its one thread waits for work until the suite exits
            _SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="server-spawner")
    return _SPAWNER.submit(start).result()


class LocalServer:
    """A child process serving on 127.0.0.1:port. `stop()` ends it by its pid, whatever happens."""

    def __init__(self, name: str, command: list[str], port: int, *, env: dict[str, str] | None = None,
                 log: Path | None = None, start_timeout: float = 30.0, scratch: Path | None = None,
                 stop_grace: float = 10.0, disposable: bool = False) -> None:
        """`disposable`: nothing it holds is kept (a server on a moved clock), so the suite's death kills it outright:
        LocalStack on a moved clock ignored the SIGTERM, and one whose start a stopped suite left behind lived on."""
        self.name = name
        self.scratch = scratch  # a folder of the server's own state, removed when it stops
        self.stop_grace = stop_grace  # seconds between the SIGTERM that stops it and the SIGKILL
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self._log = open(log, "ab") if log is not None else subprocess.DEVNULL
        self.process = _from_a_lasting_thread(lambda: subprocess.Popen(
            command, env={**os.environ, **(env or {})}, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,  # its own group: stopping it stops its children
            preexec_fn=_killed_with_parent if disposable else _end_with_parent))
        try:
            self._wait_until_listening(start_timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_until_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise TargetError(f"{self.name} exited at start (exit code {self.process.returncode})")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise TargetError(f"{self.name} did not listen on 127.0.0.1:{self.port} within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, 15)
                self.process.wait(timeout=self.stop_grace)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, 9)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=10)
        if not isinstance(self._log, int):  # DEVNULL is a number, a log file an open file
            self._log.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


# The thread-safe build (Debian's package ships it beside the plain one). The plain build parses the offset file
# into one buffer all threads share, so a thread can read the unshifted time while another rereads the file
# (libfaketime's pull request 547, after Debian's 0.9.10). A server whose scheduler sleeps until a deadline taken
# from such a reading stalls for the whole offset: LocalStack did after a 25 h jump, and no hidden message came back.
FAKETIME_PLACES = tuple(f"{folder}/libfaketimeMT.so.1" for folder in (
    "/usr/lib/x86_64-linux-gnu/faketime", "/usr/lib/aarch64-linux-gnu/faketime", "/usr/lib/faketime",
    "/usr/local/lib/faketime"))


def faketime_library() -> str:
    for place in FAKETIME_PLACES:
        if Path(place).is_file():
            return place
    raise TargetError("libfaketime's thread-safe build (libfaketimeMT.so.1) is not installed (Debian: apt-get install "
                      "libfaketime)")


def faketime_env(file: Path) -> dict[str, str]:
    """The environment a server is started with to read its clock's offset from `file`: libfaketime's thread-safe
    build preloaded, the file reread on every call (no cache, or a move would be seen seconds late), and the
    monotonic clock left alone (event loops time their waits on it).

    FAKETIME_FORCE_MONOTONIC_FIX=0: a wait on a condition variable of the monotonic clock keeps its deadline as
    given. With the fix (libfaketime's default on glibc 2.30 and later) the deadline is recomputed from the faked
    time, which for the monotonic clock libfaketime counts from the faked wall time: every such deadline lands years
    in the past and every wait returns at once. Python's GIL waits so (CPython's condvars use the monotonic clock),
    so a thread waiting for the GIL spun, rereading the offset file each time: a faked server burnt 10 times the
    CPU of a plain one, and servers run side by side starved each other (benchmarks/moved_clock.py)."""
    return {"LD_PRELOAD": faketime_library(), "FAKETIME_TIMESTAMP_FILE": str(file), "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_FORCE_MONOTONIC_FIX": "0"}


# What the suite writes into an offset file, and all it accepts to find in one it is given (or nothing).
_OFFSET = re.compile(r"[+-]?[0-9]+(\.[0-9]*)?")


def offset_in(file: Path) -> float:
    """The offset (seconds) an offset file holds: 0 where it is missing or empty. Refused in one line where the
    suite could not write it (no such folder, a folder, not writable) or where it holds anything but an offset,
    which the suite never overwrites (a file given by mistake)."""
    if not file.parent.is_dir():
        raise TargetError(f"offset file {file}: no folder {file.parent} (the suite makes the file, not its "
                          f"folder)")
    if file.is_dir():
        raise TargetError(f"offset file {file} is a folder, not a file")
    if not os.access(file.parent, os.W_OK) or (file.exists() and not os.access(file, os.W_OK)):
        raise TargetError(f"offset file {file}: cannot write there")
    try:
        text = file.read_text(errors="replace").strip() if file.exists() else ""
    except OSError as error:
        raise TargetError(f"offset file {file}: cannot read it ({error.strerror})") from None
    if not text:
        return 0.0
    if not _OFFSET.fullmatch(text):
        raise TargetError(f"offset file {file} holds {text[:40]!r}, not an offset in seconds such as +0: the "
                          f"suite writes that file itself and overwrites nothing else (give a new path)")
    return float(text)


class FakeTime:
    """The clock of a server started under libfaketime: the offset it reads, from a file, on every call.
    `FakeTime(folder)` is a file of the suite's own, for a server it starts; `FakeTime.given(file)` is the file a
    server someone else started reads (`faketime_env(file)`)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._use(folder / f"faketime-{os.getpid()}-{free_port()}", base=0.0)

    @classmethod
    def given(cls, file: Path) -> FakeTime:
        """The offset file of a server the suite did not start: made if missing; the offset moves on from the one
        it holds (`base`), so that a server checked again never sees its clock go back."""
        faketime = cls.__new__(cls)
        faketime._use(file, base=offset_in(file))
        return faketime

    def _use(self, file: Path, base: float) -> None:
        self.file = file
        self.base = base  # the offset the file held: the server's clock reads this far ahead of real time at first
        self.shift(0.0)
        self.env = faketime_env(file)

    def shift(self, offset: float) -> None:
        # Written aside and renamed over: a server never reads a half-written (empty) offset.
        aside = self._aside()
        aside.write_text(f"{self.base + offset:+.6f}\n")
        os.replace(aside, self.file)

    def _aside(self) -> Path:
        return self.file.with_name(self.file.name + ".new")

    def remove(self) -> None:
        self.file.unlink(missing_ok=True)
        self._aside().unlink(missing_ok=True)
