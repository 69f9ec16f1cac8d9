"""Messages a receive need not look at one by one.

A message *settles* in its queue once it has one possible state there, surely visible, that its next receive
returns (no redrive moves it instead). Until an operation changes it, every receive and attribute read sees it the
same way: returnable, not in flight, counted visible. Each queue keeps those messages apart, in send order, with the
few facts receives read of them together (how many, the rules that set their deadlines, whether any was received
before), so that an operation costs what the messages still in motion cost, not what the backlog does.

Time only settles messages (a deadline passed stays passed); an operation that changes a message unsettles it. Time
going backwards, or a new redrive policy, rebuilds the queue's index from its messages.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator

from sortedcontainers import SortedDict

from model.rules import RCV_REAPPEAR
from model.state import Message, MessageState, Redrive


class Settled:
    """The settled messages of one standard queue (FIFO queues keep every message in motion: group order)."""

    def __init__(self, queue: str, messages: dict[str, Message], tolerance: float) -> None:
        self.queue = queue
        self._messages = messages
        self._tolerance = tolerance
        self._redrive: Redrive | None = None
        self._as_of = float("-inf")
        self._states: dict[str, MessageState] = {}  # message id -> the one state it settled in
        self.moving: set[str] = set()  # the queue's other messages
        self._by_seq: SortedDict = SortedDict()  # seq -> message id
        self._kinds: Counter[tuple[tuple[str, ...], bool]] = Counter()  # (its `why`, received before) -> how many
        # Messages with one state here, by when they surely become visible (lazily dropped once changed); the
        # middle number only keeps two offers of one message from ever being compared by their states.
        self._waiting: list[tuple[float, int, str, MessageState]] = []
        self._offers = itertools.count()

    # --- kept up to date by the model's commits ---------------------------------------------------------

    def offer(self, message: Message) -> None:
        """The message's states have just changed (or it is new): it may settle here once time has come."""
        states = message.states
        if len(states) == 1 and states[0].live_in(self.queue):
            s = states[0]
            heapq.heappush(self._waiting, (s.visible_at + s.slack + self._tolerance, next(self._offers), message.id, s))

    def joined(self, message_id: str) -> None:
        self.moving.add(message_id)

    def left(self, message_id: str) -> None:
        self.moving.discard(message_id)

    def forget(self, message: Message) -> None:
        """The message's states are about to change: it is in motion again (if it stays in the queue)."""
        s = self._states.pop(message.id, None)
        if s is not None:
            self.moving.add(message.id)
            del self._by_seq[message.seq]
            key = (s.why, s.receive_count > 0)
            self._kinds[key] -= 1
            if not self._kinds[key]:
                del self._kinds[key]

    def advance(self, now: float, redrive: Redrive | None, message_ids: Iterable[str]) -> None:
        """Settle every message whose state is surely visible by `now`. `message_ids` (the queue's) rebuild the
        index where it cannot go on: time went back, or the redrive policy changed."""
        if now < self._as_of or redrive != self._redrive:
            self._rebuild(message_ids)
            self._redrive = redrive
        self._as_of = now
        not_yet = []
        while self._waiting and self._waiting[0][0] <= now:
            entry = heapq.heappop(self._waiting)
            _, _, message_id, s = entry
            if message_id in self._states or not self._still_as_offered(entry):
                continue  # settled already, or changed since it was offered
            if not s.surely_due(now, self._tolerance):
                not_yet.append(entry)  # exactly at a receipt's deadline it may still be hidden
            elif redrive is None or not redrive.moves(s):
                self._settle(self._messages[message_id], s)
        for entry in not_yet:
            heapq.heappush(self._waiting, entry)
        if len(self._waiting) > 4 * len(self._messages) + 64:  # changed messages leave entries behind
            self._waiting = [e for e in self._waiting if self._still_as_offered(e)]
            heapq.heapify(self._waiting)

    def _still_as_offered(self, entry: tuple[float, int, str, MessageState]) -> bool:
        states = self._messages[entry[2]].states
        return len(states) == 1 and states[0] is entry[3]

    def _settle(self, message: Message, s: MessageState) -> None:
        self.moving.discard(message.id)
        self._states[message.id] = s
        self._by_seq[message.seq] = message.id
        self._kinds[(s.why, s.receive_count > 0)] += 1

    def _rebuild(self, message_ids: Iterable[str]) -> None:
        self._states.clear()
        self._by_seq.clear()
        self._kinds.clear()
        self._waiting = []
        self.moving = set(message_ids)
        for message_id in self.moving:
            self.offer(self._messages[message_id])

    # --- what receives read -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._states

    def state(self, message_id: str) -> MessageState:
        return self._states[message_id]

    def first(self, n: int) -> list[Message]:
        """The first `n` settled messages in send order."""
        return [self._messages[self._by_seq.peekitem(i)[1]] for i in range(min(n, len(self._by_seq)))]

    def __iter__(self) -> Iterator[Message]:
        return (self._messages[message_id] for message_id in self._by_seq.values())

    def rules(self) -> list[str]:
        """The rules a receive that may return them all exercises through them: what set each deadline, and a
        message coming back after one."""
        return [r for why, received in self._kinds for r in why + ((RCV_REAPPEAR,) if received else ())]

    @property
    def any_received_before(self) -> bool:
        return any(received for _, received in self._kinds)
