"""Permitted outcomes of one operation, and how an observed response is checked against them.

An `Expectation` is what the model says about one operation at one time. `canonical()` is the one outcome
the model itself would give (the documented intent first); `check(observed)` accepts any permitted outcome,
narrows the state by what was observed, or reports a `Divergence` naming the rules broken. Even on a
divergence `check` returns an outcome to adopt, so that a run goes on and can find the other divergences.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from sqs_conformance.model import errors
from sqs_conformance.model.rules import (
    BATCH_MAX_ENTRIES, BATCH_PARTIAL, CMV_DELETED, CMV_EXPIRED, CMV_FIFO_EXPIRED, CMV_STALE, DEL_EXPIRED,
    DEL_FIFO_EXPIRED, DEL_STALE, DELAY_HIDES, RCV_LONG_POLL, RCV_MAX_MESSAGES, RCV_WAIT_RANGE, REDRIVE_DLQ,
    VIS_CEILING, VIS_CEILING_FROM_RECEIVE, VIS_CEILING_NO_RESET, VIS_RANGE, Certainty, rule,
)
from sqs_conformance.model.state import HandleInfo, Message, MessageState, QueueChange
from sqs_conformance.model.values import (
    BatchOk, ChangeOk, EntryFailure, Error, ErrorSpec, Ok, ReceiveOk, Response, SendOk,
)

Expected = object  # a Response whose minted ids are placeholders, or an ErrorSpec
_Plain = TypeVar("_Plain")


@dataclass
class Effects:
    """How an outcome changes the model. Message states are replaced wholesale per message."""

    states: dict[str, tuple[MessageState, ...]] = field(default_factory=dict)
    new_messages: tuple[Message, ...] = ()
    handles: dict[str, HandleInfo] = field(default_factory=dict)
    queue_changes: tuple[QueueChange, ...] = ()

    def merged_with(self, other: Effects) -> Effects:
        """Union of two outcomes that the same observation cannot tell apart."""
        states = dict(self.states)
        for message_id, more in other.states.items():
            states[message_id] = union(states.get(message_id, ()), more)
        return Effects(states, self.new_messages, {**self.handles, **other.handles}, self.queue_changes)



def union(a: tuple[MessageState, ...], b: tuple[MessageState, ...]) -> tuple[MessageState, ...]:
    return a + tuple([s for s in b if s not in a])


@dataclass
class Outcome:
    response: Expected
    rules: tuple[str, ...]
    effects: Effects = field(default_factory=Effects)
    minted: frozenset[str] = frozenset()  # ids and handles this outcome creates (the target's will differ)
    # Permitted once but worth counting (an at-least-once redelivery): what it would break if it were not rare.
    notes: tuple[Divergence, ...] = ()
    at: float | None = None  # when the operation took effect (later than the call for a long poll)
    # Rules of `rules` this step could not have caught broken: the answer a queue breaking them would give is
    # permitted here too (a count judged on a receive that returned nothing, an order of one message).
    undecided: tuple[str, ...] = ()
    # What the operation acted on, per rule, where a rule can hold in one situation and break in another with the
    # same answer (a purge that finds a message in flight, a value at the edge of its range, a ceiling counted
    # from a later receive): witnesses are searched for each situation of each rule.
    situations: tuple[tuple[str, str], ...] = ()
    # A refusal's: the effects of the operation carried out all the same, as by a target that does not enforce the
    # refusal's rules (a change past the 12-hour ceiling applied). Never permitted; blame tries that world.
    unenforced: Effects | None = None

    def situation_of(self, rule_id: str) -> str:
        return ", ".join(label for rule, label in self.situations if rule == rule_id)

    def in_situations(self, more: tuple[tuple[str, str], ...]) -> Outcome:
        """This outcome, with more situations of its rules."""
        return copied(self, situations=self._with_situations(more)) if more else self

    def add_situations(self, more: tuple[tuple[str, str], ...]) -> None:
        """More situations of its rules, in place: for an outcome made for one answer and not shared yet."""
        if more:
            self.situations = self._with_situations(more)

    def _with_situations(self, more: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        return tuple(dict.fromkeys(self.situations + more))


def copied(value: _Plain, **changes: object) -> _Plain:
    """`dataclasses.replace` for a plain dataclass (no slots, no cached properties, nothing computed in its
    __init__): the same copy without __init__ run field by field, which costs more than the rest of a small step."""
    new = object.__new__(type(value))
    new.__dict__.update(value.__dict__, **changes)
    return new


def built(kind: type[_Plain], **fields: object) -> _Plain:
    """A plain frozen dataclass (no slots, no __post_init__) made from every one of its fields without its __init__,
    which sets each through object.__setattr__: a receive makes a ReceivedMessage for each message it returns."""
    new = object.__new__(kind)
    new.__dict__.update(fields)
    return new


def situated(rules: tuple[str, ...], label: str) -> tuple[tuple[str, str], ...]:
    """The same situation for each of `rules`."""
    return tuple([(r, label) for r in rules]) if label else ()


@dataclass(frozen=True)
class Divergence:
    rules: tuple[str, ...]  # most specific first
    expected: str
    observed: str
    message_ids: tuple[str, ...] = ()
    # The answers the model permitted, where it lists them (an error with its text, a success of a kind, a receive
    # without the message it returned): then the step diverged by answering none of them, and that is all a
    # reproduction need check. Empty where the divergence is in an answer's details or when it came (a receive
    # count, a long poll's moment, a deadline), or stands on an earlier step: only the model, replaying the case,
    # judges those.
    permitted: tuple[Expected, ...] = ()
    # The batch entry whose answer diverged (its `permitted` are that entry's), or None: the whole answer.
    entry: str | None = None

    def __post_init__(self) -> None:
        if not self.rules:
            raise ValueError(f"a divergence must name the rule it breaks (expected {self.expected})")

    @property
    def rule(self) -> str:
        return self.rules[0]


@dataclass
class Verdict:
    outcome: Outcome
    divergences: tuple[Divergence, ...] = ()
    # False when the target did what no permitted outcome does in kind (accepted what had to be rejected, or the
    # reverse): the model then adopts the answer blindly, and its state may no longer match the target's.
    consistent: bool = True
    # The other outcomes the model permitted, that this answer did not match: a rule whose breaking could give one
    # of them is not decided by this step (see `decisive`).
    others: tuple[Outcome, ...] = ()
    # No answer came to an operation the model permits only to refuse (or a batch with such an entry): a target
    # that applied it anyway (a bug no answer showed) changed its state where the model cannot see. Later steps may
    # show consequences of that.
    unseen: bool = False

    @property
    def ok(self) -> bool:
        return not self.divergences

    @property
    def decisive(self) -> tuple[str, ...]:
        """The rules this step exercised decisively: those whose breaking would have given an answer the model
        does not permit here. None on a step that diverged: it decides the rule it broke (its divergence's first),
        and shows nothing of the rest."""
        if self.divergences:
            return ()
        undecided = self.outcome.undecided
        if not self.others:  # the one answer permitted: breaking any rule it exercised would give another
            return tuple(r for r in self.outcome.rules if r not in undecided)
        return tuple(r for r in self.outcome.rules if r not in undecided
                     and not _breaking_permitted(r, self.outcome.response, self.others))

    @property
    def decided(self) -> frozenset[str]:
        """The rules this step settled either way: exercised decisively, or broken (a divergence decides the rule
        it names first; the candidates after it stay open)."""
        return frozenset(self.decisive) | {d.rule for d in self.divergences}


class Expectation(Protocol):
    @property
    def rules(self) -> tuple[str, ...]: ...

    def canonical(self) -> Outcome: ...

    def check(self, observed: Response) -> Verdict: ...

    def possible_effects(self) -> Effects | None:
        """What the operation may have changed if it took effect (the answer never came), or None when the
        checker cannot follow it (a new message or queue whose id never came back)."""


def answer_kind(response: object) -> str:
    """An error's code, or the response's kind ("ReceiveOk-empty" for a receive that returned nothing)."""
    if isinstance(response, (Error, ErrorSpec)):
        return response.code
    empty = isinstance(response, ReceiveOk) and not response.messages
    return type(response).__name__ + ("-empty" if empty else "")


def _breaking_permitted(rule_id: str, answer: object, others: tuple[Outcome, ...]) -> bool:
    """Whether a queue breaking the rule could have given another answer that the model permits here too: one
    permitted for a reason other than this rule (an outcome that does not rest on it: another check's error, the
    same code with another text), or, for a firm rule, one of the other class (an error for a success, or the
    reverse) that it permits only because the timing leaves an edge open. Where every other answer permitted
    rests on the rule, and is of the same class or is the hedge of a rule the evidence leaves open (a FIFO change
    through an expired handle: refused as expired, or accepted), breaking it gives an answer the model excludes:
    the step decides it."""
    refused = _is_error(answer)
    hedged = rule(rule_id).certainty is Certainty.HEDGED
    return any(rule_id not in o.rules or (_is_error(o.response) != refused and not hedged) for o in others)


def _is_error(response: object) -> bool:
    return isinstance(response, (Error, ErrorSpec))


@dataclass(frozen=True)
class AnyBatchOk:
    """A permitted answer to a batch: one of the success kind, whatever its entries say (each is judged apart)."""


ANY_BATCH_OK = AnyBatchOk()


@dataclass(frozen=True)
class ReceiveWithout:
    """A permitted answer to a receive, as far as one divergence goes: any messages but these (by body)."""

    bodies: tuple[str, ...]


@dataclass(frozen=True)
class ReceiveSome:
    """A permitted answer to a receive, as far as one divergence goes: from `least` to `most` messages, any."""

    least: int = 0
    most: int | None = None


@dataclass(frozen=True)
class ReceiveInOrder:
    """A permitted answer to a receive, as far as one divergence goes: the messages of FIFO group `group` it
    returns (by body) are a prefix of one of `orders`."""

    group: str
    orders: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ReceiveRepeated:
    """A permitted answer to a repeated FIFO receive: the same messages (by body), under the same handles (the
    model's names for them), in the same order."""

    pairs: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class AttributeWithin:
    """A permitted answer to GetQueueAttributes, as far as one divergence goes: attribute `name` a whole number in
    [low, high], or, with `values`, one of them."""

    name: str
    low: int = 0
    high: int = 0
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeOkWithin(ChangeOk):
    """The expected answer of a change that tells its new deadline (SMQ's NextVisibleTime): any from
    `next_visible_ms` to `latest_ms`, the deadline as of each instant the change may have taken effect at (under a
    real clock, its request's window widened by the tolerance)."""

    latest_ms: int = 0


def concrete(expected: Expected) -> Response:
    """The response the model itself gives for an expected one."""
    if isinstance(expected, ChangeOkWithin):
        return ChangeOk(expected.receipt_handle, expected.next_visible_ms)
    return expected.instantiate() if isinstance(expected, ErrorSpec) else expected  # type: ignore[return-value]


def describe(value: object) -> str:
    if isinstance(value, ErrorSpec):
        return f"error {value.code}" + (f" /{value.pattern}/" if value.pattern else "")
    if isinstance(value, ChangeOkWithin):
        return f"ChangeOk with NextVisibleTime {value.next_visible_ms}..{value.latest_ms} ms"
    if isinstance(value, Error):
        return f"error {value.code} {value.message!r}"
    if isinstance(value, SendOk):  # which message a send's answer names is what deduplication is about
        return f"SendOk of {value.message_id}" if value.message_id is not None else "SendOk of a new message"
    return type(value).__name__


def response_matches(expected: Expected, observed: Response, minted: frozenset[str]) -> bool:
    if isinstance(expected, ErrorSpec):
        return isinstance(observed, Error) and expected.matches(observed)
    if isinstance(expected, ChangeOkWithin):
        return (isinstance(observed, ChangeOk) and observed.next_visible_ms is not None
                and _same_id(expected.receipt_handle, observed.receipt_handle, minted)
                and _close(expected.next_visible_ms, observed.next_visible_ms, expected.latest_ms))
    if type(expected) is not type(observed):
        return False
    if isinstance(expected, SendOk):
        return _same_id(expected.message_id, observed.message_id, minted)  # type: ignore[union-attr]
    if isinstance(expected, ChangeOk):
        return (_same_id(expected.receipt_handle, observed.receipt_handle, minted)  # type: ignore[union-attr]
                and _close(expected.next_visible_ms, observed.next_visible_ms))  # type: ignore[union-attr]
    return expected == observed


def _same_id(expected: str | None, observed: str | None, minted: frozenset[str]) -> bool:
    """A minted id matches a fresh one from the target (None once translated); others must be equal."""
    if expected in minted:
        return observed is None
    return expected == observed


def _close(expected_ms: int | None, observed_ms: int | None, latest_ms: int | None = None,
           tolerance_ms: int = 1) -> bool:
    """Within a millisecond of the expected time (or of the range up to `latest_ms`): a rounding apart."""
    if expected_ms is None or observed_ms is None:
        return expected_ms == observed_ms
    return expected_ms - tolerance_ms <= observed_ms <= max(expected_ms, latest_ms or 0) + tolerance_ms


def _ordered_rules(outcomes: list[Outcome]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for outcome in outcomes:
        for rule_id in outcome.rules:
            seen.setdefault(rule_id, None)
    return tuple(seen)


@dataclass
class Enumerated:
    """A small explicit list of permitted outcomes, the documented intent first."""

    outcomes: list[Outcome]

    @property
    def rules(self) -> tuple[str, ...]:
        return _ordered_rules(self.outcomes)

    def canonical(self) -> Outcome:
        return self.outcomes[0]

    def possible_effects(self) -> Effects | None:
        if any(o.effects.new_messages or o.effects.queue_changes for o in self.outcomes):
            return None
        return _merge(self.outcomes).effects

    def check(self, observed: Response) -> Verdict:
        matching = [o for o in self.outcomes if response_matches(o.response, observed, o.minted)]
        if matching:
            if len(matching) == len(self.outcomes):  # each permitted outcome given (most steps: the one): no others
                return Verdict(_merge(matching))
            # By identity: an outcome equal to a matching one matches too, and comparing dataclasses field by field
            # costs more than the match.
            matched = {id(o) for o in matching}
            return Verdict(_merge(matching), others=tuple([o for o in self.outcomes if id(o) not in matched]))
        divergence = Divergence(
            rules=attribution(self.outcomes, observed),
            expected=" or ".join(dict.fromkeys(describe(_as_permitted(o)) for o in self.outcomes)),
            observed=describe(observed),
            permitted=tuple(dict.fromkeys(_as_permitted(o) for o in self.outcomes)),
        )
        same_kind = [o for o in self.outcomes if isinstance(o.response, ErrorSpec) == isinstance(observed, Error)]
        adopted = _merge(same_kind) if same_kind else Outcome(observed, self.rules)
        # A send answered with another message than expected (deduplicated or not) leaves the model unable to
        # tell which message later answers are about: as inconsistent as an answer of the wrong kind.
        other_message = isinstance(observed, SendOk)
        return Verdict(adopted, (divergence,), consistent=bool(same_kind) and not other_message)


def _as_permitted(outcome: Outcome) -> Expected:
    """An outcome's answer as `Divergence.permitted` lists it: a send of a new message as SendOk(None), whatever
    id the model minted for it."""
    response = outcome.response
    if isinstance(response, SendOk) and response.message_id in outcome.minted:
        return SendOk(None)
    return response


_HANDLE_REJECTIONS = {"ReceiptHandleIsInvalid", "MessageNotExist"}
# The rules that weigh each check a refusal's text can name (model/errors.py), and the rules named where the model
# permitted the call to succeed without weighing that check at all (no such row: the closest answers decide).
_RULES_OF_CHECK = {
    errors.Check.CEILING: {VIS_CEILING, VIS_CEILING_FROM_RECEIVE, VIS_CEILING_NO_RESET},
    errors.Check.EXPIRY: {DEL_EXPIRED, DEL_STALE, DEL_FIFO_EXPIRED, CMV_EXPIRED, CMV_STALE, CMV_FIFO_EXPIRED},
    errors.Check.GONE: {CMV_DELETED},
    errors.Check.RANGE: {RCV_MAX_MESSAGES, RCV_WAIT_RANGE},
}
_UNWEIGHED = {errors.Check.CEILING: (VIS_CEILING_FROM_RECEIVE, VIS_CEILING)}
# The rule a refusal breaks where its text names a parameter or attribute as wrong and the model accepted it: that
# parameter's own (a queue refusing a valid RedrivePolicy breaks redrive, not the default timeout it was created
# with)
_RULES_OF_PARAMETER = {"RedrivePolicy": (REDRIVE_DLQ,), "VisibilityTimeout": (VIS_RANGE,),
                       "DelaySeconds": (DELAY_HIDES,), "ReceiveMessageWaitTimeSeconds": (RCV_LONG_POLL,)}


def attribution(outcomes: list[Outcome], observed: Response) -> tuple[str, ...]:
    """The rules an unexpected answer breaks, most specific first. A refusal whose text names the check that made
    it names that check's rules first: those the model weighed at this step (a change refused as beyond the
    12-hour ceiling, where the model weighed the ceiling counted from the send, names that), or, where the model
    permitted the call to succeed without weighing the check, the check's own (the ceiling counted from the
    receive leaves room: VIS-CEILING-FROM-RECEIVE, not whatever else the model permitted there, a message maybe
    moved to the dead-letter queue). A target that rejects the *handle* breaks the rules of the outcomes that
    accepted it (a success, or an error about the value), those where the handle may have expired or gone
    stale first; otherwise the outcomes closest to the answer (same error code, then same kind) come first. A
    refusal of what the model accepts, whose text names the parameter or attribute it took for wrong, breaks that
    parameter's rule first (`_RULES_OF_PARAMETER`).

    A refusal naming no other check, where the model permitted only acceptance on the strength of a rule that says
    such a handle still works (an expired or stale one), breaks that rule alone: what an accepted call would then
    have done to the deadline (VIS-EXTEND-NONADDITIVE, VIS-TERMINATE, ...) the refusal shows nothing of."""
    check = errors.check_named_by(observed.message) if isinstance(observed, Error) else None
    if check is not None:
        weighed = [o for o in outcomes if _RULES_OF_CHECK[check] & set(o.rules)]
        if weighed:
            # The check's own rules first, then the rest of those outcomes': a message moved to the dead-letter
            # queue whose change is refused with the wrong code breaks CMV-DELETED, the check that refuses it,
            # not REDRIVE-DLQ, which moved it.
            checked = tuple(r for o in weighed for r in o.rules if r in _RULES_OF_CHECK[check])
            return _ordered_rules([Outcome(observed, checked)] + weighed + outcomes)
        if check in _UNWEIGHED and any(not isinstance(o.response, ErrorSpec) for o in outcomes):
            return _ordered_rules([Outcome(observed, _UNWEIGHED[check])] + outcomes)
    if isinstance(observed, Error) and outcomes and not any(isinstance(o.response, ErrorSpec) for o in outcomes):
        accepting = tuple(r for o in outcomes for r in o.rules if r in _RULES_OF_CHECK[errors.Check.EXPIRY])
        if accepting:
            return tuple(dict.fromkeys(accepting))
        parameter = errors.parameter_named_by(observed.message)
        if parameter in _RULES_OF_PARAMETER:
            return _ordered_rules([Outcome(observed, _RULES_OF_PARAMETER[parameter])] + outcomes)

    def closeness(outcome: Outcome) -> int:
        expected = outcome.response
        if isinstance(observed, Error) and observed.code in _HANDLE_REJECTIONS:
            if not isinstance(expected, ErrorSpec):
                # A plain success: the handle works. Where the handle may have expired or gone stale, the rule
                # that says such a handle still works comes first: a target that rejects it took it for dead.
                return 3 if _RULES_OF_CHECK[errors.Check.EXPIRY] & set(outcome.rules) else 2
            if expected.code in _HANDLE_REJECTIONS or "ReceiptHandle" in (expected.pattern or ""):
                return 4  # the message was expected gone too, just reported otherwise
            return 1  # an error about the value: that accepts the handle as well
        if isinstance(observed, Error) and isinstance(expected, ErrorSpec):
            return 2 if expected.code == observed.code else 1
        return 1 if isinstance(expected, ErrorSpec) == isinstance(observed, Error) else 0

    ranked = sorted(outcomes, key=closeness, reverse=True)
    if isinstance(observed, Error) and observed.code in _HANDLE_REJECTIONS:
        # Within an outcome too: a target that took the handle for dead breaks the rule saying such a handle still
        # works, not the 12-hour ceiling its value was also weighed against.
        handle_rules = tuple(r for o in ranked if closeness(o) == 3 for r in o.rules
                             if r in _RULES_OF_CHECK[errors.Check.EXPIRY])
        gone_too = [o for o in ranked if closeness(o) == 4]
        return _ordered_rules(gone_too + [Outcome(observed, handle_rules)] + ranked)
    return _ordered_rules(ranked)


def _merge(outcomes: list[Outcome]) -> Outcome:
    first = outcomes[0]
    if len(outcomes) == 1:
        return first
    effects = first.effects
    for other in outcomes[1:]:
        effects = effects.merged_with(other.effects)
    notes = tuple(dict.fromkeys(n for o in outcomes for n in o.notes))
    undecided = tuple(r for r in first.undecided if all(r in o.undecided or r not in o.rules for o in outcomes))
    # A situation holds only where every world the answer leaves agrees on it.
    situations = tuple(x for x in first.situations if all(x in o.situations for o in outcomes))
    return Outcome(first.response, _ordered_rules(outcomes), effects, first.minted, notes, first.at, undecided,
                   situations)


@dataclass
class BatchExpectation:
    """A batch that passed validation: each entry is judged as its single call would be (BATCH-PARTIAL)."""

    entries: list[tuple[str, Enumerated]]
    at_the_limit: bool = False  # as many entries as a batch may have: a limit one too low would refuse it
    # Per entry naming a message that other entries name too: their ids, and its outcomes once they came first.
    after_others: dict[str, tuple[tuple[str, ...], Enumerated]] = field(default_factory=dict)

    @property
    def rules(self) -> tuple[str, ...]:
        limit = (BATCH_MAX_ENTRIES,) if self.at_the_limit else ()
        return (BATCH_PARTIAL,) + limit + self._entry_rules

    @property
    def _entry_rules(self) -> tuple[str, ...]:
        return _ordered_rules([o for _, e in self.entries for o in e.outcomes])

    def possible_effects(self) -> Effects | None:
        return Enumerated([o for _, e in self.entries for o in e.outcomes]).possible_effects() if self.entries \
            else Effects()

    def canonical(self) -> Outcome:
        chosen = [(entry_id, e.canonical()) for entry_id, e in self.entries]
        return self._combine([(i, o, concrete(o.response)) for i, o in chosen], (), in_order=True).outcome

    def check(self, observed: Response) -> Verdict:
        if not isinstance(observed, BatchOk):
            divergence = Divergence(self.rules, "BatchOk", describe(observed), permitted=(ANY_BATCH_OK,))
            return Verdict(Outcome(observed, self.rules), (divergence,), consistent=False)
        by_id = _entry_answers(observed)
        parts: list[tuple[str, Outcome, Response]] = []
        entry_others: list[tuple[Outcome, ...]] = []
        divergences: list[Divergence] = []
        consistent = True
        decided: set[str] = set()
        for entry_id, expectation in self.entries:
            response = by_id.pop(entry_id, None)
            if response is None:
                divergences.append(Divergence((BATCH_PARTIAL,), f"entry {entry_id} reported", "entry missing"))
                continue
            verdict = expectation.check(_as_entry_response(response, expectation))
            parts.append((entry_id, verdict.outcome, response))
            entry_others.append(verdict.others)
            # The batch is judged entry by entry: a divergence names its entry, whose answer it permitted, not the
            # batch's
            entries = tuple(replace(d, entry=entry_id) for d in verdict.divergences)
            divergences.extend(self._named_after_others(entry_id, response, entries, observed))
            decided.update(verdict.decisive)
            consistent = consistent and verdict.consistent
        if by_id:
            divergences.append(Divergence((BATCH_PARTIAL,), "only the sent entry ids", f"extra ids {sorted(by_id)}"))
        # A failure of the sender's making (every failure the model knows: a bad handle, a bad value) says so.
        divergences += [Divergence((BATCH_PARTIAL,), f"entry {f.id} failed with SenderFault true",
                                   f"entry {f.id} failed with SenderFault false") for f in observed.failed
                        if not f.sender_fault and f.id in dict(self.entries)]
        verdict = self._combine(parts, tuple(divergences))
        verdict.consistent = consistent
        # An entry's rule is decided where that entry's own answer decided it (not near an edge the timing leaves
        # open, say); the batch's own rules are the batch's.
        verdict.outcome.undecided = tuple(r for r in self._entry_rules if r not in decided)
        if not divergences:
            verdict.others = self._answered_otherwise(parts, entry_others, verdict.outcome.rules)
        return verdict

    def carried_out(self, observed: Response) -> list[Effects]:
        """What the batch left had the queue carried out each entry it accepted where the model permits only a
        refusal (`Outcome.unenforced`), the other entries as answered: [] where it accepted no such entry."""
        if not isinstance(observed, BatchOk):
            return []
        by_id = _entry_answers(observed)
        parts: list[tuple[str, Outcome, Response]] = []
        carried = False
        for entry_id, expectation in self.entries:
            response = by_id.get(entry_id)
            if response is None:
                return []  # an entry left unanswered: nothing to carry out
            verdict = expectation.check(_as_entry_response(response, expectation))
            unenforced = carried_out(expectation, response)
            if verdict.divergences and isinstance(response, Ok) and unenforced:
                parts.append((entry_id, Outcome(response, verdict.outcome.rules, unenforced[0]), response))
                carried = True
            else:
                parts.append((entry_id, verdict.outcome, response))
        return [self._combine(parts, ()).outcome.effects] if carried else []

    def _answered_otherwise(self, parts: list[tuple[str, Outcome, Response]],
                            entry_others: list[tuple[Outcome, ...]], rules: tuple[str, ...]) -> tuple[Outcome, ...]:
        """The batch's other permitted outcomes, one entry answered otherwise at a time and the rest as they were:
        what blame (model/blame.py) weighs an earlier answer by, for a batch as for its single calls. Each rests on
        that entry's rules first, then the answer's own: the same set, so that what the batch step decides
        (`Verdict.decisive`) stays what its entries' verdicts decided. One permitted only as a refusal says what
        carrying the entry out would have left (`Outcome.unenforced`)."""
        others: list[Outcome] = []
        for position, (entry_id, _, _) in enumerate(parts):
            for other in entry_others[position]:
                answered = concrete(other.response)
                whole = self._combine(_swapped(parts, position, (entry_id, other, answered)), ()).outcome
                whole.rules = tuple(dict.fromkeys(other.rules + rules))
                if other.unenforced is not None:
                    carried_out = Outcome(answered, other.rules, other.unenforced)
                    whole.unenforced = self._combine(_swapped(parts, position, (entry_id, carried_out, Ok())),
                                                     ()).outcome.effects
                others.append(whole)
        return tuple(others)

    def _named_after_others(self, entry_id: str, response: Response, divergences: tuple[Divergence, ...],
                            observed: BatchOk) -> tuple[Divergence, ...]:
        """An entry that failed where another entry naming the same message succeeded most likely came after it
        (its handle, say, was then that of a deleted message): the rules of that world come first. Which order the
        queue took is not recorded, so this names the divergence and permits nothing more."""
        siblings, after = self.after_others.get(entry_id, ((), None))
        if not divergences or after is None or not set(siblings) & set(observed.successful):
            return divergences
        first = attribution(after.outcomes, response)
        return tuple(replace(d, rules=tuple(dict.fromkeys(first + d.rules))) for d in divergences)

    def _combine(self, parts: list[tuple[str, Outcome, Response]], divergences: tuple[Divergence, ...],
                 in_order: bool = False) -> Verdict:
        """The entries' outcomes as one. As a queue (`in_order`) the model applies them one after another; judging
        a target, it does not know in which order the target applied entries naming the same message."""
        effects = Effects()
        successful: list[str] = []
        failed: list[EntryFailure] = []
        for entry_id, outcome, response in parts:
            # Entries naming one message twice are each judged as if alone; which of them the queue applied last
            # is not recorded, so the message may end as any of them left it.
            for message_id, states in outcome.effects.states.items():
                earlier = () if in_order else effects.states.get(message_id, ())
                effects.states[message_id] = union(earlier, states)
            effects.handles.update(outcome.effects.handles)
            if isinstance(response, Error):
                failed.append(EntryFailure(entry_id, response.code, response.message))
            else:
                successful.append(entry_id)
        minted = frozenset().union(*(o.minted for _, o, _ in parts)) if parts else frozenset()
        # BATCH-PARTIAL bites where an entry fails and another comes after it: only there can a queue that
        # stops at a failure, or fails the whole batch, be caught.
        bites = any(isinstance(response, Error) for _, _, response in parts[:-1])
        rules = self.rules if bites else tuple(r for r in self.rules if r != BATCH_PARTIAL)
        outcome = Outcome(BatchOk(tuple(successful), tuple(failed)), rules, effects, minted)
        return Verdict(outcome, divergences)


def carried_out(expectation: Expectation, observed: Response) -> list[Effects]:
    """What an operation left had the queue carried out what it accepted where the model permits only a refusal
    (`Outcome.unenforced`), one per such refusal; a batch's entries so carried out with the rest as answered. []
    where no refusal says so."""
    if isinstance(expectation, BatchExpectation):
        return expectation.carried_out(observed)
    if isinstance(expectation, Enumerated):
        return [o.unenforced for o in expectation.outcomes if o.unenforced is not None]
    return []


def _entry_answers(observed: BatchOk) -> dict[str, Response]:
    """Each entry's answer, by its id."""
    by_id: dict[str, Response] = {entry_id: Ok() for entry_id in observed.successful}
    for failure in observed.failed:
        by_id[failure.id] = Error(failure.code, failure.message)
    return by_id


def _swapped(parts: list[tuple[str, Outcome, Response]], position: int, entry: tuple[str, Outcome, Response]
             ) -> list[tuple[str, Outcome, Response]]:
    return [*parts[:position], entry, *parts[position + 1:]]


def _as_entry_response(response: Response, expectation: Enumerated) -> Response:
    """A batch reports success without a body: compare it with the single call's success shape."""
    if isinstance(response, Ok):
        for outcome in expectation.outcomes:
            if isinstance(outcome.response, ChangeOk):
                return ChangeOk()
    return response
