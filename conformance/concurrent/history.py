"""What a concurrent case recorded: every operation with its client and its window, in target space.

Times come twice. `invoke`/`complete` are on the target's clock from the case's start (what the model judges with;
on a virtual clock they are equal for every operation between two moves of the clock). `invoke_wall` /
`complete_wall` are the real instants the request went out and its answer came back: they alone order operations
(one that completed before another was sent took effect first), also on a virtual clock that stood still.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from sqs_conformance.model.outcomes import copied
from sqs_conformance.model.values import Operation, Response, Unknown


@dataclass(frozen=True)
class HistoryOp:
    index: int  # its place in the history, by invoke_wall
    client: int
    op: Operation  # as sent (target space)
    response: Response  # as answered (target space); Unknown where no answer came
    invoke: float
    complete: float
    invoke_wall: float
    complete_wall: float
    round: int = 0  # the workload's round it was sent in (clients wait for one another between rounds)

    @functools.cached_property  # read a few times per operation by the checker: made once
    def settles_by(self) -> float:
        """The real instant by which it has surely taken effect: an unanswered request may still take effect
        after the suite gave up on it, so never."""
        return math.inf if isinstance(self.response, Unknown) else self.complete_wall

    def answered(self, response: Response) -> HistoryOp:
        """The same operation with another answer (cut to a part's messages, or held as lost), `settles_by` worked
        out afresh for it (`copied` would carry the original's over)."""
        other = copied(self, response=response)
        other.__dict__.pop("settles_by", None)
        return other

    def precedes(self, other: HistoryOp) -> bool:
        """It surely took effect before `other` was sent."""
        return self.settles_by < other.invoke_wall


@dataclass
class History:
    profile: str
    clock: str  # the target clock's kind: "virtual" or "real"
    tolerance: float
    clients: int
    ops: list[HistoryOp] = field(default_factory=list)

    def add(self, client: int, op: Operation, response: Response, invoke: float, complete: float,
            invoke_wall: float, complete_wall: float, round: int = 0) -> HistoryOp:
        recorded = HistoryOp(len(self.ops), client, op, response, invoke, complete, invoke_wall, complete_wall, round)
        self.ops.append(recorded)
        return recorded

    def in_order(self) -> History:
        """The same history with its operations numbered by when they were sent (clients record as they finish)."""
        ordered = sorted(self.ops, key=lambda o: (o.invoke_wall, o.client, o.index))
        renumbered = [replace(o, index=i) for i, o in enumerate(ordered)]
        return History(self.profile, self.clock, self.tolerance, self.clients, renumbered)

    def of(self, ops: list[HistoryOp]) -> History:
        """Another history of the same target and clients: these operations (numbered afresh, in invoke order)."""
        return History(self.profile, self.clock, self.tolerance, self.clients, list(ops)).in_order()
