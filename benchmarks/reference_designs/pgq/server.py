"""A private PostgreSQL 15 for the target: Debian's binaries, initdb into a temporary folder, 127.0.0.1 only (and a
socket folder inside that folder), waited for, and stopped by its process id (SIGINT, PostgreSQL's fast shutdown,
then SIGKILL), the folder removed afterwards."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.servers import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
USER = "pgq"  # the database superuser initdb creates; trust authentication, on loopback and the private socket only


def _as_server_user(account: pwd.struct_passwd | None):
    """In the child: PostgreSQL refuses to run as root, so a root parent runs it as Debian's `postgres` account;
    then (after the uid change, which would clear it) ask for SIGQUIT, PostgreSQL's immediate shutdown, should the
    parent die before it stops the server."""

    def switch() -> None:
        if account is not None:
            os.setgid(account.pw_gid)
            os.setgroups([])
            os.setuid(account.pw_uid)
        if sys.platform.startswith("linux"):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGQUIT)  # PR_SET_PDEATHSIG

    return switch


class PostgresServer:
    """One postmaster serving on 127.0.0.1:port. `stop()` ends it by its pid and removes its folder."""

    def __init__(self, *, start_timeout: float = 60.0) -> None:
        for tool in ("initdb", "postgres"):
            if not (BIN / tool).is_file():
                raise TargetError(f"{BIN / tool} is missing (Debian: apt-get install postgresql-15); or point "
                                  "SQS_CONFORMANCE_POSTGRES_URL at a PostgreSQL of yours")
        account = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        self.scratch = Path(tempfile.mkdtemp(prefix="sqs-conformance-pg-"))
        self.data = self.scratch / "data"
        self.socket_dir = self.scratch / "socket"
        self.socket_dir.mkdir()
        if account is not None:
            for folder in (self.scratch, self.socket_dir):
                os.chown(folder, account.pw_uid, account.pw_gid)
        self.port = free_port()
        self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"
        self.process: subprocess.Popen[bytes] | None = None
        self._log = open(self.scratch / "server.log", "ab")
        try:
            subprocess.run([str(BIN / "initdb"), "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8",
                            "--no-sync", "--no-instructions"], check=True, stdout=self._log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, preexec_fn=_as_server_user(account), cwd=self.scratch)
            command = [str(BIN / "postgres"), "-D", str(self.data), "-p", str(self.port),
                       "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.socket_dir}",
                       # a scratch server for tests: durability buys nothing here
                       "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                       "-c", "max_connections=200"]
            self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True,
                                            preexec_fn=_as_server_user(account), cwd=self.scratch)
            self._wait_until_accepting(start_timeout)
        except BaseException as error:
            self.stop()
            if isinstance(error, subprocess.CalledProcessError):
                raise TargetError(f"initdb failed (exit code {error.returncode})") from None
            raise

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def _wait_until_accepting(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise TargetError(f"postgres exited at start (exit code {self.process.returncode})")
            try:
                with psycopg.connect(self.url, connect_timeout=2):
                    return
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise TargetError(f"postgres did not accept connections on 127.0.0.1:{self.port} within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                os.kill(self.process.pid, signal.SIGINT)  # fast shutdown: disconnects clients, then exits
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:
                pass
        if not self._log.closed:
            self._log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def start_postgres() -> PostgresServer:
    return PostgresServer()
