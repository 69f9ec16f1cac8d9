"""A history cut into parts the semantics keep apart, each searched on its own (P-compositionality).

Messages of a standard queue are independent; on a FIFO queue the messages of one group are not (its lock and its
order bind them), but groups are. So a part is one message (standard) or one group (FIFO), with:

- the operations that act on the whole queue: CreateQueue and SetQueueAttributes in every part; PurgeQueue and a
  receive whose answer was lost (it may have taken any message) in every part whose messages may have been there
  while it took effect (a purge refused, in the queue's own part only); on a queue with a redrive policy, every
  receive also in every other part its window meets, as a receive whose answer was lost (it may have moved that
  part's message to the dead-letter queue instead of returning it);
- each receive cut to the messages of the part it returned (a receive that returned some message of another part
  is, here, a receive that returned these);
- each change and delete in the part of the message its handle names, a batch in the part of all its entries
  (their parts merged), and on a FIFO queue the messages of every answer to one ReceiveRequestAttemptId in one
  part (a retry's answer depends on all of them).

What this gives up, and why it stays sound: an empty answer, or a message left out of an answer, is judged in no
message's part (only in the queue's own, where no message is); GetQueueAttributes and peeks, which read every
message together, are judged nowhere; a queue where a receive's answer was lost and a later operation names a handle
no answer gave is judged only up to that receive. Leaving a constraint out only ever permits more: the checker can
miss a violation there, never report a false one. What must never be left out is what makes the model permit an
answer (a change to another group's message that lets a retry's answer differ): that binds parts together.
docs/guide/concurrency.md lists these.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from sqs_conformance.conformance.concurrent.history import History, HistoryOp
from sqs_conformance.conformance.translate import handles_named
from sqs_conformance.model.values import (
    ChangeMessageVisibilityBatch, CreateQueue, DeleteMessageBatch, Error, GetQueueAttributes, PeekMessage, PurgeQueue,
    ReceiveMessage, ReceiveOk, SendMessage, SendOk, SetQueueAttributes, Unknown,
)

WHOLE_QUEUE = (CreateQueue, SetQueueAttributes, PurgeQueue)
READ_TOGETHER = (GetQueueAttributes, PeekMessage)  # judged in no part


@dataclass
class Part:
    key: str  # the message or group it follows, in words
    ops: list[HistoryOp] = field(default_factory=list)  # responses cut to this part, in history order


@dataclass
class Decomposed:
    parts: list[Part]
    unjudged: list[HistoryOp]  # read every message together: judged nowhere
    # queues with a message no answered send names (its send's answer lost, or nobody sent it): it lies in a part of
    # its own, apart from its FIFO group's
    apart: set[str] = field(default_factory=set)


class _Keys:
    """Union-find over part keys: a batch that names messages of two parts merges them."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        parent = self._parent.setdefault(key, key)
        if parent == key:  # nearly every key: a root
            return key
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def merge(self, keys: list[str]) -> str:
        roots = [self.find(k) for k in keys]
        for other in roots[1:]:
            self._parent[other] = roots[0]
        return roots[0]


QUEUE_OWN = "the queue itself"


