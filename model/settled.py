"""Messages a receive need not look at one by one.

A message *settles* in its queue once it has one possible state there, surely visible, that its next receive
returns (no redrive moves it instead). Until an operation changes it, every receive and attribute read sees it the
same way: returnable, not in flight, counted visible. Each queue keeps those messages apart, in send order, with the
few facts receives read of them together (how many, the rules that set their deadlines, whether any was received
before), so that an operation costs what the messages still in motion cost, not what the backlog does.

A message is *parked* while it has one possible state there that is hidden (in flight, delayed, locked) and cannot
be due yet. An operation that ends before the earliest moment it may be due (its `horizon`: a receive's long poll
and a real clock's window included) sees it as surely hidden: counted not visible or delayed, in flight, not
returnable, and exercising the rules that set its deadline. Those are read together too (`SurelyHidden`); parked
messages that may be due within the operation are looked at one by one with the messages in motion.

In a FIFO queue a settled message is returnable only in its group's order, so a receive walks each group in send
order, and stops where every way its messages may stand has the group held back (model/receive_holdings.py). The index
keeps each group's settled and parked messages (*at rest*) in send order, and how many settled ones of each kind,
so that the walk reads a group's messages at rest one by one only up to where it stops, and the rest together.

Time only settles messages (a deadline passed stays passed) and unparks them (a hidden one may become due); an
operation that changes a message unsettles or unparks it. Time going backwards, or a new redrive policy, rebuilds
the queue's index from its messages.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Container, Iterable, Iterator

from sortedcontainers import SortedDict

from sqs_conformance.model.rules import RCV_REAPPEAR
from sqs_conformance.model.state import HIDDEN_NONE, Hidden, Message, MessageState, Redrive

# A heap entry: when the message's state may first (or surely) be due, a tie-breaker so that two offers of one message
# are never compared by their states, the message, and the state it was offered in (stale once the message changes).
Entry = tuple[float, int, str, MessageState]


class Settled:
    """The settled and the parked messages of one queue; of a FIFO queue (`grouped`), also by group."""

    def __init__(self, queue: str, messages: dict[str, Message], tolerance: float, grouped: bool = False) -> None:
        self.queue = queue
        self._grouped = grouped
        self._messages = messages
        self._tolerance = tolerance
        self._redrive: Redrive | None = None
        self._as_of = float("-inf")
        self._states: dict[str, MessageState] = {}  # message id -> the one state it settled in
        self.moving: set[str] = set()  # the queue's other messages
        self._by_seq: SortedDict = SortedDict()  # seq -> message id
        self._kinds: Counter[tuple[tuple[str, ...], bool]] = Counter()  # (its `why`, received before) -> how many
        self._waited_out: Counter[Hidden | None] = Counter()  # what hid each for a while (MessageState.waited_out)
        # Messages with one state here, by when they surely become visible (lazily dropped once changed); the
        # middle number only keeps two offers of one message from ever being compared by their states.
        self._waiting: list[Entry] = []
        self._offers = itertools.count()
        # Parked messages: their one hidden state, the same by when each may be due (the first number), and how many
        # of each kind (the rules that set their deadlines, why hidden).
        self._parked: dict[str, MessageState] = {}
        self._parked_order: list[Entry] = []
        self._parked_kinds: Counter[tuple[tuple[str, ...], Hidden]] = Counter()
        # FIFO: per group, its settled and parked messages (seq -> message id), and its settled ones by their `why`.
        self._at_rest: dict[str, SortedDict] = {}
        self._settled_whys: dict[str, Counter[tuple[str, ...]]] = {}

    # --- kept up to date by the model's commits ---------------------------------------------------------

    def offer(self, message: Message) -> None:
        """The message's states have just changed (or it is new): it may settle here once time has come."""
        states = message.states
        if len(states) == 1 and states[0].live_in(self.queue):
            s = states[0]
            heapq.heappush(self._waiting, (s.visible_at + s.slack + self._tolerance, next(self._offers), message.id, s))
            if s.hidden is not HIDDEN_NONE and self._may_be_due_from(s) > self._as_of:
                self._park(message.id, s)

    def _may_be_due_from(self, s: MessageState) -> float:
        return s.visible_at - self._tolerance  # the earliest `late` for which MessageState.may_be_due holds

    def joined(self, message_id: str) -> None:
        self.moving.add(message_id)

    def left(self, message_id: str) -> None:
        self._unpark(message_id)
        self.moving.discard(message_id)

    def forget(self, message: Message) -> None:
        """The message's states are about to change: it is in motion again (if it stays in the queue)."""
        self._unpark(message.id)
        s = self._states.pop(message.id, None)
        if s is not None:
            self.moving.add(message.id)
            del self._by_seq[message.seq]
            _decrement(self._kinds, (s.why, s.receive_count > 0))
            _decrement(self._waited_out, s.waited_out())
            if self._grouped:
                self._leave_rest(message)
                _decrement(self._settled_whys[_group(message)], s.why)

    def advance(self, now: float, redrive: Redrive | None, message_ids: Iterable[str]) -> None:
        """Unpark every message that may be due by `now`, and settle every one whose state is surely visible by
        then. `message_ids` (the queue's) rebuild the index where it cannot go on: time went back, or the redrive
        policy changed."""
        went_back = now < self._as_of
        self._as_of = now
        if went_back or redrive != self._redrive:
            self.rebuild(message_ids)
            self._redrive = redrive
        while self._parked_order and self._parked_order[0][0] <= now:
            entry = heapq.heappop(self._parked_order)
            if self._still_parked(entry):
                self._unpark(entry[2])  # it may be due from now on
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
        if len(self._parked_order) > 4 * len(self._parked) + 64:
            self._parked_order = [e for e in self._parked_order if self._still_parked(e)]
            heapq.heapify(self._parked_order)

    def _still_as_offered(self, entry: Entry) -> bool:
        states = self._messages[entry[2]].states
        return len(states) == 1 and states[0] is entry[3]

    def _still_parked(self, entry: Entry) -> bool:
        return self._parked.get(entry[2]) is entry[3]

    def _park(self, message_id: str, s: MessageState) -> None:
        self.moving.discard(message_id)
        self._parked[message_id] = s
        heapq.heappush(self._parked_order, (self._may_be_due_from(s), next(self._offers), message_id, s))
        self._parked_kinds[(s.why, s.hidden)] += 1
        if self._grouped:
            self._come_to_rest(self._messages[message_id])

    def _unpark(self, message_id: str) -> None:
        s = self._parked.pop(message_id, None)
        if s is not None:
            self.moving.add(message_id)
            _decrement(self._parked_kinds, (s.why, s.hidden))
            if self._grouped:
                self._leave_rest(self._messages[message_id])

    def _settle(self, message: Message, s: MessageState) -> None:
        self.moving.discard(message.id)
        self._states[message.id] = s
        self._by_seq[message.seq] = message.id
        self._kinds[(s.why, s.receive_count > 0)] += 1
        self._waited_out[s.waited_out()] += 1
        if self._grouped:
            self._come_to_rest(message)
            whys = self._settled_whys.get(_group(message))
            if whys is None:
                whys = self._settled_whys[_group(message)] = Counter()
            whys[s.why] += 1

    def _come_to_rest(self, message: Message) -> None:
        members = self._at_rest.get(_group(message))
        if members is None:
            members = self._at_rest[_group(message)] = SortedDict()
        members[message.seq] = message.id

    def _leave_rest(self, message: Message) -> None:
        group = _group(message)
        members = self._at_rest[group]
        del members[message.seq]
        if not members:
            del self._at_rest[group]

    def rebuild(self, message_ids: Iterable[str]) -> None:
        """Index the queue's messages afresh: each in motion until time settles or parks it."""
        self._states.clear()
        self._by_seq.clear()
        self._kinds.clear()
        self._waited_out.clear()
        self._waiting = []
        self._parked.clear()
        self._parked_order = []
        self._parked_kinds.clear()
        self._at_rest.clear()
        self._settled_whys.clear()
        self.moving = set(message_ids)
        for message_id in list(self.moving):  # offers park some
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

    def any_waited_out(self, hidden: Hidden) -> bool:
        """Whether any settled message was hidden so for a while (MessageState.waited_out) before it came back."""
        return self._waited_out[hidden] > 0

    def groups_at_rest(self) -> list[str]:
        """FIFO: the groups with a message at rest."""
        return list(self._at_rest)

    def has_at_rest(self, group: str) -> bool:
        return group in self._at_rest

    def at_rest(self, group: str, skip: Container[str]) -> Iterator[tuple[Message, list[MessageState]]]:
        """FIFO: the group's messages at rest but those in `skip` (parked, but looked at one by one), each with its
        one state, in send order: lazily, as a walk of the group may stop early."""
        messages = self._messages
        for message_id in self._at_rest.get(group, {}).values():
            if message_id not in skip:
                message = messages[message_id]
                yield message, list(message.states)  # its one state, settled or parked

    def settled_whys(self, group: str) -> Counter[tuple[str, ...]] | None:
        """FIFO: how many of the group's settled messages have each `why` (the rules that set their deadlines)."""
        return self._settled_whys.get(group)

    def hidden_through(self, horizon: float) -> SurelyHidden:
        """The parked messages as an operation that ends by `horizon` sees them: those that may be due by then are
        `near` (the operation looks at them one by one), the rest are surely hidden throughout."""
        near: dict[str, MessageState] = {}
        kept = []
        while self._parked_order and self._parked_order[0][0] <= horizon:
            entry = heapq.heappop(self._parked_order)
            if self._still_parked(entry):
                near[entry[2]] = entry[3]
                kept.append(entry)
        for entry in kept:
            heapq.heappush(self._parked_order, entry)
        kinds = self._parked_kinds
        if near:  # a copy only where it differs (Counter.copy costs as much as the rest of this)
            kinds = kinds.copy()
            for s in near.values():
                _decrement(kinds, (s.why, s.hidden))
        return SurelyHidden(self._parked, near, kinds)


