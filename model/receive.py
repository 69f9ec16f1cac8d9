"""ReceiveMessage: which messages may come back, what the receive does to them, and how to judge a response.

The permitted responses are not enumerated (a short poll may return any subset of the visible messages):
`ReceiveExpectation.check` judges a response message by message, then checks what binds them together
(how many, FIFO group order, a long poll's duty to return something).
"""

from __future__ import annotations

import heapq
import math

from collections import Counter
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import (
    Divergence, Effects, Enumerated, Expectation, Outcome, ReceiveInOrder, ReceiveRepeated, ReceiveSome,
    ReceiveWithout, Verdict, describe, response_matches, situated,
)
from sqs_conformance.model.rules import (
    DEL_REMOVES,
    FIFO_ATTEMPT_ID,
    FIFO_GROUP_LOCK,
    FIFO_ORDER,
    FIFO_VISIBLE_PREFIX,
    INFLIGHT_QUOTA,
    LOCK_NOT_REMEMBERED,
    QATTR_LATER_RECEIVES,
    RCV_AT_LEAST_ONCE,
    RCV_COUNT,
    RCV_FIRST_TIMESTAMP,
    RCV_HIDE,
    RCV_INTEGRITY,
    RCV_LONG_POLL,
    RCV_MAX_MESSAGES,
    RCV_NEW_HANDLE,
    RCV_OVERRIDE,
    RCV_REAPPEAR,
    RCV_SHORT_POLL,
    RCV_WAIT_RANGE,
    REDRIVE_DLQ,
    VIS_NOT_STICKY,
    VIS_RANGE,
)
from sqs_conformance.model.settled import NOTHING_HIDDEN, NOTHING_SETTLED, Settled, SurelyHidden
from sqs_conformance.model.state import (
    Attempt,
    AttemptRemembered,
    Gone,
    HandleInfo,
    Hidden,
    Message,
    MessageState,
    Queue,
    Redrive,
    millis,
)
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.validation import is_int_in
from sqs_conformance.model.values import Error, ReceivedMessage, ReceiveMessage, ReceiveOk, Response

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model

LONG_POLL_SLACK = 0.01  # seconds a long poll on a virtual clock may answer after its moment (moto takes 1 ms)


def expect_receive(model: Model, op: ReceiveMessage, now: float, late: float, completed_at: float | None = None
                   ) -> Expectation:
    """The receive took effect in [now, late] (an instant but under windowed timing); `completed_at` is when the
    target answered, which judges a long poll even on an exact clock."""
    p = model.profile
    queue = model.queue(op.queue)
    rules: list[str] = []
    # Nothing records in which order a receive's parameters are checked: with several out of range, the refusal
    # of any of them is permitted.
    refusals: list[Outcome] = []
    if op.max_messages is not None and p.validates_receive_params:
        # In range, the rule is exercised where the bound bites (see _exercised_rules), not by every receive.
        if not is_int_in(op.max_messages, 1, p.max_messages_max):
            refusals.append(Outcome(errors.max_messages_out_of_range(op.max_messages), (RCV_MAX_MESSAGES,)))
    if op.wait_time_seconds is not None and op.wait_time_seconds != 0:
        if not p.has_long_poll:
            raise ModelUsageError(f"profile {p.name} has no long polling")
        rules.append(RCV_WAIT_RANGE)
        if not is_int_in(op.wait_time_seconds, 0, p.wait_max):
            refusals.append(Outcome(errors.wait_out_of_range(op.wait_time_seconds), (RCV_WAIT_RANGE,)))
    if op.visibility_timeout is not None:
        if RCV_OVERRIDE not in p.rule_ids:
            raise ModelUsageError(f"profile {p.name} has no receive VisibilityTimeout")
        range_error = model._range_error(op.visibility_timeout)
        if range_error is not None:
            refusals.append(Outcome(range_error, (VIS_RANGE,)))
        rules.append(RCV_OVERRIDE)
        visibilities: tuple[int, ...] = (op.visibility_timeout,)
    else:
        visibilities = model.visibility_values(queue, now)
    if refusals:
        return Enumerated(refusals)
    max_messages = op.max_messages if isinstance(op.max_messages, int) else 1

    if op.wait_time_seconds is not None:
        waits: tuple[int, ...] = (op.wait_time_seconds,)
    elif p.has_long_poll:
        waits = queue.setting("ReceiveMessageWaitTimeSeconds", now, p.attribute_propagation_seconds)  # type: ignore
    else:
        waits = (0,)
    long_poll = min(waits) > 0

    # It looks at nothing later than the end of its window or of its longest wait.
    moving, settled, hidden = model.in_motion(queue, now, horizon=max(late, now + max(waits)))
    at_rest = NOTHING_SETTLED
    if queue.fifo:  # settled messages come only in their group's order: each group is walked (_apply_group_order)
        at_rest, settled = settled, NOTHING_SETTLED
    live, in_flight, maybe_in_flight = _live_states(moving, queue.name, now)  # a settled message is not in flight
    surely_hidden_in_flight = hidden.how_many(Hidden.RECEIPT)
    in_flight += surely_hidden_in_flight
    maybe_in_flight += surely_hidden_in_flight
    over_limit_permitted = False
    if maybe_in_flight >= p.inflight_quota and not p.fifo:
        rules.append(INFLIGHT_QUOTA)
        if not long_poll:
            if in_flight >= p.inflight_quota:
                return Enumerated([Outcome(errors.over_limit(), tuple(rules))])
            over_limit_permitted = True  # the checker is unsure how many are in flight: both are permitted

    replay = _replay(model, queue, op.attempt_id, now) if p.fifo and op.attempt_id else None
    fresh = replay is None or any(any(_modified(states, model.messages[mid].states))
                                  for mid, states in replay.states.items())
    if model.timing.windowed:  # a real clock: the receive took effect somewhere in [invoke, complete]
        at = now
    elif not fresh:  # the earlier answer, given at once: a retry does not poll
        at = late = now
    elif max(waits) > 0:  # a long poll answers when a message may first be receivable (a short one at once)
        groups = _fifo_groups(live, at_rest, hidden.near).values() if queue.fifo else [live]
        releases = _releases(groups, model.redrive_of(queue.name), queue.fifo)
        if settled:
            releases.append(now)  # each settled message is visible by now: the poll answers at once
        at = _evaluation_time(releases, now, max(waits))
        if completed_at is not None:
            at = min(completed_at, now + max(waits))  # as of the moment the target answered, within the wait
        late = at
    else:
        at = late = now
    return ReceiveExpectation(model, queue, op, at, late, max_messages, visibilities, long_poll,
                              tuple(rules), replay, fresh, quota_reached=maybe_in_flight >= p.inflight_quota, live=live,
                              settled=settled, at_rest=at_rest, hidden=hidden,
                              over_limit_permitted=over_limit_permitted, invoked=now, wait=min(waits))


