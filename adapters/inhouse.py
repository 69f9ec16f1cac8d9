"""In-house queues: a Python class loaded by name, or any program speaking JSON lines over stdin/stdout.

Python (`--target python:package.module:Class`): a subclass of `adapters.base.Target` whose `execute(op)` takes
the operations of `model.values` and returns its responses. It is constructed with the profile's name, and its
`clock` is a `VirtualClock` the suite advances (the queue reads `clock.now()` as its time).

Process (`--target 'process:COMMAND ARGS…'`): the suite starts the command and speaks one JSON object per line
(docs/guide/inhouse.md specifies the protocol). Every request carries the suite's virtual time, so the queue behind it
needs no clock of its own.
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
from typing import IO, Any, cast
from collections.abc import Callable

from sqs_conformance.adapters.base import ProfileNotSpoken, Target, TargetError, Unsupported, VirtualClock
from sqs_conformance.model.codec import decode, encode
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.values import Operation, Response

PROTOCOL = 1
ANSWER_TIMEOUT = 30.0  # seconds a process may take to answer one request


def python_target(spec: str, profile: str) -> Target:
    """`python:package.module:Class`, imported from the current directory or the installed packages."""
    _, _, where = spec.partition(":")
    module_name, _, class_name = where.partition(":")
    if not module_name or not class_name:
        raise TargetError(f"--target {spec!r}: expected python:package.module:Class")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a team's adapter usually lives in the repository it is run from
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except ImportError as error:
        raise TargetError(f"--target {spec!r}: cannot import {module_name} ({error})") from None
    except AttributeError:
        raise TargetError(f"--target {spec!r}: {module_name} has no {class_name}") from None
    if not (isinstance(cls, type) and issubclass(cls, Target)):
        raise TargetError(f"--target {spec!r}: {class_name} is not a subclass of adapters.base.Target")
    declared = getattr(cls, "profiles", None)  # declared on the class: known before it is made
    if isinstance(declared, (set, frozenset)) and profile not in declared:
        raise ProfileNotSpoken(f"--target {spec!r}: {class_name} speaks {', '.join(sorted(declared))}, "
                               f"not {profile}")
    try:
        target = cast(Callable[[str], Target], cls)(profile)  # an in-house target is made from the profile name
    except Exception as error:  # the team's code: whatever it raises, the user gets one line
        raise TargetError(f"--target {spec!r}: {class_name}({profile!r}) failed: {error}") from None
    if target.clock.kind != "virtual":
        raise TargetError(f"--target {spec!r}: an in-house target runs on the suite's VirtualClock")
    return Guarded(target)


class Guarded(Target):
    """A team's Python target, with whatever its code raises turned into one line that stops the run: an
    exception is a bug of the queue or its adapter, not an answer the model can judge."""

    def __init__(self, inner: Target) -> None:
        self.inner = inner
        self.name, self.profiles = inner.name, inner.profiles

    @property
    def clock(self):  # type: ignore[override]  # reset may replace the inner target's clock
        return self.inner.clock

    def execute(self, op: Operation) -> Response:
        return self._guard(f"{type(op).__name__}", self.inner.execute, op)

    def version(self) -> str:
        return self._guard("version", self.inner.version)

    def shared_connection(self) -> Target | None:
        other = self._guard("shared_connection", self.inner.shared_connection)
        return None if other is None else Guarded(other)

    def reset(self) -> None:
        self._guard("reset", self.inner.reset)

    def close(self) -> None:
        self._guard("close", self.inner.close)

    def _guard(self, what: str, call, *args):
        try:
            return call(*args)
        except (Unsupported, TargetError):
            raise
        except Exception as error:
            where = _innermost_frame(error)
            first_line = (str(error).strip().splitlines() or [""])[0]
            raise TargetError(f"{self.name} raised {type(error).__name__} on {what}: {first_line}"
                              + (f" ({where})" if where else "")) from None


def _innermost_frame(error: BaseException) -> str:
    trace = error.__traceback__
    last = None
    while trace is not None:
        last = trace
        trace = trace.tb_next
    return f"{last.tb_frame.f_code.co_filename}:{last.tb_lineno}" if last is not None else ""


class ProcessTarget(Target):
    """A queue behind a program that speaks the suite's JSON-lines protocol, started and stopped by the suite."""

    clock: VirtualClock
    process: subprocess.Popen[str]

    def __init__(self, command: str, profile: str) -> None:
        argv = shlex.split(command)
        if not argv:
            raise TargetError("--target process: needs a command, e.g. 'process:node queue.mjs'")
        self._argv = argv
        self.clock = VirtualClock()
        # Its stderr goes to a file, not a pipe: a program that logs a lot would fill a pipe nobody reads and
        # stall; the file gives its last words when it exits.
        self._stderr = tempfile.TemporaryFile(mode="w+")
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self._stderr, text=True, bufsize=1, start_new_session=True)
        except OSError as error:
            self._stderr.close()
            raise TargetError(f"cannot start {argv[0]}: {error.strerror}") from None
        try:
            hello = self._ask({"hello": PROTOCOL, "profile": profile})
            self.name = str(hello.get("name") or argv[0])
            self._version = str(hello.get("version") or "unknown")
            self.profiles = frozenset(hello.get("profiles") or ())
        except BaseException:
            self.close()
            raise
        unknown = self.profiles - set(PROFILES)
        if not self.profiles or unknown:
            self.close()
            raise TargetError(f"{self.name} names no profile the suite knows: {sorted(unknown) or 'none'}")
        if profile not in self.profiles:
            self.close()
            raise ProfileNotSpoken(f"{self.name} speaks {', '.join(sorted(self.profiles))}, not {profile}")

    def version(self) -> str:
        return self._version

    def execute(self, op: Operation) -> Response:
        answer = self._ask({"now": self.clock.now(), "operation": encode(op)})
        if "unsupported" in answer:
            raise Unsupported(f"{self.name}: {answer['unsupported']}")
        if "at" in answer:  # a long poll that returned later than it was asked
            self.clock.advance_to(float(answer["at"]))
        return answer["response"]

    def reset(self) -> None:
        self._ask({"reset": True})
        self.clock = VirtualClock()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                _pipe(self.process.stdin).close()  # the protocol's end: the program exits
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=5)
        self._stderr.close()

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request; the answer, checked against the protocol, with its `response` decoded."""
        try:
            stdin = _pipe(self.process.stdin)
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
        except OSError:
            pass  # it exited, or closed its input: whatever it said before (read below) tells what went wrong
        line = _read_line(self.process, ANSWER_TIMEOUT)
        if line is None:
            raise TargetError(f"{self._who()} did not answer within {ANSWER_TIMEOUT:.0f} s")
        if not line:  # end of its output: it exited, or is exiting
            raise TargetError(f"{self._who()} exited: {self._last_words()}")
        try:
            answer = json.loads(line)
            if not isinstance(answer, dict) or not ({"response", "unsupported", "ok", "name"} & set(answer)):
                raise ValueError("no response, unsupported, ok or name")
            if "response" in answer:
                answer["response"] = decode(answer["response"])
        except (ValueError, TypeError) as error:
            raise TargetError(f"{self._who()} answered {line.strip()[:120]!r}, not the protocol ({error})") from None
        return answer

    def _who(self) -> str:
        return getattr(self, "name", None) or self._argv[0]

    def _last_words(self) -> str:
        self.process.wait(timeout=5)
        self._stderr.seek(0)
        lines = self._stderr.read().strip().splitlines()
        return lines[-1] if lines else f"exit code {self.process.returncode}"


def _read_line(process: subprocess.Popen[str], timeout: float) -> str | None:
    """One line of the program's output: "" at its end, None if nothing came within `timeout` seconds."""
    stdout = _pipe(process.stdout)
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return None
    return stdout.readline()


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A pipe the program was started with (stdin and stdout are always piped)."""
    assert stream is not None
    return stream
