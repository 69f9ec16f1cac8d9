"""One order of a part's operations as the search walks it: the model and the id map it has reached, who holds
each receipt the model minted on the way, and when each message lay surely receivable with nothing acting on it.
Who holds what names a rule among consumers where a message was another consumer's (`model/consumers.py`); the
receipts held decide RCV-EXCLUSIVE, and the messages left receivable judge the empty long polls no part holds
(`checker.py`). Each operation is judged once, here: the order the search finds comes with its verdicts.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, replace
from typing import NamedTuple

from sqs_conformance.conformance.concurrent.history import HistoryOp
from sqs_conformance.conformance.translate import IdMap, handles_named
from sqs_conformance.model import Divergence, Model
from sqs_conformance.model.consumers import among_consumers
from sqs_conformance.model.outcomes import Verdict, copied
from sqs_conformance.model.state import Gone, Hidden, MessageState
from sqs_conformance.model.values import ReceiveMessage, ReceiveOk


def fits(verdict: Verdict) -> bool:
    return verdict.consistent and not verdict.divergences


def judge(model: Model, ids: IdMap, o: HistoryOp) -> Verdict:
    """`o` judged on `model` (which it changes), its fresh ids bound, as taking effect anywhere in its own window.
    Not narrowed by the operations ordered before it: a queue may read its clock when a request arrives and take
    effect after another that arrived later (a timestamp from before a delete that came first); nothing in the
    evidence forbids it, so the checker permits it."""
    verdict = model.observe(ids.op_for_model(o.op), o.invoke, ids.response_for_model(o.response),
                            completed_at=o.complete)
    ids.bind_fresh(verdict.outcome, o.response)
    return verdict


@dataclass(frozen=True)
class Judged:
    """What the checker keeps of one step's verdict: light enough to keep a million of, and to send between
    processes (`spread.py`)."""

    rules: tuple[str, ...]  # exercised
    decisive: tuple[str, ...]
    divergences: tuple[Divergence, ...]
    notes: tuple[Divergence, ...]  # early returns, permitted and counted

    @classmethod
    def of(cls, verdict: Verdict) -> Judged:
        if verdict.divergences or verdict.outcome.notes:
            return cls(verdict.outcome.rules, verdict.decisive, verdict.divergences, verdict.outcome.notes)
        return _plain(verdict.outcome.rules, verdict.decisive)

    @functools.cached_property
    def rule_set(self) -> frozenset[str]:
        """`rules` as a set, made once: shared by every step of one kind (`_plain`)."""
        return frozenset(self.rules)

    @functools.cached_property
    def decisive_set(self) -> frozenset[str]:
        return frozenset(self.decisive)

    @functools.cached_property
    def decided(self) -> frozenset[str]:
        """As `Verdict.decided`: exercised decisively, or broken."""
        return frozenset(self.decisive) | {d.rule for d in self.divergences}


@functools.lru_cache(maxsize=4096)
def _plain(rules: tuple[str, ...], decisive: tuple[str, ...]) -> Judged:
    """A step that fit with nothing to count, one object per kind: a million of them are a few hundred, and a
    process sends each once."""
    return Judged(rules, decisive, (), ())


class Held(NamedTuple):
    """A receipt a receive gave one client: from its answer to the next operation on the message, while the model
    had the message surely in flight until `deadline` (model time). A tuple: a history holds one per message a
    receive returned, each made twice (held, then let go) and sent between processes."""

    queue: str
    client: int
    from_wall: float
    until_wall: float
    deadline: float


class LeftReceivable(NamedTuple):
    """A message (on a FIFO queue, a group: `Model.returned_once_due`) that a receive returns once it is due, in
    every state it may be in (`states`), and on which nothing acted from `from_wall` (every operation of its part
    before had settled) until `until_wall` (the next was sent, at `until` on the target's clock). `done`: the
    operations of its part's order before (the first `done` of the part: every one sent before the next). Where
    those could take effect in more than one order, this is what the order the search found left (`one_order`
    False): another order may have left it otherwise, so it stands only where every order leaves it so
    (`checker._EveryOrder`); `key` names it in every order alike. A tuple, as `Held`: a history leaves hundreds
    of thousands, sent between processes."""

    queue: str
    message_id: str  # model id
    from_wall: float
    until_wall: float
    until: float
    states: tuple[MessageState, ...]
    done: int
    one_order: bool = True
    key: tuple[str, ...] = ()

    def surely_due(self, at: float, tolerance: float) -> bool:
        """Receivable at the instant `at`, in every state it may be in, as the model judges an instant."""
        return all(s.surely_due(at, tolerance) for s in self.states)

    def due_only_after(self, at: float, tolerance: float) -> bool:
        """Hidden at the instant `at`, in every state it may be in (each still in flight or delayed then)."""
        return at + tolerance < min(s.visible_at for s in self.states)

    def due_before(self, end: float, tolerance: float) -> bool:
        """Surely receivable, in every state it may be in, before `end`: by more than the tolerance, and strictly
        (a message due at the very instant a long poll's wait ends may come just after its last look)."""
        return self.due_from + tolerance < end

    @property
    def due_from(self) -> float:
        return _due_from(self.states)


def _due_from(states: tuple[MessageState, ...]) -> float:
    """When the last of these states is surely due (the tolerance not added)."""
    return max(s.visible_at + s.slack for s in states)


class Path:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.ids = IdMap()
        self._holder: dict[str, int] = {}  # model receipt handle -> the client its receive answered
        self._let_go: list[Held] = []  # receipts whose message another operation has acted on since
        self._open: dict[str, Held] = {}  # model message id -> its receipt still held
        self.receivable: list[LeftReceivable] = []  # each ended by the next operation
        self._done = 0  # operations that fit, in order
        self._settled = -math.inf  # when the last of them had surely taken effect (wall)
        self._one_order = True  # no operation so far was sent before an earlier one's answer came

    def fork(self) -> Path:
        other = copy.copy(self)
        other.model, other.ids = self.model.fork(), self.ids.copy()
        other._holder, other._let_go, other._open = dict(self._holder), list(self._let_go), dict(self._open)
        other.receivable = list(self.receivable)
        return other

    def state(self) -> tuple:
        """Everything a later step reads of this path's model and ids, as one hashable value (a search's memo)."""
        return self.model.fingerprint(), self.ids.bindings()

    @property
    def held(self) -> list[Held]:
        return [*self._let_go, *self._open.values()]

    def step(self, o: HistoryOp, after_every_earlier: bool) -> tuple[Verdict, Judged]:
        """The model's verdict on `o` taking effect next, and what the checker keeps of it: its rules named among
        consumers. `after_every_earlier`: every operation of the part sent before `o` took effect before it in this
        order."""
        messages = self._messages_of(o)
        holders = {message_id: self._holders(message_id) for message_id in messages}
        for message_id in messages:
            if message_id in self._open:
                self._let_go.append(self._open.pop(message_id)._replace(until_wall=o.invoke_wall))
        self._acted_on(o, after_every_earlier)
        verdict = judge(self.model, self.ids, o)
        if isinstance(o.response, ReceiveOk) and fits(verdict):
            self._received(o)
        if fits(verdict):
            self._done += 1
            self._settled = max(self._settled, o.settles_by)
        return verdict, Judged.of(_among_consumers(verdict, o.client, holders) if holders else verdict)

    def _acted_on(self, o: HistoryOp, after_every_earlier: bool) -> None:
        """`o` may act on every message of the part: what the operations before left receivable (the model holds it
        still) lies so until `o` is sent, where every one of them had settled by then. Kept only where it was due
        by then (a poll answered in between answered before `o` was sent, on the same clock). Once an operation was
        sent before an earlier one's answer came, the part's operations could take effect in more than one order,
        and what this order leaves receivable is so in this order only (`LeftReceivable.one_order`)."""
        settled = o.invoke_wall > self._settled
        self._one_order = self._one_order and settled
        if not settled or not after_every_earlier or not self._done:
            return
        for message_id, queue, states in self.model.returned_once_due():
            if _due_from(states) <= o.invoke:
                key = () if self._one_order else self.rest_key(message_id)
                self.receivable.append(LeftReceivable(queue, message_id, self._settled, o.invoke_wall, o.invoke,
                                                      states, self._done, self._one_order, key))

    def rest_key(self, message_id: str) -> tuple[str, ...]:
        """What `Model.returned_once_due` yields this message for, named alike in every order of the part: its
        queue and FIFO group, or its queue and the target's id for it (the model's ids follow the order)."""
        message = self.model.messages[message_id]
        queue = message.states[0].queue
        if self.model.profile.fifo:
            return queue, "group", message.group_id or ""
        return queue, "message", self.ids.target_id(message_id)

    def _messages_of(self, o: HistoryOp) -> list[str]:
        """The model ids of the messages `o` returned or names a receipt of."""
        found = []
        if isinstance(o.response, ReceiveOk):
            found += [self.ids.model_id(m.message_id) for m in o.response.messages]
        for handle in handles_named(o.op):
            info = self.model.handles.get(self.ids.model_id(handle) or "")
            found.append(info.message_id if info is not None else None)
        return [m for m in found if m is not None and m in self.model.messages]

    def _holders(self, message_id: str) -> set[int]:
        """The clients whose receipt the message may be in flight under."""
        return {self._holder[s.receipt] for s in self.model.messages[message_id].states
                if s.hidden is Hidden.RECEIPT and s.gone is Gone.NO and s.receipt in self._holder}

    def _received(self, o: HistoryOp) -> None:
        assert isinstance(o.response, ReceiveOk) and isinstance(o.op, ReceiveMessage)
        for m in o.response.messages:
            handle, message_id = self.ids.model_id(m.receipt_handle), self.ids.model_id(m.message_id)
            if handle is None or message_id is None:
                continue
            self._holder[handle] = o.client
            states = self.model.messages[message_id].states
            if all(s.hidden is Hidden.RECEIPT and s.gone is Gone.NO for s in states):
                deadline = min(s.visible_at for s in states) - max(s.slack for s in states)
                self._open[message_id] = Held(o.op.queue, o.client, o.settles_by, float("inf"), deadline)


def _among_consumers(verdict: Verdict, client: int, holders: dict[str, set[int]]) -> Verdict:
    """The verdict with each divergence and note naming its rule among consumers, where the message it concerns
    was another consumer's."""
    def renamed(d: Divergence) -> Divergence:
        whose = set().union(*(holders.get(m, set()) for m in d.message_ids)) if d.message_ids else \
            set().union(*holders.values())
        rules = among_consumers(d.rules, client, whose)
        return d if rules == d.rules else replace(d, rules=rules)

    divergences = tuple(map(renamed, verdict.divergences))
    notes = tuple(map(renamed, verdict.outcome.notes))
    if divergences == verdict.divergences and notes == verdict.outcome.notes:
        return verdict
    return copied(verdict, divergences=divergences, outcome=copied(verdict.outcome, notes=notes))