def _live_states(messages: list[Message], queue: str, now: float
                 ) -> tuple[list[tuple[Message, list[MessageState]]], int, int]:
    """Each message's states live in the queue, and how many messages are surely and possibly in flight."""
    live = []
    surely_in_flight = possibly_in_flight = 0
    for message in messages:
        states = [s for s in message.states if s.queue == queue and s.gone is Gone.NO]
        live.append((message, states))
        flying = sum(1 for s in states if s.hidden is Hidden.RECEIPT and now < s.visible_at)
        possibly_in_flight += flying > 0
        surely_in_flight += flying == len(message.states)
    return live, surely_in_flight, possibly_in_flight


def _dead_letter_queue_of(model: Model, queue: str) -> str | None:
    redrive = model.redrive_of(queue)
    return redrive.dead_letter_queue if redrive is not None else None


def _moves_on_receive(redrive: Redrive | None, s: MessageState) -> bool:
    return redrive is not None and redrive.moves(s)


def _evaluation_time(releases: list[float], now: float, wait: int) -> float:
    """A long poll answers at once if a message may be receivable, else when the first one may become so."""
    if wait <= 0:
        return now
    if any(t <= now for t in releases):
        return now
    return min((t for t in releases if t <= now + wait), default=now + wait)


def _releases(groups: Iterable[Iterable[tuple[Message, list[MessageState]]]], redrive: Redrive | None, fifo: bool
              ) -> list[float]:
    """When each message may first be returned. A message due for the dead-letter queue is moved, not returned
    (REDRIVE-DLQ); in a FIFO queue only each group's first message may come (FIFO-GROUP-LOCK), and not before
    every earlier one of its group that is to move has been released and moved: in flight, it holds the group.
    `groups`: a FIFO queue's groups, each in send order; a standard queue's messages as one."""
    releases = []
    for members in groups:
        held = -math.inf  # FIFO: when the group's messages ahead that are to move are released
        for _, states in members:
            returnable = [s.visible_at for s in states if not _moves_on_receive(redrive, s)]
            if not returnable:
                if fifo and states:
                    held = max(held, min(s.visible_at for s in states))
                continue
            releases.append(max(min(returnable), held))
            if fifo:
                break
    return releases


def _fifo_groups(live: list[tuple[Message, list[MessageState]]], at_rest: Settled, skip: Container[str]
                 ) -> dict[str, Iterator[tuple[Message, list[MessageState]]]]:
    """FIFO: each group's live messages in send order, the ones looked at one by one (`live`, in send order) merged
    with the group's messages at rest in the index (but `skip`): lazily, as a walk of a group may stop early."""
    moving: dict[str, list[tuple[Message, list[MessageState]]]] = {}
    for entry in live:
        moving.setdefault(entry[0].group_id or "", []).append(entry)
    groups = list(moving) + [group for group in at_rest.groups_at_rest() if group not in moving]
    return {group: _in_send_order(moving.get(group, []), at_rest.at_rest(group, skip) if at_rest.has_at_rest(group)
                                  else None)
            for group in groups}


def _in_send_order(moving: list[tuple[Message, list[MessageState]]],
                   at_rest: Iterator[tuple[Message, list[MessageState]]] | None
                   ) -> Iterator[tuple[Message, list[MessageState]]]:
    if at_rest is None:
        return iter(moving)
    if not moving:
        return at_rest
    return heapq.merge(moving, at_rest, key=lambda entry: entry[0].seq)


def _replay(model: Model, queue: Queue, attempt_id: str, now: float) -> Attempt | None:
    """FIFO-ATTEMPT-ID: the earlier receive to repeat, if it is recent and nothing may have touched its messages
    (each may still be in a state it was in right after it: an answer lost on the way leaves both open)."""
    attempt = queue.attempts.get(attempt_id)
    if attempt is None or now >= attempt.at + model.profile.attempt_id_window_seconds:
        return None
    if any(all(_modified(states, model.messages[mid].states)) for mid, states in attempt.states.items()):
        return None
    return attempt