def decompose(history: History) -> Decomposed:
    fifo = history.profile == "sqs-fifo"
    survey = _surveyed(history, fifo)
    key_of, message_of, lost_sends = survey.key_of, survey.message_of, survey.lost_sends
    apart: set[str] = set()

    def key(message_id: str | None, queue: str) -> str:
        if message_id in key_of:
            return key_of[message_id]  # type: ignore[index]
        # A message no answered send names: one whose send's answer was lost, if any was; else a message nobody
        # sent (its part, without a send, shows that)
        apart.add(queue)
        return f"messages of lost sends to {queue}" if queue in lost_sends else f"message {message_id}"

    redriven = survey.redriven
    blind_from = _blind_from(history, message_of, survey.lost_receives)
    keys = _bound_together(survey.bound, key, message_of)
    parts: dict[str, Part] = {QUEUE_OWN: Part(QUEUE_OWN)}
    spans: dict[str, list[float]] = {}  # per part: when its first operation was sent, when its last settled
    # each operation and its part's root (None: every part; a set: every other part, for a redrive's move)
    rooted: list[tuple[HistoryOp, str | frozenset[str] | None]] = []
    unjudged: list[HistoryOp] = []

    def place(o: HistoryOp, root: str) -> None:
        rooted.append((o, root))
        span, settles = spans.get(root), o.settles_by
        if span is None:
            parts.setdefault(root, Part(root))
            spans[root] = [o.invoke_wall, settles]
        elif settles > span[1]:
            span[1] = settles

    for o in history.ops:
        op, response = o.op, o.response
        queue = getattr(op, "queue", "")
        if blind_from and o.invoke_wall >= blind_from.get(queue, float("inf")):
            unjudged.append(o)
        elif isinstance(op, ReceiveMessage):
            roots = []
            if isinstance(response, ReceiveOk) and response.messages:
                # cut by part (a root), not by key: keys merged into one part get one receive, not one per key
                roots = [keys.find(key(m.message_id, queue)) for m in response.messages]
                if len(roots) == 1 or len(set(roots)) == 1:
                    place(o, roots[0])  # every message of one part: nothing to cut
                else:
                    for each_root in dict.fromkeys(roots):
                        place(_cut(o, each_root, roots), each_root)
            elif isinstance(response, Unknown):
                rooted.append((o, None))
            else:
                place(o, QUEUE_OWN)
            if queue in redriven and isinstance(response, ReceiveOk):
                rooted.append((o, frozenset(roots)))
        elif isinstance(op, WHOLE_QUEUE):
            rooted.append((o, None))
        elif isinstance(op, READ_TOGETHER):
            unjudged.append(o)
        elif isinstance(op, SendMessage):
            if isinstance(response, Unknown):
                place(o, keys.find(f"messages of lost sends to {queue}"))
            elif isinstance(response, SendOk) and response.message_id is not None:
                place(o, keys.find(key(response.message_id, queue)))
            else:
                place(o, QUEUE_OWN)
        else:  # changes and deletes, alone or in batches: the part of the messages their handles name
            named = [key(message_of[h], queue) for h in handles_named(op) if h in message_of]
            place(o, keys.find(named[0]) if named else QUEUE_OWN)
    overlapping = _Overlapping({root: span for root, span in spans.items() if root != QUEUE_OWN})
    for o, rooted_at in rooted:
        if rooted_at is None:
            for every in [QUEUE_OWN, *_touched(o, parts, overlapping)]:
                parts[every].ops.append(o)
        elif isinstance(rooted_at, frozenset):  # the parts of the messages it returned
            for other in _touched(o, parts, overlapping):
                if other not in rooted_at:
                    parts[other].ops.append(o.answered(Unknown(_MAY_HAVE_MOVED)))
        else:
            parts[rooted_at].ops.append(o)
    return Decomposed(list(parts.values()), unjudged, apart | lost_sends)


# A receive on a queue with a redrive policy moves, instead of returning, a message received maxReceiveCount times
# (REDRIVE-DLQ): whatever it answered, it may have moved a message of a part it is not in. There it is judged as a
# receive whose answer was lost, which keeps that open.
_MAY_HAVE_MOVED = "not this part's: it may have moved this part's message to the dead-letter queue"


class _Named(NamedTuple):
    """A message of a binding, as the history names it: by its id, by a receipt handle, or by its part's key."""

    queue: str
    message_id: str | None = None
    handle: str | None = None
    key: str | None = None


@dataclass
class _Survey:
    """What one pass over a history finds before anything is routed."""

    key_of: dict[str, str] = field(default_factory=dict)  # target message id -> part key
    message_of: dict[str, str] = field(default_factory=dict)  # target receipt handle -> target message id
    lost_sends: set[str] = field(default_factory=set)  # queues with a send whose answer never came
    redriven: set[str] = field(default_factory=set)  # queues given a redrive policy anywhere in the history
    lost_receives: dict[str, float] = field(default_factory=dict)  # per queue: its first receive with no answer, sent
    # what names the messages the semantics bind together (`_bound_together`), per binding; resolved to part keys
    # once every id is known
    bound: dict[tuple[str, str], list[_Named]] = field(default_factory=dict)


def _surveyed(history: History, fifo: bool) -> _Survey:
    survey = _Survey()
    for o in history.ops:
        op, response = o.op, o.response
        if isinstance(op, SendMessage):
            if isinstance(response, SendOk) and response.message_id is not None:
                group = _group_key(op.group_id, op.queue) if fifo else None
                survey.key_of.setdefault(response.message_id, group or f"message {response.message_id}")
                if op.group_id is not None:
                    survey.bound.setdefault((f"sent to {op.queue}", response.message_id), []).append(
                        _Named(op.queue, key=_group_key(op.group_id, op.queue)))
            elif isinstance(response, Unknown):
                survey.lost_sends.add(op.queue)
        elif isinstance(response, ReceiveOk):
            for m in response.messages:
                if m.receipt_handle is not None and m.message_id is not None:
                    survey.message_of[m.receipt_handle] = m.message_id
            if isinstance(op, ReceiveMessage) and op.attempt_id:
                survey.bound.setdefault((op.queue, op.attempt_id), []).extend(
                    _Named(op.queue, message_id=m.message_id) for m in response.messages)
        elif isinstance(op, ReceiveMessage):
            if isinstance(response, Unknown):
                survey.lost_receives.setdefault(op.queue, o.invoke_wall)
        elif isinstance(op, (CreateQueue, SetQueueAttributes)):
            if op.attributes.get("RedrivePolicy"):
                survey.redriven.add(op.queue)
        elif isinstance(op, (ChangeMessageVisibilityBatch, DeleteMessageBatch)):
            survey.bound.setdefault(("batch", str(o.index)), []).extend(
                _Named(op.queue, handle=h) for h in handles_named(op))
    return survey


