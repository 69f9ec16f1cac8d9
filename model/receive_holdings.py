"""A receive, part one: which messages may come back. What the queue holds at the time of the receive, message by
message and state by state, and the helpers the receive's other parts share (model/receive.py puts them together).
"""

from __future__ import annotations

import heapq

from collections import Counter
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqs_conformance.model.outcomes import (
    ReceiveWithout,
)
from sqs_conformance.model.rules import (
    FIFO_ATTEMPT_ID,
    FIFO_GROUP_LOCK,
    FIFO_ORDER,
    FIFO_VISIBLE_PREFIX,
    RCV_AT_LEAST_ONCE,
    RCV_COUNT,
    RCV_FIRST_TIMESTAMP,
    RCV_HIDE,
    RCV_LONG_POLL,
    RCV_MAX_MESSAGES,
    RCV_REAPPEAR,
    RCV_SHORT_POLL,
    REDRIVE_DLQ,
)
from sqs_conformance.model.settled import NOTHING_HIDDEN, NOTHING_SETTLED, Settled, SurelyHidden
from sqs_conformance.model.state import (
    HIDDEN_DELAY,
    Attempt,
    Message,
    MessageState,
    Queue,
    Redrive,
)
from sqs_conformance.model.values import ReceiveMessage

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model

LONG_POLL_SLACK = 0.01  # seconds a long poll on a virtual clock may answer after its moment (moto takes 1 ms)


def dead_letter_queue_of(model: Model, queue: str) -> str | None:
    redrive = model.redrive_of(queue)
    return redrive.dead_letter_queue if redrive is not None else None


def moves_on_receive(redrive: Redrive | None, s: MessageState) -> bool:
    return redrive is not None and redrive.moves(s)


def fifo_groups(live: list[tuple[Message, list[MessageState]]], at_rest: Settled, skip: Container[str]
                 ) -> dict[str, Iterator[tuple[Message, list[MessageState]]]]:
    """FIFO: each group's live messages in send order, the ones looked at one by one (`live`, in send order) merged
    with the group's messages at rest in the index (but `skip`): lazily, as a walk of a group may stop early."""
    moving: dict[str, list[tuple[Message, list[MessageState]]]] = {}
    for entry in live:
        moving.setdefault(entry[0].group_id or "", []).append(entry)
    groups = list(moving) + [group for group in at_rest.groups_at_rest() if group not in moving]
    return {group: in_send_order(moving.get(group, []), at_rest.at_rest(group, skip) if at_rest.has_at_rest(group)
                                  else None)
            for group in groups}


def in_send_order(moving: list[tuple[Message, list[MessageState]]],
                   at_rest: Iterator[tuple[Message, list[MessageState]]] | None
                   ) -> Iterator[tuple[Message, list[MessageState]]]:
    if at_rest is None:
        return iter(moving)
    if not moving:
        return at_rest
    return heapq.merge(moving, at_rest, key=lambda entry: entry[0].seq)


def pairs(messages) -> list[tuple[str | None, str | None]]:
    """What a repeat must give again: the same messages, under the same handles."""
    return [(m.message_id, m.receipt_handle) for m in messages]


def counts(s: MessageState) -> set[int]:
    """The receive counts a receive may report: one more than before, also in the dead-letter queue after a move
    (REDRIVE-KEEPS-COUNT: the count is carried over, the move adds nothing)."""
    return {s.receive_count + 1}


def without(message: Message) -> tuple[ReceiveWithout]:
    """What a receive that returned a message it must not have was permitted, as far as that message goes."""
    return (ReceiveWithout((message.body,)),)


def dedupe(rules: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(rules))


def applicable_once(rules: Iterable[str], applicable: Container[str]) -> tuple[str, ...]:
    """The rules of the profile among `rules`, each once, in the order they first came."""
    return tuple([r for r in dict.fromkeys(rules) if r in applicable])


def poll_rules(base_rules: tuple[str, ...], long_poll: bool, bound_bites: bool) -> list[str]:
    """What every receive exercises: its parameters' rules, its kind of poll, the count and first timestamp it
    reports, and its message bound where more could be returned than it may (`bound_bites`)."""
    rules = [*base_rules, RCV_LONG_POLL if long_poll else RCV_SHORT_POLL, RCV_COUNT, RCV_FIRST_TIMESTAMP]
    if bound_bites:
        rules.append(RCV_MAX_MESSAGES)
    return rules


def read_together_rules(settled: Settled, hidden: SurelyHidden, at_least_once: bool) -> list[str]:
    """What a receive exercises on the messages it reads together (model/settled.py): the settled ones as
    returnable, the surely hidden ones as a hidden candidate is (`candidate_rules`)."""
    rules = settled.rules()
    if hidden:
        rules += [*hidden.rules(), RCV_HIDE, *(RCV_AT_LEAST_ONCE,) * at_least_once]
    return rules


