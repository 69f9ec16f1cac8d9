"""A receive, part three: judging a target's answer, message by message, then what binds them together (how
many, FIFO group order, a long poll's duty to return something) (model/receive.py puts the parts together).
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import (
    Divergence, Outcome, ReceiveInOrder, ReceiveRepeated, ReceiveSome,
    Verdict, describe, response_matches,
)
from sqs_conformance.model.rules import (
    DEL_REMOVES,
    FIFO_ATTEMPT_ID,
    FIFO_GROUP_LOCK,
    FIFO_ORDER,
    FIFO_VISIBLE_PREFIX,
    RCV_AT_LEAST_ONCE,
    RCV_COUNT,
    RCV_FIRST_TIMESTAMP,
    RCV_HIDE,
    RCV_INTEGRITY,
    RCV_LONG_POLL,
    RCV_MAX_MESSAGES,
    RCV_NEW_HANDLE,
    RCV_REAPPEAR,
    RCV_WAIT_RANGE,
    REDRIVE_DLQ,
    REDRIVE_KEEPS_COUNT,
    VIS_RANGE,
)
from sqs_conformance.model.state import (
    HIDDEN_NONE,
    HIDDEN_RECEIPT,
    Message,
    MessageState,
    millis,
)
from sqs_conformance.model.values import Error, ReceivedMessage, ReceiveOk, Response
from sqs_conformance.model.receive_effects import ReceiveEffects
from sqs_conformance.model.receive_holdings import (
    LONG_POLL_SLACK, Candidate, counts, dead_letter_queue_of, dedupe, pairs, without,
)

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model

_RANGE_RULES = {"VisibilityTimeout": VIS_RANGE, "WaitTimeSeconds": RCV_WAIT_RANGE,
                "MaxNumberOfMessages": RCV_MAX_MESSAGES}


class ReceiveJudging(ReceiveEffects):
    """Judging a target's answer to a receive."""

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
        return dedupe(tuple(r for r in named if r in self.model.profile.rule_ids) + self.rules)

    def _judge(self, message: Message, got: ReceivedMessage, over_max: bool):
        """The states the returned message may have been in, a divergence if none fits, and a note. `over_max`:
        the answer has more messages than the receive may return."""
        candidate = self._candidate(message.id)
        if candidate is None:  # gone, or in another queue
            # Found in the dead-letter queue of a queue it is (or was last) in: moved there before its receives
            # permitted it. A delete that seemed to remove it does not move it here: the move is the fault.
            redriven = any(dead_letter_queue_of(self.model, s.queue) == self.queue.name for s in message.states)
            whys = (REDRIVE_DLQ,) * redriven + tuple(r for s in message.states for r in s.why) or (DEL_REMOVES,)
            return [], Divergence(dedupe(whys), "not returned: no longer in this queue",
                                  f"returned {message.id}", (message.id,), without(message)), None
        fitting = [s for s in candidate.receivable if self._attributes_fit(s, got)]
        if fitting:
            return fitting, None, None
        if candidate.receivable:
            # Named after the state that fits the most: where the count fits one, the timestamp is what is wrong.
            closest = next((s for s in candidate.receivable if got.receive_count in counts(s)),
                           candidate.receivable[0])
            return candidate.receivable, self._attribute_problem(closest, got, message), None
        if self.model.profile.at_least_once:
            in_flight = [s for s in candidate.hidden if s.hidden is HIDDEN_RECEIPT and self._attributes_fit(s, got)]
            if in_flight:
                rules = dedupe(tuple(r for s in in_flight for r in s.why) + (RCV_AT_LEAST_ONCE,))
                note = Divergence(rules, f"hidden until {min(s.visible_at for s in in_flight):.3f}",
                                  f"redelivered at {self.at:.3f}", (message.id,))
                return in_flight, None, note
        if candidate.beyond:
            # Out of reach: it comes only after more of its group than a receive may return. Too many messages is
            # RCV-MAX-MESSAGES (checked on the whole answer); otherwise it skipped earlier messages of its group.
            problem = None if over_max else Divergence(
                (FIFO_ORDER,), f"after at least {self.max_messages} messages of group {message.group_id or ''}",
                f"returned at {self.at:.3f}", (message.id,), without(message))
            return candidate.beyond, problem, None
        if candidate.blocked:
            group = message.group_id or ""
            problem = Divergence(self.blockers.get(group, (FIFO_GROUP_LOCK,)),
                                 f"held back behind an earlier message of group {group}",
                                 f"returned at {self.at:.3f}", (message.id,), without(message))
            return candidate.blocked, problem, None
        if candidate.due and not candidate.hidden:
            problem = Divergence((REDRIVE_DLQ,), "moved to the dead-letter queue", f"returned at {self.at:.3f}",
                                 (message.id,), without(message))
            return candidate.due, problem, None
        states = candidate.hidden
        rules = dedupe(tuple(r for s in states for r in s.why) + (RCV_HIDE,))
        expected = f"hidden until {min(s.visible_at for s in states):.3f}"
        return states, Divergence(rules, expected, f"returned at {self.at:.3f}", (message.id,), without(message)), None

    def _attributes_fit(self, s: MessageState, got: ReceivedMessage) -> bool:
        return attributes_fit(self.model, s, got, self.at, self.late, self.timestamp_tolerance_ms)

    def _firsts(self, s: MessageState) -> list[tuple[float, float]]:
        return firsts(s, self.at, self.late)

    def _first_receive_seen(self, states: list[MessageState], got: ReceivedMessage) -> list[MessageState]:
        return first_receive_seen(self.model, states, got)

    def _attribute_problem(self, s: MessageState, got: ReceivedMessage, message: Message) -> Divergence:
        if got.receive_count is not None and got.receive_count not in counts(s):
            # a dead-letter copy counted afresh (or its move counted as a receive) is the move's fault
            rules = (REDRIVE_KEEPS_COUNT, RCV_COUNT) if s.redrive_base is not None else (RCV_COUNT,)
            return Divergence(rules, f"ApproximateReceiveCount {s.receive_count + 1}",
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
                problems.append(Divergence(dedupe(rules), f"a prefix of {prefixes}", f"group {group_id}: {ids}",
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
            if self.queue.fifo and not self._group_surely_free_from(candidate) < by:
                continue  # another message of its group may still hold the group then
            if surely and len(surely) == len(states):
                why = tuple(r for s in states for r in s.why if r != RCV_HIDE)
                reappeared = any(s.hidden is not HIDDEN_NONE for s in states)
                # Surely visible as the poll began: its deadline was kept, the poll missed it. Visible only inside
                # the wait (neither at its start nor at its very end): a poll that does not wake for it is the
                # likelier fault.
                tolerance = self.model.timing.tolerance
                waking = (RCV_LONG_POLL,) if any(not s.surely_due(self.invoked + LONG_POLL_SLACK, tolerance)
                                                 and s.surely_due(by - LONG_POLL_SLACK, tolerance)
                                                 for s in surely) else ()
                rules = dedupe(self._held_by_later(candidate) + waking + self._on_the_brink(states) + why
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
        if self.model.timing.windowed or self.quota_reached:
            return []
        end = self.invoked + self.wait
        surely: list[float] = []  # when each message is receivable in every state it may be in
        for candidate in self.candidates.values():
            states = candidate.receivable + candidate.hidden
            held_back = bool(candidate.blocked) and not self.queue.fifo  # FIFO: until its group is free (below)
            if states and not candidate.due and not held_back and len(states) == len(candidate.message.states):
                free = self._group_surely_free_from(candidate) if self.queue.fifo else -math.inf
                surely.append(max(self.invoked, free, *(s.visible_at for s in states)))
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

    def _group_surely_free_from(self, candidate: Candidate) -> float:
        """FIFO: the instant from which no other message of the candidate's group here can hold it back, in any
        state any of them may be in: each surely visible (or gone) by then (its release then, or its deadline kept).
        Asked where the walk at the receive's own time left the message unsure (a long poll that waits past
        another message's deadline, whatever other groups stay locked meanwhile)."""
        if candidate.message.id in self.surely_free:
            return -math.inf
        latest = self._latest_release_per_group.get(candidate.message.group_id or "", [])
        return next((edge for edge, message_id in latest if message_id != candidate.message.id), -math.inf)

    @cached_property
    def _latest_release_per_group(self) -> dict[str, list[tuple[float, str]]]:
        """Per FIFO group, its two messages here surely visible last (latest first): when each is surely visible,
        in every state it may be in. Every message of the queue is read (one hidden far beyond the receive's
        horizon holds its group too), once a receive asks."""
        tolerance = self.model.timing.tolerance
        per_group: dict[str, list[tuple[float, str]]] = {}
        for message_id in self.queue.message_ids:
            message = self.model.messages[message_id]
            edges = [s.visible_at + s.slack + tolerance for s in message.states if s.live_in(self.queue.name)]
            if edges:
                latest = per_group.setdefault(message.group_id or "", [])
                latest.append((max(edges), message_id))
                latest.sort(reverse=True)
                del latest[2:]
        return per_group

    def _held_by_later(self, candidate: Candidate) -> tuple[str, ...]:
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
        return pairs(observed.messages) == pairs(self.replay.messages)  # type: ignore[union-attr]

    def _check_replay(self, observed: ReceiveOk) -> Verdict:
        # Where a fresh receive was possible too, a repeat decides nothing: a queue that ignores attempt ids, or
        # breaks any other rule this receive would weigh, could not have been told apart by it.
        outcome = Outcome(observed, self.rules, at=self.at, undecided=self.rules if self.fresh else ())
        if self._repeats(observed):
            return Verdict(outcome)
        expected = pairs(self.replay.messages)  # type: ignore[union-attr]
        again = ReceiveRepeated(tuple((m.body, m.receipt_handle) for m in self.replay.messages))  # type: ignore
        return Verdict(outcome, (Divergence((FIFO_ATTEMPT_ID,), f"the same messages and handles {expected}",
                                            f"{pairs(observed.messages)}", permitted=(again,)),))


def attributes_fit(model: Model, s: MessageState, got: ReceivedMessage, at: float, late: float,
                   timestamp_tolerance_ms: int) -> bool:
    """Whether a message returned by a receive taking effect in [at, late] reports the receive count and first
    receive timestamp of state `s`."""
    if RCV_COUNT not in model.profile.rule_ids:
        return True
    if got.receive_count is not None and got.receive_count not in counts(s):
        return False
    if got.first_receive_ms is not None:
        # Under a real clock the target's clock is not ours: allow the first receive's window and the tolerance.
        allowed = timestamp_tolerance_ms + 1000 * model.timing.tolerance
        return any([millis(earliest) - allowed <= got.first_receive_ms <= millis(latest) + allowed
                    for earliest, latest in firsts(s, at, late)])
    return True


def firsts(s: MessageState, at: float, late: float) -> list[tuple[float, float]]:
    """When a receive taking effect in [at, late] may say the message was first received, earliest and latest: at
    its first receive (or this one); after a redrive, at its first receive in the dead-letter queue too."""
    found = [(s.first_receive_at, s.first_receive_at + s.first_receive_slack) if s.first_receive_at is not None
             else (at, late)]
    if s.redrive_base is not None:
        found.append((s.redrive_first_at, s.redrive_first_at + s.redrive_first_slack)
                     if s.redrive_first_at is not None else (at, late))
    return found


def first_receive_seen(model: Model, states: list[MessageState], got: ReceivedMessage) -> list[MessageState]:
    """A first receive happens somewhere in its window: the timestamp the target gave it, judged to fit, is the
    one every later receive must repeat (not the window's start, which a correct answer may be far from)."""
    if got.first_receive_ms is None or RCV_COUNT not in model.profile.rule_ids:
        return states
    seen = got.first_receive_ms / 1000
    return [s.evolve(first_receive_at=seen, first_receive_slack=0.0) if s.first_receive_at is None else s
            for s in states]
