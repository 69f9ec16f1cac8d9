"""Queue attributes: parsing and validating them, and what GetQueueAttributes may answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqs_conformance.model import errors
from sqs_conformance.model.outcomes import (
    AttributeWithin, Divergence, Effects, Outcome, Verdict, describe, situated,
)
from sqs_conformance.model.rules import ATTR_COUNTS, QATTR_LATER_RECEIVES, REDRIVE_DLQ, VIS_DEFAULT
from sqs_conformance.model.settled import Settled, SurelyHidden
from sqs_conformance.model.state import HIDDEN_DELAY, HIDDEN_NONE, HIDDEN_RECEIPT, Hidden, Queue, Redrive, Setting
from sqs_conformance.model.usage import ModelUsageError
from sqs_conformance.model.validation import as_int, attribute_ranges, is_int_in
from sqs_conformance.model.values import AttributesOk, ErrorSpec, Response

if TYPE_CHECKING:
    from sqs_conformance.model.core import Model
    from sqs_conformance.model.profiles import Profile

VISIBLE = "ApproximateNumberOfMessages"
NOT_VISIBLE = "ApproximateNumberOfMessagesNotVisible"
DELAYED = "ApproximateNumberOfMessagesDelayed"
COUNTS = (VISIBLE, NOT_VISIBLE, DELAYED)
SETTINGS = ("VisibilityTimeout", "DelaySeconds", "ReceiveMessageWaitTimeSeconds")


def parse(model: Model, raw: dict[str, object], *, creating: bool) -> dict[str, object] | Outcome:
    """The attributes as values, or the error outcome of the first invalid one."""
    p = model.profile
    parsed: dict[str, object] = {}
    ranges = attribute_ranges(p)
    for name, value in raw.items():
        if name in ranges:
            low, high, rule_id, supported = ranges[name]
            if not supported:
                raise ModelUsageError(f"profile {p.name} has no queue attribute {name}")
            number = as_int(value)
            if number is None or not is_int_in(number, low, high):
                return Outcome(_attribute_error(name, value, p.error_dialect), (rule_id,))
            parsed[name] = number
        elif name == "RedrivePolicy":
            if not p.has_redrive:
                raise ModelUsageError(f"profile {p.name} has no dead-letter queues")
            redrive = _redrive(model, value)
            if isinstance(redrive, ErrorSpec):
                return Outcome(redrive, (REDRIVE_DLQ,))
            parsed[name] = redrive
        elif name in ("FifoQueue", "ContentBasedDeduplication") and creating:
            parsed[name] = str(value).lower() == "true"
        else:
            raise ModelUsageError(f"the model does not know queue attribute {name!r}")
    if parsed.get("FifoQueue", False) != p.fifo and creating:
        raise ModelUsageError(f"profile {p.name} queues have FifoQueue={p.fifo}")
    return parsed


def _attribute_error(name: str, value: object, dialect: str) -> ErrorSpec:
    if dialect == "smq":
        return errors.out_of_range(name, value, dialect)
    return errors.attribute_out_of_range(name, value)


def dead_letter_queue(value: object) -> str | None:
    """The queue a RedrivePolicy (a JSON string or a dict) names for dead letters, if any."""
    return None if value is None or value == "" else _policy(value).get("deadLetterTargetQueue")


def _policy(value: object) -> dict:
    return json.loads(value) if isinstance(value, str) else dict(value)  # type: ignore[call-overload]


def _redrive(model: Model, value: object) -> Redrive | ErrorSpec | None:
    if value is None or value == "":
        return None
    policy = _policy(value)
    target = policy.get("deadLetterTargetQueue")
    if target not in model.queues:
        raise ModelUsageError(f"dead-letter queue {target!r} is not in the model")
    count = as_int(policy.get("maxReceiveCount"))
    if count is None or not is_int_in(count, 1, 1000):
        return errors.attribute_out_of_range("RedrivePolicy", value)
    return Redrive(target, count)


def new_queue(profile: Profile, name: str, parsed: dict[str, object], now: float) -> Queue:
    settings = {
        "VisibilityTimeout": Setting(profile.visibility_default),
        "DelaySeconds": Setting(0),
        "ReceiveMessageWaitTimeSeconds": Setting(0),
        "RedrivePolicy": Setting(None),
    }
    for key, value in parsed.items():
        if key in settings:
            settings[key] = Setting(value)
    return Queue(name, profile.fifo, settings, content_based_dedup=bool(parsed.get("ContentBasedDeduplication")))


def categories(state, queue: str, now: float, late: float | None = None, tolerance: float = 0.0
               ) -> tuple[str | None, ...]:
    """Which ApproximateNumberOf... counts a message state may fall in (none if it is not live here). Where the
    call's window [now, late] (with the tolerance) meets a deadline or release, either side is permitted, as
    for a receive."""
    if not state.live_in(queue):
        return (None,)
    hidden = _count_while(state.hidden)
    if state.hidden is HIDDEN_NONE or state.surely_due(now, tolerance):
        return (VISIBLE,)
    return (VISIBLE, hidden) if state.may_be_due(now if late is None else late, tolerance) else (hidden,)


def _count_while(hidden: Hidden) -> str:
    """The count a message hidden for this reason falls in until it is due."""
    return DELAYED if hidden is HIDDEN_DELAY else NOT_VISIBLE


def _read_together(settled: Settled, hidden: SurelyHidden) -> dict[str, int]:
    """The counts of the messages not looked at one by one: settled ones are visible, surely hidden ones in the
    count of why they are hidden, whatever the call's window."""
    counts = dict.fromkeys(COUNTS, 0) | {VISIBLE: len(settled)}
    if hidden:
        for reason in _HIDING:
            counts[_count_while(reason)] += hidden.how_many(reason)
    return counts


