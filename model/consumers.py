"""Rules among consumers: what a history of several clients of one queue shows that one client cannot.

The model judges an operation without knowing who sent it. A history of many clients knows, and where an operation
breaks hiding, or acts through an expired FIFO handle, on a message whose receipt another consumer holds, the rule a
person fixes is the one among consumers (a receive that is not atomic, a delete that checks its handle apart from
deleting), named first here.
"""

from __future__ import annotations

from collections.abc import Collection

from sqs_conformance.model.rules import (
    CMV_FIFO_EXPIRED, DEL_FIFO_EXPIRED, FIFO_STALE_OTHER, RCV_AT_LEAST_ONCE, RCV_EXCLUSIVE, RCV_HIDE,
)

# A rule broken against one's own receipt, and the same broken against another consumer's.
AMONG_CONSUMERS = {
    RCV_HIDE: RCV_EXCLUSIVE,
    RCV_AT_LEAST_ONCE: RCV_EXCLUSIVE,
    DEL_FIFO_EXPIRED: FIFO_STALE_OTHER,
    CMV_FIFO_EXPIRED: FIFO_STALE_OTHER,
}


def held_by_another(client: int, holders: Collection[int]) -> bool:
    """The message's receipt is another consumer's: every client it may be in flight for (`holders`) is not this
    one. A message no receipt holds is nobody's."""
    return bool(holders) and client not in holders


def among_consumers(rules: tuple[str, ...], client: int, holders: Collection[int]) -> tuple[str, ...]:
    """`rules` (most specific first) as broken by `client` on a message `holders` hold: the rule among consumers
    first where the receipt is another's."""
    if not held_by_another(client, holders):
        return rules
    named = [AMONG_CONSUMERS[r] for r in rules if r in AMONG_CONSUMERS]
    return (named[0], *[r for r in rules if r != named[0]]) if named else rules
