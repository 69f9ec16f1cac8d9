"""A receive, part two: what it does to the messages it returns (and to those it moves), as the model's own answer
and as the state a target's answer leaves (model/receive.py puts the parts together).
"""

from __future__ import annotations

from collections.abc import Container
from functools import cached_property

from sqs_conformance.model.outcomes import (
    Divergence, Effects, Outcome, situated,
)
from sqs_conformance.model.rules import (
    DELAY_HIDES,
    FIFO_ATTEMPT_ID,
    FIFO_ORDER,
    LOCK_NOT_REMEMBERED,
    QATTR_LATER_RECEIVES,
    RCV_COUNT,
    RCV_FIRST_TIMESTAMP,
    RCV_HIDE,
    RCV_LONG_POLL,
    RCV_NEW_HANDLE,
    RCV_OVERRIDE,
    RCV_REAPPEAR,
    REDRIVE_DLQ,
    REDRIVE_KEEPS_COUNT,
    VIS_NOT_STICKY,
    VIS_TERMINATE,
)
from sqs_conformance.model.state import (
    Attempt,
    AttemptRemembered,
    HandleInfo,
    HIDDEN_NONE,
    Message,
    MessageState,
    millis,
)
from sqs_conformance.model.values import ReceivedMessage, ReceiveOk
from sqs_conformance.model.receive_holdings import Candidate, ReceiveHoldings


_SHORT_POLL_UNDECIDED = (RCV_LONG_POLL, RCV_REAPPEAR)  # a short poll samples: it may leave any message out


class ReceiveEffects(ReceiveHoldings):
    """A receive's effects: the model's own answer, and the states an answer leaves its messages in."""

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

    # --- the state after the receive ------------------------------------------------------------------------

    def _outcome(self, returned: list[tuple[Message, list[MessageState]]], notes: tuple[Divergence, ...],
                 canonical: bool, swept: bool = False) -> Outcome:
        """The state after the receive. The model's own answer picks one of everything the checker must keep
        open: the newest queue timeout, and every due message moved. An observed answer keeps open that a due
        message was not looked at (a short poll samples, a long poll answers with what it found first), unless
        it `swept` the queue: then a message surely due, and not held behind its FIFO group, was moved."""
        visibilities = self.visibilities[:1] if canonical else self.visibilities
        override = self.op.visibility_timeout is not None
        queue_changed = self.queue.settings["VisibilityTimeout"].changed_at is not None
        effects = Effects()
        shown: list[ReceivedMessage] = []
        minted: set[str] = set()
        returned_ids: dict[str, None] = {}  # in the answer's order: the rules it decides come in that order
        for message, states in returned:
            returned_ids[message.id] = None
            handle = self.model.mint_handle()
            minted.add(handle)
            bases = states or message.states[:1]  # none fit (a divergent answer): adopt it so the run goes on
            new_states = tuple(dict.fromkeys(received_state(s, handle, v, self.at, self.late, override, queue_changed)
                                             for s in bases for v in visibilities))
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
            moved = tuple(s.evolve(queue=redrive.dead_letter_queue, visible_at=self.at, hidden=HIDDEN_NONE,
                                   receipt=None, why=(REDRIVE_DLQ,), redrive_base=s.receive_count,
                                   redrive_first_at=None) for s in candidate.due)
            kept = () if canonical or (swept and self._surely_moved(candidate)) else tuple(candidate.message.states)
            effects.states[message_id] = tuple(dict.fromkeys(
                kept + moved + tuple(s for s in candidate.message.states if s not in candidate.due)))
        if self.queue.fifo and self.op.attempt_id and self.fresh:
            attempt = Attempt(self.at, tuple(shown),
                              {mid: states for mid, states in effects.states.items() if mid in returned_ids})
            effects.queue_changes = (AttemptRemembered(self.queue.name, self.op.attempt_id, attempt),)
        decided = decided_rules(returned, effects.states, self.model.profile.rule_ids)
        rules = tuple(dict.fromkeys(self.rules + decided))  # e.g. VIS-NOT-STICKY: this receive ignored a change
        return Outcome(ReceiveOk(tuple(shown)), rules, effects, frozenset(minted), notes, self.at,
                       self._undecided(bool(returned_ids)),
                       self._long_poll_situations() + self._delay_situations(returned))

    def _delay_situations(self, returned: list[tuple[Message, list[MessageState]]]) -> tuple[tuple[str, str], ...]:
        """On a queue with a delay, a message returned that was made visible at once (VIS-TERMINATE), or sent with
        its own DelaySeconds 0 (DELAY-HIDES): a queue that applies its delay again, or instead, passes every such
        step on a queue without one."""
        propagation = self.model.profile.attribute_propagation_seconds
        if "DelaySeconds" not in self.queue.settings or not any(
                self.queue.setting("DelaySeconds", self.at, propagation)):
            return ()
        states = [s for _, before in returned for s in before]
        terminated = any(VIS_TERMINATE in s.why for s in states)
        undelayed = any(DELAY_HIDES in s.why and s.hidden is HIDDEN_NONE for s in states)
        return (situated((VIS_TERMINATE,), "on a queue with a delay" if terminated else "")
                + situated((DELAY_HIDES,), "its own DelaySeconds 0 on a queue with a delay" if undelayed else ""))

    def _long_poll_situations(self) -> tuple[tuple[str, str], ...]:
        if not self.long_poll:
            return ()
        at_once = {id(c) for c in self._surely_receivable_by(self.invoked)}
        return long_poll_situations(self.op.wait_time_seconds is None,
                                    any(id(c) not in at_once for c in self._due_by_end_of_wait))

    def _undecided(self, returned: bool) -> tuple[str, ...]:
        due_by_end = self._due_by_end_of_wait if self.long_poll else []
        return undecided_rules(
            returned, self.replay is not None,
            any(len(prefix) >= 2 for prefixes in self.prefixes.values() for prefix in prefixes), self.long_poll,
            bool(due_by_end or self.settled),
            any(all(s.receive_count for s in c.receivable + c.hidden) for c in due_by_end)
            or self.settled.any_received_before)

    @cached_property
    def _due_by_end_of_wait(self) -> list[Candidate]:
        """Read by both the decisive rules and the situations of every outcome: the candidates are fixed by then."""
        return self._surely_receivable_by(self.invoked + self.wait)

    def _surely_receivable_by(self, end: float) -> list[Candidate]:
        """The messages in motion receivable by `end` in every state they may be in (none held back or moved
        instead). Every settled message is too, from before the receive."""
        tolerance = self.model.timing.tolerance
        return [c for c in self.candidates.values()
                if not c.due and not c.blocked and not c.beyond
                and surely_receivable(c.message, c.receivable + c.hidden, end, tolerance)]


