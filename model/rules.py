"""The rule catalogue: every behaviour the model checks, with its id, statement, profiles and sources.

This is the only place a rule is defined. The model attributes each outcome to rule ids from here; the
checker and the reports name divergences by these ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from sqs_conformance.model.sources import Source, api, row, seed

STANDARD = "sqs-standard"
FIFO = "sqs-fifo"
SQS_2008 = "sqs-2008"
SMQ = "smq"

ALL_PROFILES = frozenset({STANDARD, FIFO, SQS_2008, SMQ})
CURRENT_SQS = frozenset({STANDARD, FIFO})
ALL_SQS = frozenset({STANDARD, FIFO, SQS_2008})


class Certainty(str, Enum):
    """How firmly the evidence pins a rule down."""

    FIRM = "firm"  # one permitted outcome
    HEDGED = "hedged"  # the evidence conflicts or is silent: the model permits several outcomes


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    statement: str
    profiles: frozenset[str]
    sources: tuple[Source, ...]
    certainty: Certainty = Certainty.FIRM

    @property
    def source(self) -> str:
        """The sources as one line, for people (reports, `rules`, case files)."""
        return "; ".join(map(str, self.sources))

    def applies_to(self, profile_name: str) -> bool:
        return profile_name in self.profiles


# Rule ids, to refer to a rule in code: a misspelt name fails at import, a misspelt string would not.
VIS_DEFAULT = "VIS-DEFAULT"
VIS_RANGE = "VIS-RANGE"
SEND_ENQUEUES = "SEND-ENQUEUES"
RCV_HIDE = "RCV-HIDE"
RCV_REAPPEAR = "RCV-REAPPEAR"
RCV_INTEGRITY = "RCV-INTEGRITY"
RCV_OVERRIDE = "RCV-OVERRIDE"
VIS_EXTEND_NONADDITIVE = "VIS-EXTEND-NONADDITIVE"
VIS_SHORTEN = "VIS-SHORTEN"
VIS_TERMINATE = "VIS-TERMINATE"
VIS_NOT_STICKY = "VIS-NOT-STICKY"
VIS_CEILING = "VIS-CEILING"
VIS_CEILING_FROM_RECEIVE = "VIS-CEILING-FROM-RECEIVE"
VIS_CEILING_NO_RESET = "VIS-CEILING-NO-RESET"
QATTR_LATER_RECEIVES = "QATTR-LATER-RECEIVES"
HANDLE_MALFORMED = "HANDLE-MALFORMED"
CMV_DELETED = "CMV-DELETED"
CMV_EXPIRED = "CMV-EXPIRED"
CMV_STALE = "CMV-STALE"
CMV_FIFO_EXPIRED = "CMV-FIFO-EXPIRED"
DEL_EXPIRED = "DEL-EXPIRED"
DEL_STALE = "DEL-STALE"
DEL_FIFO_EXPIRED = "DEL-FIFO-EXPIRED"
DEL_IDEMPOTENT = "DEL-IDEMPOTENT"
DEL_REMOVES = "DEL-REMOVES"
BATCH_MAX_ENTRIES = "BATCH-MAX-ENTRIES"
BATCH_EMPTY = "BATCH-EMPTY"
BATCH_ENTRY_ID = "BATCH-ENTRY-ID"
BATCH_IDS_DISTINCT = "BATCH-IDS-DISTINCT"
BATCH_PARTIAL = "BATCH-PARTIAL"
RCV_MAX_MESSAGES = "RCV-MAX-MESSAGES"
RCV_WAIT_RANGE = "RCV-WAIT-RANGE"
RCV_SHORT_POLL = "RCV-SHORT-POLL"
RCV_LONG_POLL = "RCV-LONG-POLL"
RCV_AT_LEAST_ONCE = "RCV-AT-LEAST-ONCE"
RCV_COUNT = "RCV-COUNT"
RCV_NEW_HANDLE = "RCV-NEW-HANDLE"
RCV_FIRST_TIMESTAMP = "RCV-FIRST-TIMESTAMP"
DELAY_HIDES = "DELAY-HIDES"
REDRIVE_DLQ = "REDRIVE-DLQ"
REDRIVE_KEEPS_COUNT = "REDRIVE-KEEPS-COUNT"
INFLIGHT_QUOTA = "INFLIGHT-QUOTA"
PURGE_ALL = "PURGE-ALL"
PURGE_IN_PROGRESS = "PURGE-IN-PROGRESS"
ATTR_COUNTS = "ATTR-COUNTS"
FIFO_GROUP_LOCK = "FIFO-GROUP-LOCK"
RCV_EXCLUSIVE = "RCV-EXCLUSIVE"
FIFO_STALE_OTHER = "FIFO-STALE-OTHER"
FIFO_ORDER = "FIFO-ORDER"
FIFO_VISIBLE_PREFIX = "FIFO-VISIBLE-PREFIX"
FIFO_ATTEMPT_ID = "FIFO-ATTEMPT-ID"
FIFO_DEDUP = "FIFO-DEDUP"
FIFO_SEND_PARAMS = "FIFO-SEND-PARAMS"
PEEK_NO_CHANGE = "PEEK-NO-CHANGE"
LOCK_UNRECEIVED = "LOCK-UNRECEIVED"
LOCK_NOT_REMEMBERED = "LOCK-NOT-REMEMBERED"
SMQ_NEW_HANDLE = "SMQ-NEW-HANDLE"
SMQ_INVISIBLE_ONLY = "SMQ-INVISIBLE-ONLY"


def _r(id: str, statement: str, profiles: frozenset[str], sources: tuple[Source, ...], hedged: bool = False) -> Rule:
    return Rule(id, statement, profiles, sources, Certainty.HEDGED if hedged else Certainty.FIRM)


CATALOGUE: tuple[Rule, ...] = (
    # --- ranges and defaults -------------------------------------------------------------------------
    _r(VIS_DEFAULT, "A queue's VisibilityTimeout is 30 s unless set.", ALL_PROFILES,
       (seed("000", "Each queue starts with a default setting of 30 seconds"), seed("004", "Default"), row("range"))),
    _r(VIS_RANGE, "VisibilityTimeout is an integer in the profile's range (SQS 0..43200, SMQ 1..43200) on "
       "receive, change and the queue attribute; outside it the request is rejected "
       "(InvalidParameterValue on request parameters, InvalidAttributeValue on queue attributes, "
       "InvalidArgument on SMQ).", ALL_PROFILES,
       (row("range"), row("out-of-range"), seed("002", "The minimum is 0 seconds. The maximum is 12 hours"),
        row("smq-range"))),
    _r(SEND_ENQUEUES, "A valid send is accepted with a new MessageId, and the message is stored until it is "
       "received.", ALL_PROFILES,
       (seed("002", "A message is considered to be stored after it is sent to a queue by a producer"),)),
    # --- hide, reappear, override ------------------------------------------------------------------------
    _r(RCV_HIDE, "A received message is not returned by another receive before its deadline "
       "(receive time + visibility timeout).", ALL_PROFILES,
       (seed("000", "it isn't available to other receive requests for the duration of the visibility timeout"),)),
    _r(RCV_EXCLUSIVE, "While a message is in flight for one consumer, no other consumer receives it before its "
       "deadline (on a standard queue a rare redelivery is permitted and counted; a FIFO queue permits none).",
       CURRENT_SQS,
       (seed("002", "Amazon SQS prevents other consumers from receiving and processing the message"),
        seed("004", "This prevents multiple consumers from processing the same message simultaneously"),
        row("at-least-once"))),
    _r(RCV_REAPPEAR, "A message not deleted by its deadline becomes receivable again at the deadline (at "
       "that exact instant either answer is permitted; the documents do not settle it).",
       ALL_PROFILES,
       (seed("001", "the message again becomes visible to the ReceiveMessage calls"),
        seed("004", "becomes visible again"))),
    _r(RCV_INTEGRITY, "A receive returns only messages sent to that queue, each at most once per response, "
       "with the body they were sent with.", ALL_PROFILES,
       (seed("002", "An Amazon SQS message has three basic states"),)),
    _r(RCV_OVERRIDE, "ReceiveMessage(VisibilityTimeout=v) applies v to the returned messages only; the "
       "queue attribute is unchanged.", ALL_PROFILES - {SMQ},
       (row("receive-override"), seed("001", "without changing the overall queue timeout"))),
    # --- changing a message's visibility ---------------------------------------------------------------
    _r(VIS_EXTEND_NONADDITIVE, "ChangeMessageVisibility(v) sets the deadline to call time + v, never to "
       "the old deadline + v.", ALL_PROFILES,
       (seed("000", "not 10+60 = 70 seconds"), row("non-additive-change"))),
    _r(VIS_SHORTEN, "A change to a shorter timeout also counts from the call: the message reappears at "
       "call time + v.", ALL_PROFILES,
       (seed("002", "the 10 seconds begin to count from the time that you make the ChangeMessageVisibility call"),
        row("non-additive-change"))),
    _r(VIS_TERMINATE, "ChangeMessageVisibility(0) makes the message receivable at once.", ALL_SQS,
       (seed("000", "VisibilityTimeout=0 seconds"), row("terminate"))),
    _r(VIS_NOT_STICKY, "A change applies to that receipt only; the next receive uses the queue value (or "
       "that receive's override).", ALL_PROFILES,
       (seed("000", "The extension you request is not stored in memory for that message"),
        seed("002", "applies only to the particular receipt of the message"), row("not-sticky"))),
    _r(VIS_CEILING, "A receipt's deadline may not be set beyond its ReceiveMessage + 43200 s; a change "
       "past that is rejected, not clipped: InvalidParameterValue 'Value N for parameter VisibilityTimeout is "
       "invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]'.",
       CURRENT_SQS,
       (seed("002", "12 hours from the time that Amazon SQS receives the ReceiveMessage request"), row("ceiling"))),
    _r(VIS_CEILING_FROM_RECEIVE, "The 12-hour ceiling counts from the receive that produced the receipt; "
       "time the message waited in the queue does not count.", CURRENT_SQS,
       (row("ceiling"),)),
    _r(VIS_CEILING_NO_RESET, "Extending the visibility timeout does not reset the 12-hour ceiling.",
       CURRENT_SQS,
       (seed("002", "Extending the visibility timeout does not reset the 12-hour maximum"), row("ceiling"))),
    _r(QATTR_LATER_RECEIVES, "A change of the queue's VisibilityTimeout applies to later receives only; "
       "in-flight deadlines do not move; for up to 60 s a receive may still use the old value.", ALL_PROFILES,
       (row("queue-attribute-change"),),
       hedged=True),
    # --- receipt handles ------------------------------------------------------------------------------
    _r(HANDLE_MALFORMED, "A malformed receipt handle is rejected with ReceiptHandleIsInvalid.", ALL_SQS,
       (row("cmv-malformed-handle"), row("delete-malformed-handle"))),
    _r(CMV_DELETED, "ChangeMessageVisibility on a deleted message is rejected: InvalidParameterValue "
       "'... Reason: Message does not exist or is not available for visibility timeout change.'", ALL_SQS,
       (row("cmv-deleted"),)),
    _r(CMV_EXPIRED, "ChangeMessageVisibility with an expired handle (not yet received again) answers 200; "
       "whether the message is hidden again is unknown.", frozenset({STANDARD, SQS_2008}),
       (row("cmv-expired"),),
       hedged=True),
    _r(CMV_STALE, "ChangeMessageVisibility with a stale handle (message received again since) is accepted "
       "and takes effect on the message.", frozenset({STANDARD, SQS_2008}),
       (row("cmv-stale"),)),
    _r(CMV_FIFO_EXPIRED, "On a FIFO queue a change with a handle past its deadline may be rejected as "
       "expired or accepted; nothing public records which.", frozenset({FIFO}),
       (row("delete-fifo-expired"), row("cmv-expired")), hedged=True),
    _r(DEL_EXPIRED, "DeleteMessage with an expired handle (standard, not yet received again) succeeds and "
       "deletes the message; past 12 hours it may be rejected with 'The receipt handle has expired.'",
       frozenset({STANDARD, SQS_2008}),
       (row("delete-expired"), row("delete-stale"))),
    _r(DEL_STALE, "DeleteMessage with a stale handle succeeds, but the message might not be deleted; a "
       "handle older than 12 hours may be rejected with 'The receipt handle has expired.'",
       frozenset({STANDARD, SQS_2008}),
       (row("delete-stale"),), hedged=True),
    _r(DEL_FIFO_EXPIRED, "On a FIFO queue DeleteMessage after the receipt's deadline is rejected: "
       "InvalidParameterValue '... Reason: The receipt handle has expired.'; inside a deadline that a change "
       "extended it succeeds.", frozenset({FIFO}),
       (row("delete-fifo-expired"),)),
    _r(FIFO_STALE_OTHER, "On a FIFO queue a consumer's expired receipt handle neither deletes the message nor "
       "changes its visibility once another consumer has received it.", frozenset({FIFO}),
       (row("delete-fifo-expired"),
        seed("002", "Amazon SQS prevents other consumers from receiving and processing the message"))),
    _r(DEL_IDEMPOTENT, "DeleteMessage of an already deleted message with its handle succeeds again.", ALL_SQS,
       (row("delete-twice"),)),
    _r(DEL_REMOVES, "A deleted message is never returned again.", ALL_PROFILES,
       (seed("000", "unless you delete it"),)),
    # --- batches ------------------------------------------------------------------------------------------
    _r(BATCH_MAX_ENTRIES, "A batch has at most 10 entries: AWS.SimpleQueueService.TooManyEntriesInBatchRequest "
       "'Maximum number of entries per request are 10. You have sent N.'", CURRENT_SQS,
       (row("batches"),)),
    _r(BATCH_EMPTY, "An empty batch is rejected: AWS.SimpleQueueService.EmptyBatchRequest.", CURRENT_SQS,
       (row("batches"),)),
    _r(BATCH_ENTRY_ID, "Batch entry ids match [A-Za-z0-9_-]{1,80}: else "
       "AWS.SimpleQueueService.InvalidBatchEntryId.", CURRENT_SQS, (row("batches"),)),
    _r(BATCH_IDS_DISTINCT, "Batch entry ids are distinct: else AWS.SimpleQueueService.BatchEntryIdsNotDistinct.",
       CURRENT_SQS, (row("batches"),)),
    _r(BATCH_PARTIAL, "Each batch entry succeeds or fails on its own, as the single call would; failures go "
       "in Failed[] with SenderFault true.", CURRENT_SQS, (row("batches"),)),
    # --- receive ------------------------------------------------------------------------------------------
    _r(RCV_MAX_MESSAGES, "MaxNumberOfMessages is 1..10 ('Value N for parameter MaxNumberOfMessages is "
       "invalid. Reason: Must be between 1 and 10, if provided.'); at most that many are returned.", ALL_SQS,
       (row("max-messages"),)),
    _r(RCV_WAIT_RANGE, "WaitTimeSeconds is 0..20 ('Value N for parameter WaitTimeSeconds is invalid. Reason: "
       "Must be >= 0 and <= 20, if provided.').", CURRENT_SQS, (row("wait-time"),)),
    _r(RCV_SHORT_POLL, "A short poll may return fewer messages than are visible, or none.", ALL_PROFILES,
       (row("short-polling"),), hedged=True),
    _r(RCV_LONG_POLL, "A long poll (WaitTimeSeconds > 0) returns at least one message if any is receivable "
       "during its wait, as soon as one is.", CURRENT_SQS, (row("short-polling"),)),
    _r(RCV_AT_LEAST_ONCE, "On a standard queue a hidden message may rarely be delivered again; it is "
       "counted, not failed.", frozenset({STANDARD, SQS_2008}),
       (row("at-least-once"), seed("002", "isn't a guarantee against receiving a message twice")), hedged=True),
    _r(RCV_COUNT, "ApproximateReceiveCount rises by one on every receive, VisibilityTimeout=0 receives "
       "included; a dead-letter queue may count a redriven message's receives on or afresh.", CURRENT_SQS,
       (row("receive-count"),)),
    _r(RCV_NEW_HANDLE, "Each receive of a message returns a receipt handle different from every earlier one "
       "of that message.", CURRENT_SQS,
       (row("receipt-handles"),)),
    _r(RCV_FIRST_TIMESTAMP, "ApproximateFirstReceiveTimestamp is the time of the first receive, in ms.",
       CURRENT_SQS, (row("receive-count"),)),
    # --- delay, redrive, quota, purge, counts -----------------------------------------------------------
    _r(DELAY_HIDES, "A message sent with DelaySeconds d (0..900, or the queue's DelaySeconds) is not "
       "receivable for d seconds and is counted as delayed, not in flight.", CURRENT_SQS,
       (row("delay"),)),
    _r(REDRIVE_DLQ, "When a receive would make the receive count exceed maxReceiveCount, the message moves "
       "to the dead-letter queue instead of being returned.", CURRENT_SQS, (row("redrive"),)),
    _r(REDRIVE_KEEPS_COUNT, "A message moved to the dead-letter queue keeps its receive count: the move adds "
       "nothing, and its first receive there shows one more than its last in the source queue.", CURRENT_SQS,
       (row("dead-letter-copy"),)),
    _r(INFLIGHT_QUOTA, "A standard queue holds at most about 120,000 in-flight messages: a short poll past "
       "it gets OverLimit; a long poll, and a FIFO queue, just return nothing more.", CURRENT_SQS,
       (row("inflight-quota"), seed("002", "a maximum of approximately 120,000"))),
    _r(PURGE_ALL, "PurgeQueue removes every message, in-flight ones included.", CURRENT_SQS,
       (row("purge"),)),
    _r(PURGE_IN_PROGRESS, "A second PurgeQueue within 60 s of the last is rejected with PurgeQueueInProgress.",
       CURRENT_SQS, (row("purge"), api("within the last 60 seconds"),)),
    _r(ATTR_COUNTS, "ApproximateNumberOfMessages (receivable), ...NotVisible (in flight) and ...Delayed "
       "count each live message exactly once.", CURRENT_SQS,
       (seed("002", "Inflight messages"), row("delay"))),
    # --- FIFO -------------------------------------------------------------------------------------------
    _r(FIFO_GROUP_LOCK, "While a received message of a group is in flight, later messages of that group are "
       "not returned.", frozenset({FIFO}),
       (seed("002", "no more messages for the same message group ID are returned unless you delete the message or it "
             "becomes visible"),
        row("fifo-groups"))),
    _r(FIFO_ORDER, "Messages of a group are returned in send order, also when the group comes back after a "
       "timeout.", frozenset({FIFO}), (row("fifo-groups"),)),
    _r(FIFO_VISIBLE_PREFIX, "When one of several jointly received messages is still hidden, only the visible "
       "prefix before it can be received.", frozenset({FIFO}), (row("fifo-groups"),)),
    _r(FIFO_ATTEMPT_ID, "A receive retried with the same ReceiveRequestAttemptId within 5 minutes returns "
       "the same messages and handles, unless one was deleted or changed since.", frozenset({FIFO}),
       (row("fifo-attempt-id"), seed("002", "same receive request attempt ID"))),
    _r(FIFO_DEDUP, "A send with the deduplication id of a message sent in the last 5 minutes is accepted "
       "and not enqueued again.", frozenset({FIFO}),
       (seed("002", "using the same message deduplication ID"),)),
    _r(FIFO_SEND_PARAMS, "A FIFO send needs a MessageGroupId (MissingParameter), a deduplication id unless "
       "content-based deduplication is on (InvalidParameterValue), and takes no per-message DelaySeconds.",
       frozenset({FIFO}), (api("MessageGroupId"), api("MessageDeduplicationId"), row("delay"),)),
    # --- the 2008-era API and SMQ --------------------------------------------------------------------------
    _r(PEEK_NO_CHANGE, "Peek reads live messages regardless of visibility and changes nothing: no deadline, "
       "receive count or handle moves.", frozenset({SQS_2008, SMQ}),
       (seed("000", "Peeking does not affect the state of the visibility timeout for the message"),
        row("sqs2008-peek"), row("smq-peek"))),
    _r(LOCK_UNRECEIVED, "ChangeMessageVisibility on a message never received locks it: it is not receivable "
       "for the requested time.", frozenset({SQS_2008}),
       (seed("000", "the message immediately becomes invisible (it is locked) for the duration of the timeout"),
        row("sqs2008-lock"))),
    _r(LOCK_NOT_REMEMBERED, "After a lock expires, the next receive uses the queue's timeout, not the lock's.",
       frozenset({SQS_2008}),
       (seed("000", "will be the overall value assigned to the queue and not the 3600 seconds"), row("sqs2008-lock"))),
    _r(SMQ_NEW_HANDLE, "A change returns a new receipt handle and NextVisibleTime (ms); the new handle is "
       "valid until that time and the old one stops working (MessageNotExist).", frozenset({SMQ}),
       (row("smq-change"),)),
    _r(SMQ_INVISIBLE_ONLY, "A change works only on a consumed, still-invisible message; otherwise "
       "MessageNotExist (404).", frozenset({SMQ}),
       (row("smq-change"),)),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in CATALOGUE}


def rule(rule_id: str) -> Rule:
    """The rule with this id; a KeyError names the unknown id."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise KeyError(f"no rule with id {rule_id!r}") from None


def rules_for(profile_name: str) -> tuple[Rule, ...]:
    return tuple(r for r in CATALOGUE if r.applies_to(profile_name))