def _modified(then: tuple[MessageState, ...], now: tuple[MessageState, ...]) -> list[bool]:
    """For each state the message may be in now, whether it was modified since: a change, a delete or a receive
    makes new states. The checker narrowing what it holds possible (an answer ruled a state out) is no
    modification, nor is a new reason a state owes to a rule. Any: it may have been modified; all: it surely was."""
    before = {s.evolve(why=()) for s in then}
    return [s.evolve(why=()) not in before for s in now]


@dataclass
class _Candidate:
    message: Message
    receivable: list[MessageState] = field(default_factory=list)  # returnable now
    due: list[MessageState] = field(default_factory=list)  # receivable but would pass maxReceiveCount
    hidden: list[MessageState] = field(default_factory=list)  # live here but not receivable now
    blocked: list[MessageState] = field(default_factory=list)  # FIFO: visible, but behind a hidden group member
    # FIFO: visible, but out of reach: past the first `reach` messages of its group's visible prefix in some way
    # the group may stand (and held back in every other). No correct answer has it, whatever rules set its state.
    beyond: list[MessageState] = field(default_factory=list)


@dataclass
class ReceiveExpectation:
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

    def _candidates(self) -> dict[str, _Candidate]:
        result = {message.id: self._sorted_out(message, states) for message, states in self.live}
        if self.queue.fifo:
            self._apply_group_order(result)
        return result

    def _sorted_out(self, message: Message, states: list[MessageState]) -> _Candidate:
        """The message with its states here sorted by what this receive may do with them."""
        candidate = _Candidate(message)
        for s in states:
            if not s.may_be_due(self.late, self.model.timing.tolerance):
                candidate.hidden.append(s)
            elif _moves_on_receive(self.redrive, s):
                candidate.due.append(s)
            else:
                candidate.receivable.append(s)
        return candidate

    def receivable_ids(self) -> list[str]:
        """The messages this receive may return, in send order."""
        moving = [c.message for c in self.candidates.values() if c.receivable]
        return [m.id for m in sorted([*moving, *self.settled], key=lambda m: m.seq)]

    def _candidate(self, message_id: str) -> _Candidate | None:
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
                return _Candidate(message, beyond=[self.at_rest.state(message_id)])
            return _Candidate(message, blocked=[self.at_rest.state(message_id)])
        hidden = self.hidden.state(message_id)
        if hidden is not None:
            return _Candidate(self.model.messages[message_id], hidden=[hidden])
        return None

    def _settled_candidate(self, message: Message) -> _Candidate:
        return _Candidate(message, receivable=[self.settled.state(message.id)])

    def _apply_group_order(self, candidates: dict[str, _Candidate]) -> None:
        """FIFO: within a group only the visible prefix (up to the first hidden message) is receivable. Each group
        is walked in send order up to where it stops in every way its messages may stand; the messages at rest
        read on the way join `candidates`, those behind are held back (or surely hidden) and read together."""
        self.blockers: dict[str, tuple[str, ...]] = {}
        self.surely_free: set[str] = set()  # in the visible prefix whatever state the group is in
        self.held_at_rest: list[tuple[str, ...]] = []  # the `why` of each kind of settled message held back unread
        self.held_groups: set[str] = set()  # groups that hold a visible message back
        moving: dict[str, list[_Candidate]] = {}
        for candidate in candidates.values():
            moving.setdefault(candidate.message.group_id or "", []).append(candidate)
        for group_id, in_order in _fifo_groups(self.live, self.at_rest, self.hidden.near).items():
            read: list[_Candidate] = []
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

    def _walk(self, in_order: Iterator[tuple[Message, list[MessageState]]], candidates: dict[str, _Candidate],
              read: list[_Candidate]) -> Iterator[_Candidate]:
        """A group's candidates in send order; each message at rest becomes one as it is read (into `read` and
        `candidates`)."""
        for message, states in in_order:
            candidate = candidates.get(message.id)
            if candidate is None:
                candidate = candidates[message.id] = self._sorted_out(message, states)
                read.append(candidate)
            yield candidate

    def _group_prefixes(self, members: Iterable[_Candidate], allowed: dict[str, set[MessageState]]
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
                        if s.hidden is not Hidden.DELAY:
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
        rules = list(self.base_rules)
        rules.append(RCV_LONG_POLL if self.long_poll else RCV_SHORT_POLL)
        rules += [RCV_COUNT, RCV_FIRST_TIMESTAMP]
        if sum(1 for c in self.candidates.values() if c.receivable) + len(self.settled) > self.max_messages:
            rules.append(RCV_MAX_MESSAGES)  # more could be returned than may be: the bound bites
        rules += self.settled.rules()
        if self.hidden:  # as a hidden candidate below
            rules += self.hidden.rules() + [RCV_HIDE] + [RCV_AT_LEAST_ONCE] * self.model.profile.at_least_once
        for candidate in self.candidates.values():
            for s in candidate.hidden:
                rules += list(s.why) + [RCV_HIDE]
            for s in candidate.blocked:
                rules += list(s.why)
            for s in candidate.receivable + candidate.due:
                rules += list(s.why) + ([RCV_REAPPEAR] if s.receive_count else [])
            if candidate.due:
                rules.append(REDRIVE_DLQ)
            if candidate.hidden and self.model.profile.at_least_once:
                rules.append(RCV_AT_LEAST_ONCE)
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
        applicable = self.model.profile.rule_ids
        return tuple(r for r in dict.fromkeys(rules) if r in applicable)

    # --- the model's own answer ---------------------------------------------------------------------------

    def canonical(self) -> Outcome:
        if self.replay is not None:  # where it may also be fresh, the documented retry
            return Outcome(ReceiveOk(self.replay.messages), self.rules, at=self.at)
        chosen: list[tuple[Message, list[MessageState]]] = []
        if self.queue.fifo:
            for prefixes in self.prefixes.values():
                for message_id in prefixes[0] if prefixes else []:
                    candidate = self.candidates[message_id]
                    chosen.append((candidate.message, candidate.receivable[:1]))
        else:
            for candidate in self.candidates.values():
                if candidate.receivable:
                    chosen.append((candidate.message, candidate.receivable[:1]))
            chosen += [(m, [self.settled.state(m.id)]) for m in self.settled.first(self.max_messages)]
        if self.quota_reached:
            chosen = []
        chosen.sort(key=lambda pair: pair[0].seq)
        return self._outcome(chosen[: self.max_messages], notes=(), canonical=True)

    def possible_effects(self) -> Effects | None:
        """Every message it could have returned may now be in flight under a handle nobody saw; one it may have
        left out, and that was due to move, may be in the dead-letter queue instead (both, where it may have
        been in either state)."""
        if self.op.attempt_id:
            return None  # a retry with the same attempt id may replay it: that cannot be followed
        returned = [(c.message, [s for s in c.receivable if s not in c.blocked]) for c in self.candidates.values()]
        returned += [(m, [self.settled.state(m.id)]) for m in self.settled]
        returned.sort(key=lambda pair: pair[0].seq)  # the handles it mints, in send order whatever is settled
        taken = self._outcome([(m, states) for m, states in returned if states], notes=(), canonical=False).effects
        for message_id, states in self._outcome([], notes=(), canonical=False).effects.states.items():
            taken.states[message_id] = tuple(dict.fromkeys(taken.states.get(message_id, ()) + states))
        return taken

    # --- judging a target's answer --------------------------------------------------------------------------

    def check(self, observed: Response) -> Verdict:
        if self.over_limit_permitted and response_matches(errors.over_limit(), observed, frozenset()):
            return Verdict(Outcome(observed, self.rules, at=self.at))
        if not isinstance(observed, ReceiveOk):
            problem = Divergence(self._refusal_rules(observed), "ReceiveOk", describe(observed),
                                 permitted=(ReceiveSome(),))
            return Verdict(Outcome(observed, self.rules, at=self.at), (problem,), consistent=False)
        if self.replay is not None and (not self.fresh or self._repeats(observed)):
            return self._check_replay(observed)
        problems: list[Divergence] = []
        notes: list[Divergence] = []
        returned: list[tuple[Message, list[MessageState]]] = []
        in_order: list[Message] = []  # returned messages that were receivable: their group order is checked
        seen: set[str] = set()
        over_max = len(observed.messages) > self.max_messages
        for got in observed.messages:
            message = self.model.messages.get(got.message_id or "")
            if message is None or got.message_id in seen or got.body != message.body:
                problems.append(Divergence((RCV_INTEGRITY,), "only messages sent to this queue, once each",
                                           f"message {got.message_id} body {got.body!r}"))
                continue
            seen.add(message.id)
            states, problem, note = self._judge(message, got, over_max)
            if problem is None and got.receipt_handle is not None and RCV_NEW_HANDLE in self.model.profile.rule_ids:
                # In model space a handle the target issued before reads as the model's name for it; a new one
                # reads as None (conformance/translate.py).
                problem = Divergence((RCV_NEW_HANDLE,), "a receipt handle not issued before",
                                     f"the handle {got.receipt_handle} of an earlier receive", (message.id,))
            if problem is None:
                states = self._first_receive_seen(states, got)
            if problem is not None:
                problems.append(problem)
            else:
                in_order.append(message)
            if note:
                notes.append(note)
            returned.append((message, states))
        if over_max:
            problems.append(Divergence((RCV_MAX_MESSAGES,), f"at most {self.max_messages} messages",
                                       f"{len(observed.messages)} messages",
                                       permitted=(ReceiveSome(most=self.max_messages),)))
        if self.queue.fifo:
            problems += self._check_group_order(in_order)
        if not observed.messages and self.long_poll:
            problems += self._missed_by_long_poll()
        if not problems and self.long_poll:
            problems += self._long_poll_timing(bool(observed.messages))
        # An empty long poll looked at every message: a surely due one was moved, not overlooked.
        swept = self.long_poll and not observed.messages
        return Verdict(self._outcome(returned, tuple(notes), canonical=False, swept=swept), tuple(problems))

    def _refusal_rules(self, observed: Response) -> tuple[str, ...]:
        """The rules a refused receive breaks, most specific first: a refusal that names a parameter breaks the
        range rule of that parameter (a person fixes that check), then the receive's other rules."""
        named = [rule for parameter, rule in _RANGE_RULES.items()
                 if isinstance(observed, Error) and parameter in observed.message]
        return _dedupe(tuple(r for r in named if r in self.model.profile.rule_ids) + self.rules)

    def _judge(self, message: Message, got: ReceivedMessage, over_max: bool):
        """The states the returned message may have been in, a divergence if none fits, and a note. `over_max`:
        the answer has more messages than the receive may return."""
        candidate = self._candidate(message.id)
        if candidate is None:  # gone, or in another queue
            # Found in the dead-letter queue of a queue it is (or was last) in: moved there before its receives
            # permitted it. A delete that seemed to remove it does not move it here: the move is the fault.
            redriven = any(_dead_letter_queue_of(self.model, s.queue) == self.queue.name for s in message.states)
            whys = (REDRIVE_DLQ,) * redriven + tuple(r for s in message.states for r in s.why) or (DEL_REMOVES,)
            return [], Divergence(_dedupe(whys), "not returned: no longer in this queue",
                                  f"returned {message.id}", (message.id,), _without(message)), None
        fitting = [s for s in candidate.receivable if self._attributes_fit(s, got)]
        if fitting:
            return fitting, None, None
        if candidate.receivable:
            # Named after the state that fits the most: where the count fits one, the timestamp is what is wrong.
            closest = next((s for s in candidate.receivable if got.receive_count in _counts(s)),
                           candidate.receivable[0])
            return candidate.receivable, self._attribute_problem(closest, got, message), None
        if self.model.profile.at_least_once:
            in_flight = [s for s in candidate.hidden if s.hidden is Hidden.RECEIPT and self._attributes_fit(s, got)]
            if in_flight:
                rules = _dedupe(tuple(r for s in in_flight for r in s.why) + (RCV_AT_LEAST_ONCE,))
                note = Divergence(rules, f"hidden until {min(s.visible_at for s in in_flight):.3f}",
                                  f"redelivered at {self.at:.3f}", (message.id,))
                return in_flight, None, note
        if candidate.beyond:
            # Out of reach: it comes only after more of its group than a receive may return. Too many messages is
            # RCV-MAX-MESSAGES (checked on the whole answer); otherwise it skipped earlier messages of its group.
            problem = None if over_max else Divergence(
                (FIFO_ORDER,), f"after at least {self.max_messages} messages of group {message.group_id or ''}",
                f"returned at {self.at:.3f}", (message.id,), _without(message))
            return candidate.beyond, problem, None
        if candidate.blocked:
            group = message.group_id or ""
            problem = Divergence(self.blockers.get(group, (FIFO_GROUP_LOCK,)),
                                 f"held back behind an earlier message of group {group}",
                                 f"returned at {self.at:.3f}", (message.id,), _without(message))
            return candidate.blocked, problem, None
        if candidate.due and not candidate.hidden:
            problem = Divergence((REDRIVE_DLQ,), "moved to the dead-letter queue", f"returned at {self.at:.3f}",
                                 (message.id,), _without(message))
            return candidate.due, problem, None
        states = candidate.hidden
        rules = _dedupe(tuple(r for s in states for r in s.why) + (RCV_HIDE,))
        expected = f"hidden until {min(s.visible_at for s in states):.3f}"
        return states, Divergence(rules, expected, f"returned at {self.at:.3f}", (message.id,), _without(message)), None

    def _surely_moved(self, candidate: _Candidate) -> bool:
        group = candidate.message.group_id or ""
        # Only its states in this queue count: where it may already be elsewhere (in the dead-letter queue, gone),
        # those worlds are kept as they are, and the one where it was due here has it moved too.
        return (not candidate.receivable and not candidate.hidden and not candidate.blocked and not candidate.beyond
                and bool(candidate.due)
                and all(self._surely_visible(s) for s in candidate.due)
                and not (self.queue.fifo and group in self.blockers))

    def _surely_visible(self, s: MessageState) -> bool:
        return s.surely_due(self.at, self.model.timing.tolerance)

    def _attributes_fit(self, s: MessageState, got: ReceivedMessage) -> bool:
        if RCV_COUNT not in self.model.profile.rule_ids:
            return True
        if got.receive_count is not None and got.receive_count not in _counts(s):
            return False
        if got.first_receive_ms is not None:
            # Under a real clock the target's clock is not ours: allow the first receive's window and the tolerance.
            allowed = self.timestamp_tolerance_ms + 1000 * self.model.timing.tolerance
            return any(millis(earliest) - allowed <= got.first_receive_ms <= millis(latest) + allowed
                       for earliest, latest in self._firsts(s))
        return True

    def _firsts(self, s: MessageState) -> list[tuple[float, float]]:
        """When this receive may say the message was first received, earliest and latest: at its first receive
        (or this one); after a redrive, at its first receive in the dead-letter queue too."""
        firsts = [(s.first_receive_at, s.first_receive_at + s.first_receive_slack) if s.first_receive_at is not None
                  else (self.at, self.late)]
        if s.redrive_base is not None:
            firsts.append((s.redrive_first_at, s.redrive_first_at + s.redrive_first_slack)
                          if s.redrive_first_at is not None else (self.at, self.late))
        return firsts

    def _first_receive_seen(self, states: list[MessageState], got: ReceivedMessage) -> list[MessageState]:
        """A first receive happens somewhere in its window: the timestamp the target gave it, judged to fit, is the
        one every later receive must repeat (not the window's start, which a correct answer may be far from)."""
        if got.first_receive_ms is None or RCV_COUNT not in self.model.profile.rule_ids:
            return states
        seen = got.first_receive_ms / 1000
        return [s.evolve(first_receive_at=seen, first_receive_slack=0.0) if s.first_receive_at is None else s
                for s in states]

    def _attribute_problem(self, s: MessageState, got: ReceivedMessage, message: Message) -> Divergence:
        if got.receive_count is not None and got.receive_count not in _counts(s):
            return Divergence((RCV_COUNT,), f"ApproximateReceiveCount {s.receive_count + 1}",
                              f"ApproximateReceiveCount {got.receive_count}", (message.id,))
        earliest, latest = self._firsts(s)[0]
        expected = millis(earliest) if latest == earliest else f"{millis(earliest)}..{millis(latest)}"
        return Divergence((RCV_FIRST_TIMESTAMP,), f"ApproximateFirstReceiveTimestamp {expected}",
                          f"ApproximateFirstReceiveTimestamp {got.first_receive_ms}", (message.id,))

    def _check_group_order(self, returned: list[Message]) -> list[Divergence]:
        by_group: dict[str, list[str]] = {}
        for message in returned:
            by_group.setdefault(message.group_id or "", []).append(message.id)
        problems = []
        for group_id, ids in by_group.items():
            ids = ids[: self.reach]  # past it, too many messages (RCV-MAX-MESSAGES): the prefixes end there
            prefixes = self.prefixes.get(group_id, [])
            if not any(prefix[: len(ids)] == ids for prefix in prefixes):
                out_of_reach = {i for i in ids if (c := self._candidate(i)) is not None and c.beyond}
                if any(set(ids) - out_of_reach <= set(prefix) for prefix in prefixes):
                    rules: tuple[str, ...] = (FIFO_ORDER,)
                else:
                    rules = self.blockers.get(group_id, (FIFO_GROUP_LOCK,)) + (FIFO_ORDER,)
                orders = tuple(tuple(self.model.messages[i].body for i in prefix) for prefix in prefixes)
                problems.append(Divergence(_dedupe(rules), f"a prefix of {prefixes}", f"group {group_id}: {ids}",
                                           tuple(ids), (ReceiveInOrder(group_id, orders),)))
        return problems

    def _missed_by_long_poll(self) -> list[Divergence]:
        """RCV-LONG-POLL: an empty answer while some message was surely receivable. An empty long poll waited out
        its wait: under a real clock's window it answered at or after invoke + wait, so a message surely receivable
        by then had to be returned, not only one surely receivable when the poll began."""
        if self.quota_reached:
            return []
        by = max(self.at, min(self.late, self.invoked + self.wait))
        # The first such message in send order is named (a settled one is surely receivable by then).
        settled = [self._settled_candidate(m) for m in self.settled.first(1)]
        for candidate in sorted([*self.candidates.values(), *settled], key=lambda c: c.message.seq):
            states = candidate.message.states
            surely = [s for s in candidate.receivable if s.surely_due(by, self.model.timing.tolerance)]
            if self.queue.fifo and candidate.message.id not in self.surely_free:
                continue  # an earlier message of its group may still hold the group
            if surely and len(surely) == len(states):
                why = tuple(r for s in states for r in s.why if r != RCV_HIDE)
                reappeared = any(s.hidden is not Hidden.NONE for s in states)
                # Surely visible when the poll began: its deadline was kept, the poll missed it. Visible only during
                # the wait: a poll that does not wake for it is the likelier fault than the deadline.
                waking = () if all(self._surely_visible(s) for s in surely) else (RCV_LONG_POLL,)
                rules = _dedupe(self._held_by_later(candidate) + waking + self._on_the_brink(states) + why
                                + ((RCV_REAPPEAR,) if reappeared else ()) + (RCV_LONG_POLL,))
                applicable = self.model.profile.rule_ids
                return [Divergence(tuple(r for r in rules if r in applicable),
                                   f"{candidate.message.id} returned (visible since {states[0].visible_at:.3f})",
                                   "empty long poll", (candidate.message.id,), (ReceiveSome(least=1),))]
        return []

    def _on_the_brink(self, states: tuple[MessageState, ...]) -> tuple[str, ...]:
        """A message missed where this receive is its maxReceiveCount-th: a queue that moves it to the dead-letter
        queue one receive early gives that very answer, the likelier fault than a deadline that every earlier
        receive kept (local-aws-sqs does so). One that became visible only during the wait names the poll first."""
        redrive = self.redrive
        if redrive is not None and all(s.receive_count + 1 >= redrive.max_receive_count for s in states):
            return (REDRIVE_DLQ,)
        return ()

    def _long_poll_timing(self, returned: bool) -> list[Divergence]:
        """RCV-LONG-POLL on a virtual clock, where the moment of the answer is exact: a long poll answers as soon as
        a message is surely receivable, and an empty one no sooner than the end of its wait if a message became
        receivable before then. (A real clock's windows cannot tell; FIFO group locks and redrive are left to the
        checks above.)"""
        if self.model.timing.windowed or self.queue.fifo or self.quota_reached:
            return []
        end = self.invoked + self.wait
        surely: list[float] = []  # when each message is receivable in every state it may be in
        for candidate in self.candidates.values():
            states = candidate.receivable + candidate.hidden
            if states and not candidate.due and not candidate.blocked and len(states) == len(
                    candidate.message.states):
                surely.append(max(self.invoked, *(s.visible_at for s in states)))
        if self.settled:
            surely.append(self.invoked)  # settled by the time the poll began
        first = min((t for t in surely if t <= end), default=None)
        if first is None:
            return []
        if self.at > first + LONG_POLL_SLACK:
            return [Divergence((RCV_LONG_POLL,), f"an answer at {first:.3f}, when a message was receivable",
                               f"answered at {self.at:.3f}")]
        if not returned and self.at < first - LONG_POLL_SLACK:
            return [Divergence((RCV_LONG_POLL,), f"a message at {first:.3f}, within the wait (to {end:.3f})",
                               f"an empty answer at {self.at:.3f}")]
        return []

    def _held_by_later(self, candidate: _Candidate) -> tuple[str, ...]:
        """FIFO: a visible message missed while a later message of its group is in flight was most likely held
        back by that one, which only the visible-prefix rule forbids: that rule comes first."""
        if not self.queue.fifo:
            return ()
        message = candidate.message
        # Past its reach the group's walk read nothing: each later message is looked up (only on this divergence).
        for other_id in self.queue.message_ids:
            other = self.model.messages[other_id]
            if other.group_id == message.group_id and other.seq > message.seq:
                found = self._candidate(other_id)
                if found is not None and found.hidden:
                    return (FIFO_VISIBLE_PREFIX,)
        return ()

    def _repeats(self, observed: ReceiveOk) -> bool:
        return _pairs(observed.messages) == _pairs(self.replay.messages)  # type: ignore[union-attr]

    def _check_replay(self, observed: ReceiveOk) -> Verdict:
        # Where a fresh receive was possible too, a repeat decides nothing: a queue that ignores attempt ids, or
        # breaks any other rule this receive would weigh, could not have been told apart by it.
        outcome = Outcome(observed, self.rules, at=self.at, undecided=self.rules if self.fresh else ())
        if self._repeats(observed):
            return Verdict(outcome)
        expected = _pairs(self.replay.messages)  # type: ignore[union-attr]
        again = ReceiveRepeated(tuple((m.body, m.receipt_handle) for m in self.replay.messages))  # type: ignore
        return Verdict(outcome, (Divergence((FIFO_ATTEMPT_ID,), f"the same messages and handles {expected}",
                                            f"{_pairs(observed.messages)}", permitted=(again,)),))

    # --- the state after the receive ------------------------------------------------------------------------

    def _outcome(self, returned: list[tuple[Message, list[MessageState]]], notes: tuple[Divergence, ...],
                 canonical: bool, swept: bool = False) -> Outcome:
        """The state after the receive. The model's own answer picks one of everything the checker must keep
        open: the newest queue timeout, and every due message moved. An observed answer keeps open that a due
        message was not looked at (a short poll samples, a long poll answers with what it found first), unless
        it `swept` the queue: then a message surely due, and not held behind its FIFO group, was moved."""
        visibilities = self.visibilities[:1] if canonical else self.visibilities
        effects = Effects()
        shown: list[ReceivedMessage] = []
        minted: set[str] = set()
        returned_ids: dict[str, None] = {}  # in the answer's order: the rules it decides come in that order
        for message, states in returned:
            returned_ids[message.id] = None
            handle = self.model.mint_handle()
            minted.add(handle)
            bases = states or message.states[:1]  # none fit (a divergent answer): adopt it so the run goes on
            new_states = tuple(dict.fromkeys(self._received_with(s, handle, v) for s in bases for v in visibilities))
            effects.states[message.id] = new_states
            effects.handles[handle] = HandleInfo(message.id, self.queue.name, self.at)
            first = new_states[0]
            shown.append(ReceivedMessage(message.id, message.body, handle, first.receive_count,
                                         millis(first.first_receive_at) if first.first_receive_at is not None
                                         else None))
        redrive = self.redrive
        for message_id, candidate in self.candidates.items():
            if redrive is None or message_id in returned_ids or not candidate.due:
                continue
            moved = tuple(s.evolve(queue=redrive.dead_letter_queue, visible_at=self.at, hidden=Hidden.NONE,
                                   receipt=None, why=(REDRIVE_DLQ,), redrive_base=s.receive_count,
                                   redrive_first_at=None) for s in candidate.due)
            kept = () if canonical or (swept and self._surely_moved(candidate)) else tuple(candidate.message.states)
            effects.states[message_id] = tuple(dict.fromkeys(
                kept + moved + tuple(s for s in candidate.message.states if s not in candidate.due)))
        if self.queue.fifo and self.op.attempt_id and self.fresh:
            attempt = Attempt(self.at, tuple(shown),
                              {mid: states for mid, states in effects.states.items() if mid in returned_ids})
            effects.queue_changes = (AttemptRemembered(self.queue.name, self.op.attempt_id, attempt),)
        applicable = self.model.profile.rule_ids
        decided = tuple(r for mid in returned_ids for s in effects.states[mid] for r in s.why if r in applicable)
        if any(s.receive_count for _, states in returned for s in states):  # a handle it had before could come back
            decided += tuple(r for r in (RCV_NEW_HANDLE,) if r in applicable)
        rules = tuple(dict.fromkeys(self.rules + decided))  # e.g. VIS-NOT-STICKY: this receive ignored a change
        return Outcome(ReceiveOk(tuple(shown)), rules, effects, frozenset(minted), notes, self.at,
                       self._undecided(bool(returned_ids)), self._long_poll_situations())

    def _long_poll_situations(self) -> tuple[tuple[str, str], ...]:
        """A long poll the queue's default made, and one that a message due only during its wait must wake,
        are situations of their own: a queue may ignore that default, or poll once and answer at once, and
        still pass every long poll that finds a message already there."""
        if not self.long_poll:
            return ()
        labels = ["the queue's default wait"] if self.op.wait_time_seconds is None else []
        at_once = {id(c) for c in self._surely_receivable_by(self.invoked)}
        if any(id(c) not in at_once for c in self._due_by_end_of_wait):
            labels.append("a message due during the wait")
        return situated((RCV_LONG_POLL,), ", ".join(labels))

    def _undecided(self, returned: bool) -> tuple[str, ...]:
        """Rules this receive exercises without being able to catch them broken. A receive count or first
        timestamp shows only on a message returned; a FIFO group's order only where two of its messages could
        come; a message coming back after its timeout only where the receive may not leave it out (a long poll,
        the message surely visible in every state it may be in: a short poll samples)."""
        undecided = [] if returned else [RCV_COUNT, RCV_FIRST_TIMESTAMP]
        if self.replay is not None:  # it may have repeated an earlier receive, or not: an answer of its own is fine
            undecided.append(FIFO_ATTEMPT_ID)
        if not any(len(prefix) >= 2 for prefixes in self.prefixes.values() for prefix in prefixes):
            undecided.append(FIFO_ORDER)
        # A long poll differs from a short one only where a message is surely receivable before its wait ends
        # (an empty answer would come then): on an empty queue the two answer alike.
        if not self.long_poll:
            return (*undecided, RCV_LONG_POLL, RCV_REAPPEAR)
        due_by_end = self._due_by_end_of_wait  # and every settled message
        if not (due_by_end or self.settled):
            undecided.append(RCV_LONG_POLL)
        if not (any(all(s.receive_count for s in c.receivable + c.hidden) for c in due_by_end)
                or self.settled.any_received_before):
            undecided.append(RCV_REAPPEAR)
        return tuple(undecided)

    @cached_property
    def _due_by_end_of_wait(self) -> list[_Candidate]:
        """Read by both the decisive rules and the situations of every outcome: the candidates are fixed by then."""
        return self._surely_receivable_by(self.invoked + self.wait)

    def _surely_receivable_by(self, end: float) -> list[_Candidate]:
        """The messages in motion receivable by `end` in every state they may be in (none held back or moved
        instead). Every settled message is too, from before the receive."""
        tolerance = self.model.timing.tolerance
        return [c for c in self.candidates.values()
                if c.receivable + c.hidden and not c.due and not c.blocked and not c.beyond
                and len(c.receivable) + len(c.hidden) == len(c.message.states)
                and all(s.surely_due(end, tolerance) for s in c.receivable + c.hidden)]

    def _received_with(self, s: MessageState, handle: str, v: int) -> MessageState:
        why: list[str] = []
        if s.was_locked:
            why.append(LOCK_NOT_REMEMBERED)
        elif s.changed_at is not None:
            why.append(VIS_NOT_STICKY)
        if self.op.visibility_timeout is not None:
            why.append(RCV_OVERRIDE)
        elif self.queue.settings["VisibilityTimeout"].changed_at is not None:
            why.append(QATTR_LATER_RECEIVES)
        why.append(RCV_HIDE)
        return s.evolve(
            visible_at=self.at + v, slack=self.late - self.at, hidden=Hidden.RECEIPT, receipt=handle,
            received_at=self.at, received_slack=self.late - self.at, changed_at=None,
            receive_count=s.receive_count + 1,
            first_receive_at=s.first_receive_at if s.first_receive_at is not None else self.at,
            first_receive_slack=s.first_receive_slack if s.first_receive_at is not None else self.late - self.at,
            redrive_first_at=s.redrive_first_at if s.redrive_first_at is not None or s.redrive_base is None
            else self.at,
            redrive_first_slack=s.redrive_first_slack if s.redrive_first_at is not None or s.redrive_base is None
            else self.late - self.at,
            was_locked=False, why=tuple(why),
        )


_RANGE_RULES = {"VisibilityTimeout": VIS_RANGE, "WaitTimeSeconds": RCV_WAIT_RANGE,
                "MaxNumberOfMessages": RCV_MAX_MESSAGES}


def _pairs(messages) -> list[tuple[str | None, str | None]]:
    """What a repeat must give again: the same messages, under the same handles."""
    return [(m.message_id, m.receipt_handle) for m in messages]


def _counts(s: MessageState) -> set[int]:
    """The receive counts a receive may report: one more than before; after a redrive, perhaps counted afresh in
    the dead-letter queue (nothing records which, docs/evidence.md row 'receive-count' speaks of one queue)."""
    return {s.receive_count + 1} | ({s.receive_count - s.redrive_base + 1} if s.redrive_base is not None else set())


def _without(message: Message) -> tuple[ReceiveWithout]:
    """What a receive that returned a message it must not have was permitted, as far as that message goes."""
    return (ReceiveWithout((message.body,)),)


def _dedupe(rules: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(rules))