def _bound_together(bound: dict[tuple[str, str], list[_Named]], key: Callable[[str | None, str], str],
                    message_of: dict[str, str]) -> _Keys:
    """The part keys merged where the semantics bind messages of several parts, before anything is routed (so
    that a receive is cut once, by the parts as they end up), from what the survey found names them (`bound`):
    - a batch's entries: one answer judges them together;
    - the messages of every answer to one ReceiveRequestAttemptId (FIFO-ATTEMPT-ID): a retry repeats all of them
      unless one changed since, whatever its group, so a part that held only some could not see the change (to a
      message of another group) that permits a fresh answer;
    - the FIFO groups of every send answered with one message id (one deduplication id sent to two groups): the
      message is in the group of whichever send took effect first, and holds that group's later messages back."""
    keys = _Keys()
    for named in bound.values():
        found = [n.key if n.key is not None else key(message_of[n.handle], n.queue) if n.handle is not None
                 else key(n.message_id, n.queue) for n in named if n.handle is None or n.handle in message_of]
        if found:
            keys.merge(found)
    return keys


def _group_key(group_id: str | None, queue: str) -> str:
    return f"group {group_id} of {queue}"


def _touched(o: HistoryOp, parts: dict[str, Part], overlapping: _Overlapping) -> list[str]:
    """The parts (other than the queue's own) an operation on the whole queue may act on: every one for a queue's
    creation and attributes; for a purge (or a receive whose answer was lost) those whose messages may be there
    while it takes effect, and none if it surely did nothing (a refused purge: judged in the queue's own part)."""
    if isinstance(o.op, (CreateQueue, SetQueueAttributes)):
        return [root for root in parts if root != QUEUE_OWN]
    if isinstance(o.response, Error):
        return []
    return overlapping.during(o.invoke_wall, o.settles_by)


class _Overlapping:
    """The parts whose span [first sent, last settled] meets a window, asked in the order windows open (history
    order): a sweep, so that a history's purges cost in the parts alive around them, not in every part."""

    def __init__(self, spans: dict[str, list[float]]) -> None:
        self._by_start = sorted(spans.items(), key=lambda item: item[1][0])
        self._starts = [span[0] for _, span in self._by_start]
        self._next = 0  # parts from here on have not started by the last window's opening
        self._open: list[tuple[float, int, str]] = []  # heap of (last settled, start order, root): parts started

    def during(self, opens: float, closes: float) -> list[str]:
        while self._next < len(self._by_start) and self._starts[self._next] <= opens:
            root, span = self._by_start[self._next]
            heapq.heappush(self._open, (span[1], self._next, root))
            self._next += 1
        while self._open and self._open[0][0] < opens:  # ended before this window: before every later one too
            heapq.heappop(self._open)
        starting = self._by_start[self._next:bisect.bisect_right(self._starts, closes, lo=self._next)]
        return [root for _, _, root in self._open] + [root for root, _ in starting]


def _blind_from(history: History, message_of: dict[str, str], lost: dict[str, float]) -> dict[str, float]:
    """Per queue, where the checker goes blind: a receive whose answer was lost (`lost`: the first, per queue),
    where some operation names a handle no answer gave (the lost answer's, as like as not: its message may have
    been deleted or changed by it, unseen). Everything on that queue from that receive on is judged nowhere."""
    if not lost:
        return lost
    blind = {o.op.queue for o in history.ops if getattr(o.op, "queue", None) in lost
             and any(h not in message_of for h in handles_named(o.op))}
    return {queue: at for queue, at in lost.items() if queue in blind}


def _cut(o: HistoryOp, part_key: str, part_of_each: list[str]) -> HistoryOp:
    """A receive's answer cut to the messages of one part (`part_of_each`: each message's, in the answer's order)."""
    assert isinstance(o.response, ReceiveOk)
    return o.answered(ReceiveOk(tuple(m for m, part in zip(o.response.messages, part_of_each, strict=True)
                                              if part == part_key)))