def surely_receivable(message: Message, states: list[MessageState], end: float, tolerance: float) -> bool:
    """Whether a message, in `states` here (every state it may be in: none elsewhere or gone), is receivable by
    `end` in each."""
    return bool(states) and len(states) == len(message.states) and all(s.surely_due(end, tolerance) for s in states)


def long_poll_situations(default_wait: bool, due_during_wait: bool) -> tuple[tuple[str, str], ...]:
    """A long poll the queue's default made, and one that a message due only during its wait must wake, are
    situations of their own: a queue may ignore that default, or poll once and answer at once, and still pass
    every long poll that finds a message already there."""
    labels = ["the queue's default wait"] * default_wait + ["a message due during the wait"] * due_during_wait
    return situated((RCV_LONG_POLL,), ", ".join(labels))


def undecided_rules(returned: bool, may_replay: bool, order_shows: bool, long_poll: bool, due_by_end: bool,
                    reappearing_due: bool) -> tuple[str, ...]:
    """Rules a receive exercises without being able to catch them broken. A receive count or first timestamp
    shows only on a message returned (`returned`); a FIFO group's order only where two of its messages could come
    (`order_shows`); an earlier answer repeated or not, where one may be (`may_replay`: an answer of its own is
    fine too). A long poll differs from a short one only where a message is surely receivable before its wait
    ends (`due_by_end`: an empty answer would come then; on an empty queue the two answer alike); a message coming
    back after its timeout shows only there, on one returned before (`reappearing_due`): a short poll samples."""
    undecided = [] if returned else [RCV_COUNT, RCV_FIRST_TIMESTAMP]
    if may_replay:
        undecided.append(FIFO_ATTEMPT_ID)
    if not order_shows:
        undecided.append(FIFO_ORDER)
    if not long_poll:
        return (*undecided, *_SHORT_POLL_UNDECIDED)
    if not due_by_end:
        undecided.append(RCV_LONG_POLL)
    if not reappearing_due:
        undecided.append(RCV_REAPPEAR)
    return tuple(undecided)


def decided_rules(returned: list[tuple[Message, list[MessageState]]], states: dict[str, tuple[MessageState, ...]],
                  applicable: Container[str]) -> tuple[str, ...]:
    """The rules a receive's answer decides beyond those it exercised: the rules that set the new states of the
    messages it returned (`states`, after the receive), a new handle for a message returned before, a dead-letter
    copy's count."""
    decided = [r for message_id in dict.fromkeys([m.id for m, _ in returned]) for s in states[message_id]
               for r in s.why if r in applicable]
    if RCV_NEW_HANDLE in applicable and any([s.receive_count for _, before in returned for s in before]):
        decided.append(RCV_NEW_HANDLE)  # a handle it had before could come back
    if RCV_COUNT in applicable and any([before and all([s.redrive_base is not None for s in before])
                                        for _, before in returned]):  # a dead-letter copy's count shows
        decided.append(REDRIVE_KEEPS_COUNT)
    return tuple(decided)


def received_state(s: MessageState, handle: str, v: int, at: float, late: float, override: bool,
                   queue_timeout_changed: bool) -> MessageState:
    """The state a receive taking effect in [at, late] leaves a message in, from state `s`, under `handle` for `v`
    seconds; `override`: the receive set its own VisibilityTimeout; `queue_timeout_changed`: the queue's was set
    after its creation."""
    why: list[str] = []
    if s.was_locked:
        why.append(LOCK_NOT_REMEMBERED)
    elif s.changed_at is not None:
        why.append(VIS_NOT_STICKY)
    if override:
        why.append(RCV_OVERRIDE)
    elif queue_timeout_changed:
        why.append(QATTR_LATER_RECEIVES)
    why.append(RCV_HIDE)
    return s.received(handle, at, late, at + v, tuple(why))
