"""Servers the suite starts itself: bound to 127.0.0.1, waited for, and stopped by their process id."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from sqs_conformance.adapters.base import TargetError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _end_with_parent() -> None:
    """In the child, before it runs the server: on Linux, ask for SIGTERM when the suite dies, so that a suite
    killed before its cleanup (SIGKILL, or a SIGTERM to a program without a handler) leaves no server behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalServer:
    """A child process serving on 127.0.0.1:port. `stop()` ends it by its pid, whatever happens."""

    def __init__(self, name: str, command: list[str], port: int, *, env: dict[str, str] | None = None,
                 log: Path | None = None, start_timeout: float = 30.0, scratch: Path | None = None) -> None:
        self.name = name
        self.scratch = scratch  # a folder of the server's own state, removed when it stops
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self._log = open(log, "ab") if log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdout=self._log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True,  # its own group: stopping it stops its children
                                        preexec_fn=_end_with_parent)
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
                self.process.wait(timeout=10)
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


class FakeTime:
    """The clock of a server started under libfaketime: the offset it reads, from a file, on every call."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.file = folder / f"faketime-{os.getpid()}-{free_port()}"
        self.shift(0.0)
        self.env = {"LD_PRELOAD": faketime_library(), "FAKETIME_TIMESTAMP_FILE": str(self.file),
                    "FAKETIME_NO_CACHE": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}

    def shift(self, offset: float) -> None:
        # Written aside and renamed over: a server never reads a half-written (empty) offset.
        aside = self._aside()
        aside.write_text(f"+{offset:.6f}\n")
        os.replace(aside, self.file)

    def _aside(self) -> Path:
        return self.file.with_name(self.file.name + ".new")

    def remove(self) -> None:
        self.file.unlink(missing_ok=True)
        self._aside().unlink(missing_ok=True)
