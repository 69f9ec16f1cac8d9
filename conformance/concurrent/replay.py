"""A concurrent history played again on a target: `confirm` of a concurrent finding, and its RULE.py.

Its clients run as threads, round by round, each round starting when the history's did on the target's clock (a
virtual clock is moved there, a real one waited for; a virtual clock that moved while a round was under way is moved
before the first operation sent after it). A change or delete names the receipt this replay's receives
gave the client for the same message body; where they gave it none (the race went otherwise), the operation is
left out and the replay says so. Each replay is judged by the history checker, alone.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from sqs_conformance.adapters.base import Target, TargetError
from sqs_conformance.conformance.concurrent.checker import check_history
from sqs_conformance.conformance.concurrent.clients import Client, Recorder, clients_of, close_shared
from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.conformance.concurrent.records import history_of
from sqs_conformance.conformance.threads import each_at_once
from sqs_conformance.conformance.trace import read_trace
from sqs_conformance.conformance.translate import map_handles
from sqs_conformance.model.values import ReceiveOk, SendMessage, SendOk

REPRODUCED, NOT_REPRODUCED, CANNOT_TELL = 1, 0, 3
REPLAY_WAIT = 120.0  # seconds an operation waits for those it followed in the history


def bodies_of_handles(history: History) -> dict[str, str]:
    """Each receipt handle of the history, to the body of the message it was issued for."""
    body = {o.response.message_id: o.op.body for o in history.ops
            if isinstance(o.op, SendMessage) and isinstance(o.response, SendOk)}
    return {m.receipt_handle: body.get(m.message_id, m.body) for o in history.ops if isinstance(o.response, ReceiveOk)
            for m in o.response.messages if m.receipt_handle}


class _ReplayClient(Client):
    """A client that names receipts by the body of their message, as this replay's receives gave them."""

    def __init__(self, number: int, connection: Target, fifo: bool) -> None:
        super().__init__(number, connection, fifo)
        self.by_body: dict[str, str] = {}

    def answered(self, response) -> None:
        if isinstance(response, ReceiveOk):
            self.by_body.update({m.body: m.receipt_handle for m in response.messages if m.receipt_handle})


def replay(history: History, connections: list[Target], deadline: float | None = None) -> tuple[History, int]:
    """The history played again; how many of its operations this replay had to leave out. Operations that did not
    overlap keep their order (one waits for those answered before it was sent); those that did race again."""
    bodies = bodies_of_handles(history)
    numbers = sorted({o.client for o in history.ops})
    clients = {n: _ReplayClient(n, connections[i], history.profile == "sqs-fifo") for i, n in enumerate(numbers)}
    recorder = Recorder(connections[0], history.profile, history.clients, deadline)
    left_out = 0
    lock = threading.Lock()
    done = {o.index: threading.Event() for o in history.ops}
    first_invoke = history.ops[0].invoke if history.ops else 0.0

    def clock_to(at: float) -> None:
        with lock:  # two clients moving it at once would move it twice
            recorder.clock.advance(max(0.0, at - (recorder.clock.now() - recorder.origin)))

    for round_ in sorted({o.round for o in history.ops}):
        ops = [o for o in history.ops if o.round == round_]
        clock_to(min(o.invoke for o in ops) - first_invoke)
        recorder.round = round_
        mine = {n: [o for o in ops if o.client == n] for n in numbers if any(o.client == n for o in ops)}

        def play(number: int, mine=mine, ops=ops) -> None:
            nonlocal left_out
            client = clients[number]
            for o in mine[number]:
                for before in ops:
                    if before.precedes(o) and not done[before.index].wait(REPLAY_WAIT):
                        raise TargetError(f"{client.connection.name} did not answer within {REPLAY_WAIT:.0f} s")
                if recorder.clock.kind == "virtual":  # the clock moved while the round was under way: move it too
                    clock_to(o.invoke - first_invoke)
                op = _with_replay_handles(o, client, bodies)
                if op is None:
                    with lock:
                        left_out += 1
                else:
                    recorder.send(client, op)
                done[o.index].set()

        each_at_once(play, list(mine), "replay-client")
    return recorder.history.in_order(), left_out


def _with_replay_handles(o: HistoryOp, client: _ReplayClient, bodies: dict[str, str]):
    missing = []

    def rename(handle: str) -> str:
        body = bodies.get(handle)
        if body is None:
            return handle  # a handle no receive gave (garbage): sent as it was
        if body not in client.by_body:
            missing.append(handle)
        return client.by_body.get(body, handle)

    op = map_handles(o.op, rename)
    return None if missing else op


def confirm(history: History, rule_id: str, target: Target, tries: int, say=print) -> int:
    """Replays on `target` until `rule_id` shows (REPRODUCED), or `tries` replays did not show it."""
    clients = len({o.client for o in history.ops})
    went_otherwise = 0
    for attempt in range(1, tries + 1):
        target.reset()
        connections = clients_of(target, clients)
        try:
            replayed, left_out = replay(history, connections)
        finally:
            close_shared(connections)
        verdict = check_history(replayed)
        if rule_id in verdict.rules_diverging():
            say(f"try {attempt}: {rule_id} shown again")
            return REPRODUCED
        went_otherwise += bool(left_out)
    say(f"{rule_id} not shown in {tries} tries" + (f" ({went_otherwise} went otherwise)" if went_otherwise else ""))
    return CANNOT_TELL if went_otherwise == tries else NOT_REPRODUCED


def load(path: Path) -> History:
    return history_of(read_trace(path))


def main(path: Path, rule_id: str, argv: list[str]) -> int:
    from sqs_conformance.adapters.registry import EndpointOptions, make_target

    parser = argparse.ArgumentParser(description=f"replay the history that broke {rule_id}")
    parser.add_argument("--endpoint-url", default=None)
    parser.add_argument("--region", default=None)
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--allow-real-aws", action="store_true")
    args = parser.parse_args(argv)
    history = load(path)
    spec = "endpoint" if args.endpoint_url else "aws"
    options = EndpointOptions(endpoint_url=args.endpoint_url, region=args.region, allow_real_aws=args.allow_real_aws)
    try:
        target = make_target(spec, history.profile, options)
    except TargetError as error:
        print(f"error: {error}")
        return 2
    try:
        return confirm(history, rule_id, target, args.tries)
    finally:
        target.close()
