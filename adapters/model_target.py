"""The reference model as a queue. It must always conform: running the suite against it tests the engine."""

from __future__ import annotations

import threading
from functools import cache

from sqs_conformance.adapters.base import SharedView, Target, Unsupported, VirtualClock
from sqs_conformance.model import Model, ModelUsageError
from sqs_conformance.model.profiles import PROFILES, Profile
from sqs_conformance.model.values import Operation, Response


class ModelTarget(Target):
    clock: VirtualClock

    def __init__(self, profile: Profile | str = "sqs-standard") -> None:
        self._profile = profile
        self.model = Model(profile)
        self.name = f"model:{self.model.profile.name}"
        self.clock = VirtualClock()
        self.profiles = frozenset({self.model.profile.name}) if isinstance(profile, Profile) else frozenset(PROFILES)
        self._lock = threading.Lock()  # concurrent clients (`shared_connection`): one step at a time

    def execute(self, op: Operation) -> Response:
        try:
            with self._lock:
                response, outcome = self.model.step(op, self.clock.now())
        except ModelUsageError as error:
            raise Unsupported(str(error)) from None
        if outcome.at is not None:  # a long poll that waited for a message
            self.clock.advance_to(outcome.at)
        return response

    def version(self) -> str:
        return _suite_version()

    def shared_connection(self) -> Target:
        return SharedView(self)

    def reset(self) -> None:
        self.model = Model(self._profile)
        self.clock = VirtualClock()  # the model's times are the clock's: start both at zero


@cache
def _suite_version() -> str:
    """Read once: the installed metadata is parsed from disk, and every trace line carries the version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sqs-conformance")
    except PackageNotFoundError:
        return "source"