class SurelyHidden:
    """The messages surely hidden through one operation, each in its one state, read together. A view of the
    index: valid until the model commits the operation's outcome, as the index itself."""

    def __init__(self, parked: dict[str, MessageState], near: dict[str, MessageState],
                 kinds: Counter[tuple[tuple[str, ...], Hidden]]) -> None:
        self._parked = parked
        self.near = near  # parked, but may be due within the operation: in motion for it
        self._kinds = kinds

    def state(self, message_id: str) -> MessageState | None:
        """Its one state, if the message is surely hidden throughout."""
        return None if message_id in self.near else self._parked.get(message_id)

    def how_many(self, *hidden: Hidden) -> int:
        """How many are hidden for one of these reasons (in flight: `HIDDEN_RECEIPT`)."""
        return sum([n for (_, why_hidden), n in self._kinds.items() if why_hidden in hidden])

    def rules(self) -> list[str]:
        """The rules that set their deadlines: each keeps its message hidden through the operation."""
        return [r for why, _ in self._kinds for r in why]

    def __bool__(self) -> bool:
        return bool(self._kinds)


NOTHING_HIDDEN = SurelyHidden({}, {}, Counter())
NOTHING_SETTLED = Settled("", {}, 0.0)  # read only: where no index is kept, or none read as returnable


def _group(message: Message) -> str:
    return message.group_id or ""


def _decrement(counter: Counter, key) -> None:
    counter[key] -= 1
    if not counter[key]:
        del counter[key]
