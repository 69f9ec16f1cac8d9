"""The clients' programs: rounds in which every client does a few operations at once, the clock moving between
rounds. Drawn from a `Draw` (Hypothesis' data, so that a virtual clock's case shrinks; or a seeded Random for real
threads, whose interleavings no seed repeats), aimed at the contention a visibility timeout exists for: few
messages, many receivers, deadlines passing between rounds, handles used after them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")

QUEUE = "shared"


class Draw(Protocol):
    def choice(self, options: tuple[T, ...]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...


class RandomDraw:
    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def choice(self, options: tuple[T, ...]) -> T:
        return self._random.choice(options)

    def integer(self, low: int, high: int) -> int:
        return self._random.randint(low, high)


@dataclass(frozen=True)
class Pace:
    """Times on the target's clock: a virtual clock's can be long; a real one's are short enough to pass in a
    run, and long enough that a deadline stays decisive beyond the tolerance and a request's window."""

    name: str
    queue_timeout: int  # the queue's VisibilityTimeout
    receive_timeouts: tuple[int | None, ...]  # per-receive overrides (None: the queue's)
    change_timeouts: tuple[int, ...]
    advances: tuple[float, ...]  # the clock's move between rounds
    waits: tuple[int, ...]  # receive WaitTimeSeconds
    purges: bool  # a purge now and then (on a real service one stops purges for 60 s)
    # The clock's move while a round is under way (0: none). A real clock moves on its own; a virtual one moves
    # only when told, so without these a deadline never passed while requests were under way, and a race between a
    # request's check and its write across a deadline (a handle in flight at the check, expired and received by
    # another consumer before the write) could not show.
    moves_during: tuple[float, ...] = (0.0,)


VIRTUAL = Pace("virtual", 30, (None, None, 5, 60), (0, 10, 30, 45), (0.0, 0.0, 4.0, 20.0, 31.0, 61.0), (0, 0, 0, 3),
               True, (0.0, 0.0, 0.0, 6.0, 11.0, 31.0))
REAL = Pace("real", 3, (None, None, 2, 4), (0, 2, 4), (0.0, 0.0, 0.4, 1.5, 3.2), (0, 0, 1), False)


@dataclass(frozen=True)
class Action:
    kind: str  # "send", "receive", "change", "delete", "purge"
    number: int = 1  # receive: MaxNumberOfMessages
    timeout: int | None = None  # receive: its VisibilityTimeout override; change: the new timeout
    wait: int = 0  # receive: WaitTimeSeconds
    slot: int = 0  # change, delete: which receipt the client holds (counted from its latest)
    group: str | None = None  # send on FIFO
    # FIFO: a deduplication id (send) or receive attempt id that every client drawing the same `shared` uses in a
    # round: a send and its retry, or a receive and its retry, racing (None: the client's own)
    shared: int | None = None


@dataclass(frozen=True)
class Round:
    actions: tuple[tuple[Action, ...], ...]  # per client
    advance: float  # the clock's move after the round
    during: float = 0.0  # the clock's move while the round is under way (virtual clocks)
    moved_after: int = 1  # ... once this many of the round's operations were sent


@dataclass(frozen=True)
class Workload:
    fifo: bool
    backlog: int  # messages sent before the clients start
    rounds: tuple[Round, ...]
    pace: Pace

    @property
    def operations(self) -> int:
        return self.backlog + 1 + sum(len(a) for r in self.rounds for a in r.actions)


GROUPS = ("g1", "g2", "g3")
KINDS = ("receive",) * 5 + ("delete",) * 2 + ("change",) * 2 + ("send",)


def draw_workload(draw: Draw, clients: int, rounds: int, fifo: bool, pace: Pace, per_round: int = 3) -> Workload:
    return Workload(fifo, draw.integer(1, 6), tuple(_round(draw, clients, fifo, pace, per_round)
                                                    for _ in range(rounds)), pace)


def _round(draw: Draw, clients: int, fifo: bool, pace: Pace, per_round: int) -> Round:
    actions = tuple(tuple(_action(draw, fifo, pace) for _ in range(draw.integer(1, per_round)))
                    for _ in range(clients))
    advance, during = draw.choice(pace.advances), draw.choice(pace.moves_during)
    moved_after = draw.integer(1, sum(map(len, actions))) if during else 1
    return Round(actions, advance, during, moved_after)


def _action(draw: Draw, fifo: bool, pace: Pace) -> Action:
    kind = draw.choice(KINDS + (("purge",) if pace.purges and draw.integer(0, 15) == 0 else ()))
    if kind == "receive":
        return Action("receive", draw.integer(1, 3), draw.choice(pace.receive_timeouts), draw.choice(pace.waits),
                      shared=_shared(draw, fifo))
    if kind in ("change", "delete"):
        return Action(kind, timeout=draw.choice(pace.change_timeouts) if kind == "change" else None,
                      slot=draw.integer(0, 2))
    if kind == "send":
        return Action("send", group=draw.choice(GROUPS) if fifo else None, shared=_shared(draw, fifo))
    return Action(kind)


def _shared(draw: Draw, fifo: bool) -> int | None:
    """Now and then, on FIFO, an id two clients of a round may both use."""
    return draw.choice((0, 1)) if fifo and draw.integer(0, 4) == 0 else None
