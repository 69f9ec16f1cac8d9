"""ReceiveMessage: which messages may come back, what the receive does to them, and how to judge a response.

The permitted responses are not enumerated (a short poll may return any subset of the visible messages):
`ReceiveExpectation.check` judges a response message by message, then checks what binds them together
(how many, FIFO group order, a long poll's duty to return something).
"""

from __future__ import annotations

import math

from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import (
    Enumerated, Expectation, Outcome,
)
from sqs_conformance.model.rules import (
    INFLIGHT_QUOTA,
    RCV_MAX_MESSAGES,
    RCV_OVERRIDE,
    RCV_WAIT_RANGE,
    VIS_RANGE,
)
from sqs_conformance.model.settled import NOTHING_SETTLED
from sqs_conformance.model.state import (
    GONE_NO,
    HIDDEN_RECEIPT,
    Attempt,
    Message,
    MessageState,
    Queue,
    Redrive,
)
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.validation import is_int_in
from sqs_conformance.model.values import ReceiveMessage
from sqs_conformance.model.receive_holdings import fifo_groups, moves_on_receive
from sqs_conformance.model.receive_judging import ReceiveJudging

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model

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
    live = live_states(moving, queue.name)
    in_flight, maybe_in_flight = in_flight_counts(live, now)  # a settled message is not in flight
    surely_hidden_in_flight = hidden.how_many(HIDDEN_RECEIPT)
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
        groups = fifo_groups(live, at_rest, hidden.near).values() if queue.fifo else [live]
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


def live_states(messages: list[Message], queue: str) -> list[tuple[Message, list[MessageState]]]:
    """Each message's states live in the queue."""
    return [(message, [s for s in message.states if s.queue == queue and s.gone is GONE_NO]) for message in messages]


def in_flight_counts(live: list[tuple[Message, list[MessageState]]], now: float) -> tuple[int, int]:
    """How many of these messages (each with its states live in the queue) are surely and possibly in flight."""
    surely_in_flight = possibly_in_flight = 0
    for message, states in live:
        flying = 0
        for s in states:  # a loop, not sum() over a generator: this runs for every message of every receive
            if s.hidden is HIDDEN_RECEIPT and now < s.visible_at:
                flying += 1
        possibly_in_flight += flying > 0
        surely_in_flight += flying == len(message.states)
    return surely_in_flight, possibly_in_flight


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
            returnable = [s.visible_at for s in states if not moves_on_receive(redrive, s)]
            if not returnable:
                if fifo and states:
                    held = max(held, min(s.visible_at for s in states))
                continue
            releases.append(max(min(returnable), held))
            if fifo:
                break
    return releases


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


class ReceiveExpectation(ReceiveJudging):
    """One receive's expectation: which messages may come back (model/receive_holdings.py), what the receive does
    to them (model/receive_effects.py), and how to judge a target's answer (model/receive_judging.py)."""
