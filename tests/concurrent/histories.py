"""Hand-made concurrent histories: a queue, its messages, and clients whose windows overlap as a test says."""

from __future__ import annotations

from sqs_conformance.conformance.concurrent.clients import clients_of, close_shared, threads
from sqs_conformance.conformance.concurrent.history import History
from sqs_conformance.conformance.concurrent.workload import VIRTUAL, RandomDraw, draw_workload
from sqs_conformance.model.values import CreateQueue, Ok, ReceivedMessage, ReceiveOk, SendMessage, SendOk


class Story:
    """A history told step by step: each operation at a model time `at`, sent at `sent` and answered at `answered`
    (real seconds: they alone order operations)."""

    def __init__(self, profile: str = "sqs-standard", timeout: int = 30, clients: int = 2) -> None:
        self.fifo = profile == "sqs-fifo"
        self.queue = "q.fifo" if self.fifo else "q"
        self.history = History(profile, "virtual", 0.0, clients)
        attributes = {"VisibilityTimeout": str(timeout)}
        if self.fifo:
            attributes["FifoQueue"] = "true"
        self.do(0, CreateQueue(self.queue, attributes), Ok(), at=0, sent=0, answered=0.1)

    def do(self, client: int, op, response, at: float, sent: float, answered: float) -> Story:
        self.history.add(client, op, response, at, at, sent, answered)
        return self

    def send(self, client: int, message_id: str, at: float, sent: float, answered: float, group: str = "g") -> Story:
        op = SendMessage(self.queue, f"body-{message_id}", group_id=group if self.fifo else None,
                         dedup_id=message_id if self.fifo else None)
        return self.do(client, op, SendOk(message_id), at, sent, answered)

    def received(self, client: int, messages: list[tuple[str, str, int]], at: float, sent: float, answered: float,
                 **receive) -> Story:
        """A receive that returned (message id, receipt handle, receive count) for each message."""
        from sqs_conformance.model.values import ReceiveMessage

        got = tuple(ReceivedMessage(m, f"body-{m}", h, count, None) for m, h, count in messages)
        return self.do(client, ReceiveMessage(self.queue, **receive), ReceiveOk(got), at, sent, answered)

    def done(self) -> History:
        return self.history.in_order()


def eight_clients_on(target, profile: str, seed: int, rounds: int) -> History:
    """A history of 8 clients on `target`, a drawn workload of `rounds` rounds (virtual clock), its clients closed."""
    connections = clients_of(target, 8)
    try:
        return threads(connections, profile, draw_workload(RandomDraw(seed), 8, rounds, profile == "sqs-fifo",
                                                           VIRTUAL))
    finally:
        close_shared(connections)
