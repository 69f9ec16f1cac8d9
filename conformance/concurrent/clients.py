"""Clients running a workload on one target's queues, each through its own connection (`Target.shared_connection`).

Two ways, one history format:
- `threads`: every client a real thread; a round's operations go out at once, so the target's own concurrency
  decides their order (what finds a receive that is not atomic). The clock moves between rounds, when every
  client has finished the round, and in some rounds also while the round is under way: a virtual clock then moves
  from its own thread as soon as the round's k-th operation was sent, while the requests sent before are under
  way (what finds a check and a write a deadline passed between).
- `interleaved`: one operation at a time, in an order drawn with the workload: on a virtual clock, a repeatable
  case Hypothesis can shrink (what finds a wrong rule among consumers, not a race). A move during a round comes
  right after its k-th operation.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sqs_conformance.adapters.base import Clock, Target, TargetError
from sqs_conformance.conformance.concurrent.history import History
from sqs_conformance.conformance.concurrent.workload import QUEUE, Action, Draw, Round, Workload
from sqs_conformance.conformance.session import rebased, stop_if_due, wall_clock
from sqs_conformance.conformance.threads import each_at_once
from sqs_conformance.model.values import (
    ChangeMessageVisibility, CreateQueue, DeleteMessage, Operation, PurgeQueue, ReceiveMessage, ReceiveOk, Response,
    SendMessage,
)

STAMP_STEP = 1e-6  # seconds between two stamps at the least
HELD_AT_MOST = 6  # receipts a client remembers (its latest)
ROUND_TIMEOUT = 120.0  # seconds a client waits for the others at the end of a round (a long poll lasts 20 s)


def queue_name(fifo: bool) -> str:
    return f"{QUEUE}.fifo" if fifo else QUEUE


@dataclass
class Client:
    """One consumer: its connection and the receipts its receives gave it (target handles, latest last)."""

    number: int
    connection: Target
    fifo: bool
    held: list[str] = field(default_factory=list)
    sent: int = 0

    def operation(self, action: Action, round_: int = 0) -> Operation | None:
        """The action as this client can do it now in round `round_`: None for a change or delete while it holds
        no receipt."""
        queue = queue_name(self.fifo)
        shared = None if action.shared is None else f"r{round_}-{action.shared}"
        if action.kind == "send":
            self.sent += 1
            tag = f"shared-{shared}" if shared else f"c{self.number}-{self.sent}"
            return SendMessage(queue, tag, group_id=action.group, dedup_id=tag if self.fifo else None)
        if action.kind == "receive":
            return ReceiveMessage(queue, max_messages=action.number, visibility_timeout=action.timeout,
                                  wait_time_seconds=action.wait or None, attempt_id=shared and f"attempt-{shared}")
        if action.kind in ("change", "delete"):
            if not self.held:
                return None
            handle = self.held[-1 - action.slot % len(self.held)]
            if action.kind == "delete":
                self.held.remove(handle)
                return DeleteMessage(queue, handle)
            return ChangeMessageVisibility(queue, handle, action.timeout)
        return PurgeQueue(queue)

    def answered(self, response: Response) -> None:
        if isinstance(response, ReceiveOk):
            self.held += [m.receipt_handle for m in response.messages if m.receipt_handle]
            del self.held[:-HELD_AT_MOST]


class Recorder:
    """Sends each operation and records it with its windows on both clocks; safe for many threads."""

    def __init__(self, first: Target, profile: str, clients: int, deadline: float | None) -> None:
        self.clock = first.clock
        self.origin = self.clock.now()
        self.history = History(profile, self.clock.kind, first.tolerance, clients)
        self.deadline = deadline
        self.round = 0
        self._history_lock = threading.Lock()
        self._stamps = threading.Lock()
        self._last_stamp = 0.0
        self._on_sent: tuple[int, threading.Event] | None = None  # (after how many of the round's, then set)
        self._sent_in_round = 0  # counted only while a move waits on it

    def _stamp(self) -> float:
        """The real time, each stamp later than every one before: two taken closer than the float's resolution
        (a quarter of a microsecond, this far from 1970) must not look simultaneous, or an operation answered
        before another was sent would seem to overlap it."""
        with self._stamps:
            self._last_stamp = max(wall_clock(), self._last_stamp + STAMP_STEP)
            return self._last_stamp

    def next_round(self, on_sent: tuple[int, threading.Event] | None = None) -> None:
        """A new round; `on_sent`: (k, event) sets the event once k of its operations were sent."""
        with self._history_lock:
            self.round += 1
            self._sent_in_round = 0
            self._on_sent = on_sent

    def send(self, client: Client, op: Operation) -> Response:
        stop_if_due(self.deadline)
        invoke, invoke_wall = self.clock.now() - self.origin, self._stamp()
        on_sent = self._on_sent  # set between rounds only, while no client sends
        if on_sent is not None:
            with self._history_lock:
                self._sent_in_round += 1
                if self._sent_in_round >= on_sent[0]:
                    on_sent[1].set()
        response = rebased(client.connection.execute(op), self.origin)  # its timestamps from the case's start
        complete, complete_wall = self.clock.now() - self.origin, self._stamp()
        with self._history_lock:
            self.history.add(client.number, op, response, invoke, complete, invoke_wall, complete_wall, self.round)
        client.answered(response)
        return response


def set_up(recorder: Recorder, first: Client, workload: Workload) -> None:
    """The queue and its backlog, by the first client before the others start."""
    attributes: dict[str, object] = {"VisibilityTimeout": str(workload.pace.queue_timeout)}
    if workload.fifo:
        attributes["FifoQueue"] = "true"
    recorder.send(first, CreateQueue(queue_name(workload.fifo), attributes))  # type: ignore[arg-type]
    for _ in range(workload.backlog):
        recorder.send(first, first.operation(Action("send", group="g1" if workload.fifo else None)))  # type: ignore


def _started(connections: list[Target], profile: str, workload: Workload,
             deadline: float | None) -> tuple[list[Client], Recorder]:
    """A client per connection, and the recorder, the queue and its backlog set up by the first client."""
    clients = [Client(i, c, workload.fifo) for i, c in enumerate(connections)]
    recorder = Recorder(connections[0], profile, len(clients), deadline)
    set_up(recorder, clients[0], workload)
    return clients, recorder


class _MoveDuring:
    """A round's move of the clock while it is under way: from a thread of its own, once the round's k-th operation
    was sent (so that the requests sent before are still under way, as far as the target's speed leaves them), or
    at the round's end if fewer were sent."""

    def __init__(self, recorder: Recorder, round_: Round) -> None:
        self._sent = threading.Event()
        self._thread: threading.Thread | None = None
        if round_.during:
            self._thread = threading.Thread(target=self._move, args=(recorder.clock, round_.during),
                                            name="clock-mover", daemon=True)
            self._thread.start()
        recorder.next_round((round_.moved_after, self._sent) if round_.during else None)

    def _move(self, clock: Clock, seconds: float) -> None:
        self._sent.wait()
        clock.advance(seconds)

    def done(self) -> None:
        if self._thread is not None:
            self._sent.set()
            self._thread.join()


def threads(connections: list[Target], profile: str, workload: Workload, deadline: float | None = None) -> History:
    clients, recorder = _started(connections, profile, workload, deadline)
    moves = [_MoveDuring(recorder, workload.rounds[0])] if workload.rounds else []

    def next_round() -> None:  # the barrier's action: every client finished the round `moves` reached
        finished = len(moves) - 1
        moves[-1].done()
        recorder.clock.advance(workload.rounds[finished].advance)
        if finished + 1 < len(workload.rounds):
            moves.append(_MoveDuring(recorder, workload.rounds[finished + 1]))

    barrier = threading.Barrier(len(clients), action=next_round)

    def play(client: Client) -> None:
        try:
            for number, round_ in enumerate(workload.rounds, 1):
                for action in round_.actions[client.number]:
                    op = client.operation(action, number)
                    if op is not None:
                        recorder.send(client, op)
                barrier.wait(ROUND_TIMEOUT)
        except threading.BrokenBarrierError:
            return  # another client stopped: its error is the run's
        except BaseException:
            barrier.abort()
            raise

    each_at_once(play, clients, "client")
    return recorder.history.in_order()


def interleaved(connections: list[Target], profile: str, workload: Workload, draw: Draw,
                deadline: float | None = None) -> History:
    clients, recorder = _started(connections, profile, workload, deadline)
    for round_ in workload.rounds:
        recorder.next_round()
        pending = [list(actions) for actions in round_.actions]
        sent = 0
        while any(pending):
            ready = [c for c in clients if pending[c.number]]
            client = ready[draw.integer(0, len(ready) - 1)]
            op = client.operation(pending[client.number].pop(0), recorder.round)
            if op is not None:
                recorder.send(client, op)
            sent += 1
            if round_.during and sent == round_.moved_after:  # moved_after <= the round's actions: always reached
                recorder.clock.advance(round_.during)
        recorder.clock.advance(round_.advance)
    return recorder.history.in_order()


def clients_of(target: Target, count: int) -> list[Target]:
    """`count` clients of the target's queues: the target itself, then its shared connections."""
    connections = [target]
    try:
        for _ in range(count - 1):
            other = target.shared_connection()
            if other is None:
                raise TargetError(f"{target.name} cannot give several clients the same queues "
                                  "(its adapter has no shared_connection)")
            connections.append(other)
    except BaseException:
        close_shared(connections)
        raise
    return connections


def close_shared(connections: list[Target]) -> None:
    for other in connections[1:]:
        other.close()
