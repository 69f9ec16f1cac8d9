"""Plausible bugs of the Redis design, each one small edit of its Lua or of its library, to measure the suite:
`benchmarks/mutants.py --design redisq` runs the suite against each and prints what killed it, how fast and how
short the case it shows. A mutant that survives is a gap of the suite (issue 6: fix the suite, never the mutant).

Each mutant names the profile it is checked against (the design's FIFO, sqs-2008 and SMQ switches have bugs of
their own) and, for the record, the rule it breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.reference_designs.redisq.store import QueueError, RedisQueues
from benchmarks.reference_designs.redisq.target import RedisQueueTarget
from sqs_conformance.model.values import BatchOk, EntryFailure


def edited(source: str, old: str, new: str) -> str:
    """`source` with its one occurrence of `old` replaced: a mutant whose edit no longer applies is an error,
    never a silent copy of the correct design."""
    if source.count(old) != 1:
        raise ValueError(f"the mutant's edit matches {source.count(old)} places, not one: {old!r}")
    return source.replace(old, new)


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str  # what is wrong, in a sentence
    profile: str
    breaks: str  # the rule it breaks
    target: type[RedisQueueTarget]


MUTANTS: list[Mutant] = []


def _register(name: str, bug: str, breaks: str, store: type[RedisQueues], profile: str = "sqs-standard") -> None:
    target = type(name, (RedisQueueTarget,), {"store_class": store, "__doc__": bug, "__module__": __name__})
    globals()[name] = target
    MUTANTS.append(Mutant(name, bug, profile, breaks, target))


def lua(name: str, bug: str, breaks: str, script: str, old: str, new: str, profile: str = "sqs-standard",
        base: type[RedisQueues] = RedisQueues) -> None:
    """A mutant that edits one of the Lua scripts."""
    sources = dict(base.SOURCES)
    sources[script] = edited(sources[script], old, new)
    _register(name, bug, breaks, type(f"{name}Store", (base,), {"SOURCES": sources}), profile)


def python(name: str, bug: str, breaks: str, store: type[RedisQueues], profile: str = "sqs-standard") -> None:
    """A mutant that overrides part of the library."""
    _register(name, bug, breaks, store, profile)


# --- visibility: the change ------------------------------------------------------------------------------------

ACCEPT = "redis.call('ZADD', P .. ':due', now + timeout, id)\nredis.call('HSET', key, 'state', 'inflight')"

lua("AdditiveExtend", "A change adds the timeout to the deadline left, instead of counting from the call.",
    "VIS-EXTEND-NONADDITIVE", "CHANGE", ACCEPT,
    "redis.call('ZADD', P .. ':due', math.max(tonumber(redis.call('ZSCORE', P .. ':due', id)), now) + timeout, id)\n"
    "redis.call('HSET', key, 'state', 'inflight')")
lua("TerminateIgnored", "A change to 0 is answered OK and leaves the message hidden.", "VIS-TERMINATE", "CHANGE",
    ACCEPT, "if timeout > 0 then redis.call('ZADD', P .. ':due', now + timeout, id) end\n"
            "redis.call('HSET', key, 'state', 'inflight')")
lua("ShortenIgnored", "A change can only lengthen the time left: a shorter timeout is ignored.", "VIS-SHORTEN",
    "CHANGE", ACCEPT, "redis.call('ZADD', P .. ':due', 'GT', now + timeout, id)\n"
                      "redis.call('HSET', key, 'state', 'inflight')")
lua("CeilingFromSend", "The 12-hour ceiling is counted from the send, not from the receive.",
    "VIS-CEILING-FROM-RECEIVE", "CHANGE", "'gone', 'received_at')", "'gone', 'sent_at')")
lua("CeilingResetByChange", "Each accepted change restarts the 12-hour count.", "VIS-CEILING-NO-RESET", "CHANGE",
    ACCEPT, ACCEPT + "\nredis.call('HSET', key, 'received_at', ARGV[1])")
lua("CeilingClipped", "A change past the 12-hour ceiling is clipped to it instead of rejected.", "VIS-CEILING",
    "CHANGE", "return {'beyond ceiling'}",
    "timeout = tonumber(m[3]) + ceiling - now")
lua("StickyExtension", "A change's timeout is remembered and used by the next receive of the message.",
    "VIS-NOT-STICKY", "CHANGE", ACCEPT, ACCEPT + "\nredis.call('HSET', key, 'sticky', timeout)",
    base=type("StickyReceive", (RedisQueues,), {"SOURCES": {**RedisQueues.SOURCES, "RECEIVE": edited(
        RedisQueues.SOURCES["RECEIVE"], "redis.call('ZADD', P .. ':due', now + timeout, item.id)",
        "redis.call('ZADD', P .. ':due', now + (tonumber(redis.call('HGET', key, 'sticky')) or timeout), item.id)")}}))
lua("StaleChangeRejected", "Only the latest receive's handle may change the message.", "CMV-STALE", "CHANGE",
    "if not current and not stale_ok then", "if not current then")
lua("ExpiredChangeRejected", "A change with a handle whose deadline passed is rejected.", "CMV-EXPIRED", "CHANGE",
    "if fifo and not (current and in_flight) then", "if not in_flight then")
lua("DeletedMessageChangeAccepted", "A change through the handle of a deleted message is accepted.", "CMV-DELETED",
    "CHANGE", "if m[1] ~= P or m[2] ~= '' then return {'gone'} end", "if m[1] ~= P then return {'gone'} end")
lua("MalformedHandleNotAvailable", "A handle no receive issued is answered 'not available' instead of invalid.",
    "HANDLE-MALFORMED", "CHANGE", "  return {'malformed'}\nend\nlocal key", "  return {'gone'}\nend\nlocal key")


class _RangeOffByOne(RedisQueues):
    def _range_error(self, name, value):
        return None if value == self.semantics.visibility_max + 1 else super()._range_error(name, value)


python("TimeoutRangeOffByOne", "A VisibilityTimeout of 43201 is accepted.", "VIS-RANGE", _RangeOffByOne)

# --- visibility: the receive ---------------------------------------------------------------------------------------

CLAIM = "redis.call('ZADD', P .. ':due', now + timeout, item.id)"

lua("VisibleOneSecondLate", "Off by one at the deadline: a received message comes back a second late.",
    "RCV-REAPPEAR", "RECEIVE", CLAIM, "redis.call('ZADD', P .. ':due', now + timeout + 1, item.id)")
lua("ReceiveCountNotIncremented", "ApproximateReceiveCount stays at 1.", "RCV-COUNT", "RECEIVE",
    "'count', item.count + 1, 'first'", "'count', 1, 'first'")
lua("FirstReceiveReset", "ApproximateFirstReceiveTimestamp is rewritten by every receive.", "RCV-FIRST-TIMESTAMP",
    "RECEIVE", "if first == '' then first = ARGV[1] end", "first = ARGV[1]")
lua("OneMessageTooMany", "A receive returns up to MaxNumberOfMessages + 1 messages.", "RCV-MAX-MESSAGES",
    "RECEIVE", "elseif #out < max then", "elseif #out <= max then")
lua("DelayIgnored", "DelaySeconds is validated, then ignored.", "DELAY-HIDES", "SEND",
    "redis.call('ZADD', P .. ':due', now + delay, id)", "redis.call('ZADD', P .. ':due', now, id)")


class _OverrideWritten(RedisQueues):
    def _receive_now(self, queue, max_messages, visibility_timeout, wait_seconds, attempt_id, replay=True):
        got = super()._receive_now(queue, max_messages, visibility_timeout, wait_seconds, attempt_id, replay)
        if visibility_timeout is not None:
            self.redis.hset(self._prefix(queue) + ":meta", "vt", str(visibility_timeout))
        return got


python("OverrideWrittenToQueue", "A receive's VisibilityTimeout becomes the queue's for later receives.",
       "RCV-OVERRIDE", _OverrideWritten)


class _NoWait(RedisQueues):
    def receive(self, queue, *, max_messages=None, visibility_timeout=None, wait_seconds=None, attempt_id=None):
        return self._receive_now(queue, max_messages, visibility_timeout, wait_seconds, attempt_id)[0]


python("LongPollReturnsAtOnce", "A long poll on an empty queue answers at once instead of waiting.",
       "RCV-LONG-POLL", _NoWait)


class _WaitOffByOne(RedisQueues):
    def _receive_now(self, queue, max_messages, visibility_timeout, wait_seconds, attempt_id, replay=True):
        if wait_seconds == self.semantics.max_wait + 1:
            wait_seconds = self.semantics.max_wait
        return super()._receive_now(queue, max_messages, visibility_timeout, wait_seconds, attempt_id, replay)


python("WaitRangeOffByOne", "WaitTimeSeconds 21 is accepted.", "RCV-WAIT-RANGE", _WaitOffByOne)


class _QueueTimeoutMovesInFlight(RedisQueues):
    def set_attributes(self, queue, attributes):
        super().set_attributes(queue, attributes)
        if "VisibilityTimeout" in attributes:
            due = self._prefix(queue) + ":due"
            for member in self.redis.zrange(due, 0, -1):
                key = f"{self.namespace}:m:{member.decode()}"
                state, received = self.redis.hmget(key, "state", "received_at")
                if state == b"inflight":
                    self.redis.zadd(due, {member: float(received) + int(attributes["VisibilityTimeout"])})


python("QueueTimeoutAppliedInFlight", "A new queue VisibilityTimeout moves the deadlines of messages in flight.",
       "QATTR-LATER-RECEIVES", _QueueTimeoutMovesInFlight)

# --- delete ------------------------------------------------------------------------------------------------------

lua("ExpiredDeleteIgnored", "A delete with a handle whose deadline passed answers OK and keeps the message.",
    "DEL-EXPIRED", "DELETE", "if not current and not stale_ok then return {'not current'} end",
    "if not current and not stale_ok then return {'not current'} end\n"
    "if not in_flight then return {'ok'} end")
lua("StaleDeleteRejected", "A delete through an older handle is rejected as expired.", "DEL-STALE", "DELETE",
    "if not current and not stale_ok then", "if not current then return {'expired'} end\nif false then")
lua("DeleteNotIdempotent", "Deleting a deleted message again is an error.", "DEL-IDEMPOTENT", "DELETE",
    "if m[1] ~= P or m[2] ~= '' then return {'gone'} end", "if m[1] ~= P or m[2] ~= '' then return {'expired'} end")

# --- batches, purge, attributes, redrive -----------------------------------------------------------------------------


class BatchStopsAtFirstFailure(RedisQueueTarget):
    """A batch stops at its first failing entry and reports only the entries done before it."""

    def _batch(self, op, single):
        self.store.check_batch([e.id for e in op.entries])
        successful = []
        for entry in op.entries:
            try:
                single(entry)
            except QueueError as error:
                return BatchOk(tuple(successful), (EntryFailure(entry.id, error.error.code, error.error.message),))
            successful.append(entry.id)
        return BatchOk(tuple(successful))


MUTANTS.append(Mutant("BatchStopsAtFirstFailure", BatchStopsAtFirstFailure.__doc__, "sqs-standard",
                      "BATCH-PARTIAL", BatchStopsAtFirstFailure))


class _DuplicateIdsAccepted(RedisQueues):
    def check_batch(self, entry_ids):
        super().check_batch(list(dict.fromkeys(entry_ids)))


python("BatchDuplicateIdsAccepted", "A batch with repeated entry ids is accepted.", "BATCH-IDS-DISTINCT",
       _DuplicateIdsAccepted)
lua("PurgeSparesInFlight", "A purge removes only the messages that are visible.", "PURGE-ALL", "PURGE",
    "for _, id in ipairs(redis.call('ZRANGE', P .. ':due', 0, -1)) do",
    "for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. ':due', '-inf', ARGV[1])) do")


class _PurgeAnyTime(RedisQueues):
    def purge(self, queue):
        self.redis.hset(self._prefix(queue) + ":meta", "purged_at", "")
        super().purge(queue)


python("PurgeNotRateLimited", "A second purge within 60 s is accepted.", "PURGE-IN-PROGRESS", _PurgeAnyTime)


class _DelayedCountedVisible(RedisQueues):
    def attributes(self, queue):
        shown = super().attributes(queue)
        delayed = int(shown["ApproximateNumberOfMessagesDelayed"])
        shown["ApproximateNumberOfMessages"] = str(int(shown["ApproximateNumberOfMessages"]) + delayed)
        shown["ApproximateNumberOfMessagesDelayed"] = "0"
        return shown


python("DelayedCountedVisible", "GetQueueAttributes counts delayed messages as visible.", "ATTR-COUNTS",
       _DelayedCountedVisible)
lua("RedriveOneReceiveLate", "A message moves to the dead-letter queue one receive after maxReceiveCount.",
    "REDRIVE-DLQ", "RECEIVE", "item.count >= max_receives", "item.count > max_receives")
lua("RedriveLosesMessage", "A message moved to the dead-letter queue never arrives there.", "REDRIVE-DLQ",
    "RECEIVE", "    redis.call('ZADD', dead_letter .. ':due', now, item.id)\n", "")

# --- FIFO ------------------------------------------------------------------------------------------------------

lua("FifoGroupReleasedEarly", "A group's lock is released a second before its message's deadline.",
    "FIFO-GROUP-LOCK", "RECEIVE", "return score and tonumber(score) <= now",
    "return score and tonumber(score) <= now + 1", profile="sqs-fifo")
lua("FifoGroupNotLocked", "A group's later messages are returned while an earlier one is in flight.",
    "FIFO-GROUP-LOCK", "RECEIVE", "  if item.group ~= '' then\n", "  if false then\n", profile="sqs-fifo")
lua("FifoExpiredDeleteAccepted", "On a FIFO queue a delete after the deadline is accepted.", "DEL-FIFO-EXPIRED",
    "DELETE", "if fifo and not (current and in_flight) then return {'expired'} end",
    "if fifo and not current then return {'expired'} end", profile="sqs-fifo")
lua("FifoDedupForgotten", "A FIFO send repeated with the same deduplication id is enqueued again.", "FIFO-DEDUP",
    "SEND", "if dedup ~= '' then\n  local earlier", "if false then\n  local earlier", profile="sqs-fifo")
lua("FifoAttemptIdIgnored", "A retried receive with the same attempt id receives anew.", "FIFO-ATTEMPT-ID",
    "RECEIVE", "    if same then return {'replayed', saved.rows} end\n", "", profile="sqs-fifo")

# --- sqs-2008 and SMQ ---------------------------------------------------------------------------------------------

lua("LockIgnored", "sqs-2008: a change naming a never-received message answers OK and does not hide it.",
    "LOCK-UNRECEIVED", "CHANGE", "    redis.call('ZADD', P .. ':due', now + timeout, handle)\n", "",
    profile="sqs-2008")
lua("SmqOldHandleStillWorks", "SMQ: the handle a change replaced still works.", "SMQ-NEW-HANDLE", "CHANGE",
    "  if not (current and in_flight) then return {'not current'} end",
    "  if not in_flight then return {'not current'} end", profile="smq")
lua("SmqChangeOnVisibleAccepted", "SMQ: a change of a message no longer invisible is accepted.",
    "SMQ-INVISIBLE-ONLY", "CHANGE", "  if not (current and in_flight) then return {'not current'} end",
    "  if not current then return {'not current'} end", profile="smq")


class _PeekReceives(RedisQueues):
    def peek(self, queue, max_messages):
        seen = super().peek(queue, max_messages)
        for p in seen:
            self.redis.hincrby(f"{self.namespace}:m:{p.message_id}", "count", 1)
        return seen


python("PeekCountsAsReceive", "A peek increments the receive count.", "PEEK-NO-CHANGE", _PeekReceives,
       profile="sqs-2008")