_HIDING = tuple(reason for reason in Hidden if reason is not HIDDEN_NONE)  # a tuple: iterating an Enum is slow


# ATTR-COUNTS' situations: what hid a message for a while ran out, no receive since (MessageState.waited_out)
_RUN_OUT = ((HIDDEN_RECEIPT, "a receipt's timeout ran out, no receive since"),
            (HIDDEN_DELAY, "a delay ran out, no receive since"))


@dataclass
class AttributesExpectation:
    """Counts may lie between what every possible state agrees on and what any allows (ATTR-COUNTS)."""

    model: Model
    queue: Queue
    now: float
    late: float  # the end of the window in which the request took effect
    rules: tuple[str, ...] = (ATTR_COUNTS,)

    def bounds(self) -> dict[str, tuple[int, int]]:
        return self._bounds_and_situations()[0]

    def _bounds_and_situations(self) -> tuple[dict[str, tuple[int, int]], tuple[tuple[str, str], ...]]:
        """The counts' bounds, and ATTR-COUNTS' situations: where a receipt's timeout or a delay has run out with
        no receive since, a queue that releases a message only when a receive comes (or another operation touches
        the queue) still counts it as hidden, and passes every count read while none has. A timeout of 0 is no
        such situation: a queue may release at once what it is given no time to hold."""
        moving, settled, hidden = self.model.in_motion(self.queue, self.now, self.late)
        low = _read_together(settled, hidden)
        high = dict(low)
        ran_out: set[Hidden | None] = set()  # what hid a message surely due now
        queue, now, late, tolerance = self.queue.name, self.now, self.late, self.model.timing.tolerance
        for message in moving:  # one pass, in loops: this runs for every message at every GetQueueAttributes
            kinds: set[str] = set()
            maybe_not_here = False
            for s in message.states:
                kinds_of_state = categories(s, queue, now, late, tolerance)
                if kinds_of_state[0] is None:
                    maybe_not_here = True
                    continue
                kinds.update(kinds_of_state)  # type: ignore[arg-type]
                if kinds_of_state == (VISIBLE,) and s.hidden is not HIDDEN_NONE:  # hidden, and surely due
                    ran_out.add(s.waited_out())
            for kind in kinds:
                high[kind] += 1
            if len(kinds) == 1 and not maybe_not_here:  # in one count, whatever state it is in
                low[kinds.pop()] += 1
        situations = tuple([pair for reason, label in _RUN_OUT
                            if reason in ran_out or settled.any_waited_out(reason)
                            for pair in situated(self.rules, label)])
        return {k: (low[k], high[k]) for k in COUNTS}, situations

    def settings(self) -> dict[str, tuple[str, ...]]:
        propagation = self.model.profile.attribute_propagation_seconds
        return {name: tuple(map(str, self.queue.setting(name, self.now, propagation))) for name in SETTINGS}

    def possible_effects(self) -> Effects:
        return Effects()  # reading changes nothing

    def canonical(self) -> Outcome:
        moving, settled, hidden = self.model.in_motion(self.queue, self.now, self.now)
        counts = _read_together(settled, hidden)
        for message in moving:
            kind = categories(message.states[0], self.queue.name, self.now)[0]
            if kind is not None:
                counts[kind] += 1
        shown = {k: str(v) for k, v in counts.items()}
        shown.update({name: values[0] for name, values in self.settings().items()})
        return Outcome(AttributesOk(shown), self.rules)

    def check(self, observed: Response) -> Verdict:
        if not isinstance(observed, AttributesOk):
            problem = Divergence(self.rules, "AttributesOk", describe(observed))
            return Verdict(Outcome(observed, self.rules), (problem,))
        problems = []
        bounds, situations = self._bounds_and_situations()
        for name, (low, high) in bounds.items():
            value = as_int(observed.attributes.get(name))
            if value is None or not low <= value <= high:
                problems.append(Divergence(self.rules, f"{name} in [{low}, {high}]", f"{name}={value}",
                                           permitted=(AttributeWithin(name, low, high),)))
        for name, allowed in self.settings().items():
            setting = observed.attributes.get(name)
            if setting is not None and setting not in allowed:
                rule_id = VIS_DEFAULT if name == "VisibilityTimeout" else QATTR_LATER_RECEIVES
                problems.append(Divergence((rule_id,), f"{name} in {allowed}", f"{name}={setting}",
                                           permitted=(AttributeWithin(name, values=tuple(allowed)),)))
        return Verdict(Outcome(observed, self.rules, situations=situations), tuple(problems))