def candidate_rules(hidden: Iterable[MessageState], blocked: Iterable[MessageState],
                    returnable: Iterable[MessageState], due: bool, at_least_once: bool) -> list[str]:
    """What a receive exercises on one message, by the states it may be in: hidden (the rules that hid it), held
    back in its FIFO group, returnable (or due to move, `due`: REDRIVE-DLQ), a message returned before coming
    back (RCV-REAPPEAR)."""
    rules: list[str] = []
    flying = False
    for s in hidden:
        rules += s.why
        rules.append(RCV_HIDE)
        flying = True
    for s in blocked:
        rules += s.why
    for s in returnable:
        rules += s.why
        if s.receive_count:
            rules.append(RCV_REAPPEAR)
    if due:
        rules.append(REDRIVE_DLQ)
    if flying and at_least_once:
        rules.append(RCV_AT_LEAST_ONCE)
    return rules


@dataclass
class Candidate:
    message: Message
    receivable: list[MessageState] = field(default_factory=list)  # returnable now
    due: list[MessageState] = field(default_factory=list)  # receivable but would pass maxReceiveCount
    hidden: list[MessageState] = field(default_factory=list)  # live here but not receivable now
    blocked: list[MessageState] = field(default_factory=list)  # FIFO: visible, but behind a hidden group member
    # FIFO: visible, but out of reach: past the first `reach` messages of its group's visible prefix in some way
    # the group may stand (and held back in every other). No correct answer has it, whatever rules set its state.
    beyond: list[MessageState] = field(default_factory=list)


