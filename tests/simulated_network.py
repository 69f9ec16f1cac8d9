"""A conforming queue (the reference model) behind a simulated network: every request takes a random time each
way, and a share of them lose their answer, before or after the queue acted. Time is virtual but judged as a real
clock's (windows and a tolerance), so a run is fast and reproducible from its seed: the deterministic twin of the
fault proxy (tests/fault_proxy.py), in which anything the suite reports is a false alarm."""

from __future__ import annotations

import random

from sqs_conformance.adapters.base import Target, VirtualClock
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.model.values import Operation, Response, Unknown

LOSSES = ("drop-before", "drop-after", "error-after")  # the faults that leave an answer unknown


class _WindowedVirtualClock(VirtualClock):
    """Advances instantly, but calls itself real: the suite judges every answer within its request's window."""

    kind = "real"
    epoch_zero = 0.0


class SimulatedNetwork(Target):
    def __init__(self, profile: str, faults: tuple[str, ...] = LOSSES, rate: float = 0.15, seed: int = 0,
                 latency: float = 0.02, tolerance: float = 0.05, schedule: dict[int, str] | None = None) -> None:
        """Faults at `rate`, drawn from `faults`; or, with a `schedule`, exactly those: the fault of each request
        number (from 0, counted anew in each case)."""
        self.queue = ModelTarget(profile)
        self.clock = self.queue.clock = _WindowedVirtualClock()
        self.name, self.profiles = f"simulated:{profile}", self.queue.profiles
        self.faults, self.rate, self.latency, self.tolerance = faults, rate, latency, tolerance
        self.random = random.Random(seed)
        self.schedule = schedule
        self.lost = 0
        self._requests = 0

    def reset(self) -> None:
        self._requests = 0
        self.queue.reset()
        self.queue.clock = self.clock  # the queue's times are the connection's

    def execute(self, op: Operation) -> Response:
        self._travel()
        fault = self._fault()
        response = self.queue.execute(op) if fault != "drop-before" else None
        self._travel()
        if fault is not None:
            self.lost += 1
            return Unknown(f"simulated {fault}")
        assert response is not None
        return response

    def _fault(self) -> str | None:
        self._requests += 1
        if self.schedule is not None:
            return self.schedule.get(self._requests - 1)
        return self.random.choice(self.faults) if self.faults and self.random.random() < self.rate else None

    def _travel(self) -> None:
        self.clock.advance(self.random.uniform(0, self.latency))
