"""Probes after a witness: a look at what it left (counts, a peek, a receive per queue, long polls around
the next deadlines), so that a target that took the step but did the wrong thing with it is caught.
"""

from __future__ import annotations

from typing import Any

from sqs_conformance.conformance.cases import Case
from sqs_conformance.conformance.machine import MAIN, REAL_MAX_WAIT
from sqs_conformance.conformance.witnesses.catalogue import Witness
from sqs_conformance.conformance.witnesses.judged import JUDGED_TOLERANCE, replayed_on_model
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.state import Gone, Hidden
from sqs_conformance.model.values import GetQueueAttributes, PeekMessage, ReceiveMessage

PROBE_WAIT = 2  # seconds of the long poll that probes a deadline on a real or moved clock
PROBE_PAST_TOLERANCE = 0.1  # how far past deadline + tolerance that poll ends


def with_probes(profile: str, pace: str, witness: Witness) -> Witness:
    """The witness, then a look at what it left. Reaching a rule shows the target took the step; the probes show
    it did the right thing with it: the main queue's attributes (its counts), a receive on each queue (what must
    be visible is returned, what was deleted or moved is not), then a long poll from just before the next
    deadline (the message must not come back early, must come back at the deadline, and the poll must not give
    up early). Profiles without long polls get a short poll before the deadline and one after. Profiles with
    a peek peek first: it shows each visible message's receive count and changes nothing."""
    p = PROFILES[profile]
    plain: dict[str, Any] = {"max_messages": 10} if p.validates_receive_params else {}
    poll = plain | ({"wait_time_seconds": 1} if p.has_long_poll else {})
    session, _ = replayed_on_model(profile, pace, witness.steps)
    queues = list(session.model.queues)
    if not queues:  # a witness that made no queue (a creation refused): nothing to look at
        return witness
    main = MAIN if MAIN in queues else queues[-1]
    peek: Case = [(0.0, PeekMessage(main, 10))] if p.has_peek else []
    steps = witness.steps + [(0.0, GetQueueAttributes(main))] + peek + [(0.0, ReceiveMessage(q, **poll))
                                                                        for q in queues]
    # Beyond the tolerance of a real or moved clock, and never a wait a real clock would not sleep. There the poll
    # at the deadline starts early enough to see a message come back early and ends just past the tolerance after
    # it, so that a message coming back late is seen too (a poll's wait is whole seconds: its start is placed).
    margin = 0.001 if pace == "virtual" else 1.0
    at_deadline = poll
    if pace != "virtual" and p.has_long_poll:
        at_deadline = poll | {"wait_time_seconds": PROBE_WAIT}
        margin = PROBE_WAIT - JUDGED_TOLERANCE - PROBE_PAST_TOLERANCE
    # Twice: a standard queue may return a message early once (RCV-AT-LEAST-ONCE), so only a second early return
    # shows a queue that returns every message early; the second probe waits on the deadline the first set.
    for _ in range(2):
        session, _ = replayed_on_model(profile, pace, steps)
        model, now = session.model, session.now
        # The deadlines of receipts still in flight and of releases to come; and those of receipts the witness
        # ended (a purged, deleted or moved message must not come back there either).
        ended = [(s.visible_at, s.queue) for m in model.messages.values() for s in m.states
                 if s.gone is not Gone.NO and s.hidden is Hidden.RECEIPT]
        upcoming = sorted((t, q) for t, q in ended + [
            (t, q) for q in model.queues
            for t in [r.deadline for r in model.receipts(q, now)] + [t for _, t in model.delayed(q, now)]]
            if t - now > margin and (pace == "virtual" or t + margin - now <= REAL_MAX_WAIT))
        if not upcoming:
            break
        deadline, queue = upcoming[0]
        steps.append((round(deadline - margin - now, 6), ReceiveMessage(queue, **at_deadline)))
        if not p.has_long_poll:
            steps.append((round(2 * margin, 6), ReceiveMessage(queue, **plain)))
    return Witness(witness.aim, steps)