@dataclass
class ReceiveHoldings:
    """What the queue holds at the time of a receive: each message that may come back, in which states, and what
    binds them (FIFO groups walked in order, up to a receive's reach); the rules the receive exercises."""

    model: Model
    queue: Queue
    op: ReceiveMessage
    at: float  # when the receive took effect: at the earliest, and
    late: float  # at the latest (the same instant under a virtual clock)
    max_messages: int
    visibilities: tuple[int, ...]
    long_poll: bool
    base_rules: tuple[str, ...]
    replay: Attempt | None  # an earlier receive with the same attempt id that it may repeat
    fresh: bool  # it may be a receive of its own (no replay, or the replayed messages may have been modified)
    quota_reached: bool = False  # possibly: past it a long poll may answer with nothing (INFLIGHT-QUOTA)
    live: list[tuple[Message, list[MessageState]]] = field(default_factory=list)  # each message's states here
    # The messages surely visible and returnable in their one state (model/settled.py): not in `live`, and read
    # together rather than one by one.
    settled: Settled = NOTHING_SETTLED
    # FIFO: the index of the queue's messages at rest (settled or parked), read group by group in send order up to
    # where each group stops; those read become candidates, the rest are held back (or surely hidden).
    at_rest: Settled = NOTHING_SETTLED
    # The messages surely hidden through the receive, in their one state: not in `live` either. Every other
    # message is.
    hidden: SurelyHidden = NOTHING_HIDDEN
    over_limit_permitted: bool = False
    timestamp_tolerance_ms: int = 1
    invoked: float = 0.0  # when the receive was called
    wait: float = 0.0  # its long-poll wait (the shortest the queue's settings permit)

    def __post_init__(self) -> None:
        self.redrive = self.model.redrive_of(self.queue.name)
        self.prefixes: dict[str, list[list[str]]] = {}  # FIFO: per group, the orders its messages may come in
        # FIFO: a receive returns a group's messages only as a prefix of its visible ones, and at most
        # `max_messages`: a group's walk reads no further than one message past that (so the bound still shows),
        # and what lies behind is out of reach. A receive costs what its reach costs, not what the backlog does.
        self.reach = self.max_messages + 1
        self.cut_groups: set[str] = set()  # FIFO: groups whose walk reached `reach` in some way they may stand
        self.candidates = self._candidates()
        self.rules = self._exercised_rules()

    # --- what the queue holds at the time of the receive --------------------------------------------------

    def _candidates(self) -> dict[str, Candidate]:
        result = {message.id: self._sorted_out(message, states) for message, states in self.live}
        if self.queue.fifo:
            self._apply_group_order(result)
        return result

    def _sorted_out(self, message: Message, states: list[MessageState]) -> Candidate:
        """The message with its states here sorted by what this receive may do with them."""
        candidate = Candidate(message)
        for s in states:
            if not s.may_be_due(self.late, self.model.timing.tolerance):
                candidate.hidden.append(s)
            elif moves_on_receive(self.redrive, s):
                candidate.due.append(s)
            else:
                candidate.receivable.append(s)
        return candidate

    def receivable_ids(self) -> list[str]:
        """The messages this receive may return, in send order."""
        moving = [c.message for c in self.candidates.values() if c.receivable]
        return [m.id for m in sorted([*moving, *self.settled], key=lambda m: m.seq)]

    def _candidate(self, message_id: str) -> Candidate | None:
        """The message as this receive finds it, in motion (or read in its FIFO group's walk), settled, at rest
        behind where its FIFO group stops, or surely hidden (None: not live in this queue)."""
        candidate = self.candidates.get(message_id)
        if candidate is not None:
            return candidate
        if message_id in self.settled:
            return self._settled_candidate(self.model.messages[message_id])
        if message_id in self.at_rest:  # settled, but its group stops before it (or its walk reached its reach)
            message = self.model.messages[message_id]
            if (message.group_id or "") in self.cut_groups:
                return Candidate(message, beyond=[self.at_rest.state(message_id)])
            return Candidate(message, blocked=[self.at_rest.state(message_id)])
        hidden = self.hidden.state(message_id)
        if hidden is not None:
            return Candidate(self.model.messages[message_id], hidden=[hidden])
        return None

    def _settled_candidate(self, message: Message) -> Candidate:
        return Candidate(message, receivable=[self.settled.state(message.id)])

    def _apply_group_order(self, candidates: dict[str, Candidate]) -> None:
        """FIFO: within a group only the visible prefix (up to the first hidden message) is receivable. Each group
        is walked in send order up to where it stops in every way its messages may stand; the messages at rest
        read on the way join `candidates`, those behind are held back (or surely hidden) and read together."""
        self.blockers: dict[str, tuple[str, ...]] = {}
        self.surely_free: set[str] = set()  # in the visible prefix whatever state the group is in
        self.held_at_rest: list[tuple[str, ...]] = []  # the `why` of each kind of settled message held back unread
        self.held_groups: set[str] = set()  # groups that hold a visible message back
        moving: dict[str, list[Candidate]] = {}
        for candidate in candidates.values():
            moving.setdefault(candidate.message.group_id or "", []).append(candidate)
        for group_id, in_order in fifo_groups(self.live, self.at_rest, self.hidden.near).items():
            read: list[Candidate] = []
            allowed: dict[str, set[MessageState]] = {}
            ended, blocker, cut = self._group_prefixes(self._walk(in_order, candidates, read), allowed)
            if blocker is not None:
                self.blockers[group_id] = blocker
            if cut:
                self.cut_groups.add(group_id)
            prefixes = list(dict.fromkeys(prefix for prefix, _ in ended))
            surely = set.intersection(*(set(certain) for _, certain in ended)) if ended else set()
            self.surely_free |= surely
            self.prefixes[group_id] = [list(prefix) for prefix in prefixes]
            for member in moving.get(group_id, []) + read:
                held = [s for s in member.receivable if s not in allowed.get(member.message.id, ())]
                member.receivable = [s for s in member.receivable if s in allowed.get(member.message.id, ())]
                if cut:  # past where some way of the group was cut: not surely held back by its lock
                    member.beyond = held
                else:
                    member.blocked = held
                    if held:
                        self.held_groups.add(group_id)
            if cut:
                continue  # its settled messages left unread are out of reach, not held back
            settled = self.at_rest.settled_whys(group_id)
            read_settled = [member.message.states[0].why for member in read if member.message.id in self.at_rest]
            if settled and settled.total() > len(read_settled):
                self.held_groups.add(group_id)
                self.held_at_rest += list(settled - Counter(read_settled))

    def _walk(self, in_order: Iterator[tuple[Message, list[MessageState]]], candidates: dict[str, Candidate],
              read: list[Candidate]) -> Iterator[Candidate]:
        """A group's candidates in send order; each message at rest becomes one as it is read (into `read` and
        `candidates`)."""
        for message, states in in_order:
            candidate = candidates.get(message.id)
            if candidate is None:
                candidate = candidates[message.id] = self._sorted_out(message, states)
                read.append(candidate)
            yield candidate

    def _group_prefixes(self, members: Iterable[Candidate], allowed: dict[str, set[MessageState]]
                        ) -> tuple[list[tuple[tuple[str, ...], frozenset[str]]], tuple[str, ...] | None, bool]:
        """Every way the group's states may combine, member by member, without enumerating their product (which
        grows with every hedged member: a cut-off would leave worlds out, and a message held back in one of them
        would be wrongly expected). Returns the group's possible visible prefixes, each with the messages in it
        whatever the timing (a message at its exact deadline may still be hidden), in the order of the product
        (the first is every member's first state: the model's own answer); and the rule that holds the rest back
        in the product's last combination where a hidden message stops the group (None where none can). Fills
        `allowed`: the states in which each member may come; and whether a way reached `self.reach` members (it
        ends there: what follows is out of reach). Reads no member past the one where every way has stopped or
        reached its reach."""
        Path = tuple[tuple[str, ...], bool, frozenset[str]]  # prefix, blocked for sure after it, certain part
        Orders = tuple[tuple[int, ...], tuple[int, ...]]  # the first and the last choices of options leading here
        open_paths: dict[Path, Orders] = {((), False, frozenset()): ((), ())}
        ended: dict[tuple[tuple[str, ...], frozenset[str]], tuple[int, ...]] = {}
        last_stop: tuple[tuple[int, ...], tuple[str, ...]] | None = None
        width = 0
        cut = False
        for member in members:
            # A message that may not be in this queue at all (moved to a dead-letter queue, deleted through a
            # handle of another world) has that world too: there it neither holds the group nor joins its prefix.
            choices: list[MessageState | None] = [*member.receivable, *member.due, *member.hidden]
            if len(choices) < len(member.message.states):
                choices.append(None)
            width += 1
            following: dict[Path, Orders] = {}
            for (prefix, blocked, certain), (first, last) in open_paths.items():
                for index, s in enumerate(choices):
                    if s is not None and s in member.hidden:
                        ended.setdefault((prefix, certain), first + (index,))
                        stop = (last + (index,), (FIFO_VISIBLE_PREFIX,) if prefix else (FIFO_GROUP_LOCK,))
                        last_stop = stop if last_stop is None or stop[0] > last_stop[0] else last_stop
                        if s.hidden is not HIDDEN_DELAY:
                            continue
                        # Nothing records whether a message still delayed holds its group back (the queue's delay
                        # lowered since may leave a later one due first): it may, or the group may go on past it.
                    path = (prefix, blocked, certain)
                    if s is not None and s in member.receivable:
                        allowed.setdefault(member.message.id, set()).add(s)
                        now_blocked = blocked or not self._surely_visible(s)
                        path = (prefix + (member.message.id,), now_blocked,
                                certain if now_blocked else certain | {member.message.id})
                    elif s is not None and s in member.due:
                        # A due message is moved and the prefix goes past it; but one not surely visible yet may
                        # still hold the group, so what comes after it is no longer certain.
                        path = (prefix, blocked or not self._surely_visible(s), certain)
                    if len(path[0]) >= self.reach:  # a prefix this long ends the way: nothing after it can come
                        cut = True
                        ended.setdefault((path[0], path[2]), first + (index,))
                        continue
                    earliest, latest = following.get(path, (first + (index,), last + (index,)))
                    following[path] = (min(earliest, first + (index,)), max(latest, last + (index,)))
            open_paths = following
            if not open_paths:
                break
        for (prefix, _, certain), (first, _) in open_paths.items():
            ended.setdefault((prefix, certain), first)
        ordered = sorted(ended, key=lambda key: ended[key] + (0,) * (width - len(ended[key])))
        return ordered, None if last_stop is None else last_stop[1], cut

    def _exercised_rules(self) -> tuple[str, ...]:
        receivable = sum(1 for c in self.candidates.values() if c.receivable) + len(self.settled)
        rules = poll_rules(self.base_rules, self.long_poll, receivable > self.max_messages)
        at_least_once = self.model.profile.at_least_once
        rules += read_together_rules(self.settled, self.hidden, at_least_once)
        for c in self.candidates.values():
            rules += candidate_rules(c.hidden, c.blocked, c.receivable + c.due, bool(c.due), at_least_once)
        if self.queue.fifo:
            rules.append(FIFO_ORDER)
            for why in self.held_at_rest:  # as blocked candidates
                rules += list(why)
            # A group's lock (or its visible prefix) shows only where it holds a visible message back.
            for group_id, blocker in self.blockers.items():
                if group_id in self.held_groups:
                    rules += blocker
        if self.replay is not None:
            rules = rules + [FIFO_ATTEMPT_ID] if self.fresh else [FIFO_ATTEMPT_ID]
        return applicable_once(rules, self.model.profile.rule_ids)

    def _surely_moved(self, candidate: Candidate) -> bool:
        group = candidate.message.group_id or ""
        # Only its states in this queue count: where it may already be elsewhere (in the dead-letter queue, gone),
        # those worlds are kept as they are, and the one where it was due here has it moved too.
        return (not candidate.receivable and not candidate.hidden and not candidate.blocked and not candidate.beyond
                and bool(candidate.due)
                and all(self._surely_visible(s) for s in candidate.due)
                and not (self.queue.fifo and group in self.blockers))

    def _surely_visible(self, s: MessageState) -> bool:
        return s.surely_due(self.at, self.model.timing.tolerance)
