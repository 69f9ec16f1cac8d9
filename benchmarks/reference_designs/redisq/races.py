"""Race mutants of the Redis design: plausible bugs that only concurrent clients of the same queues can show.

Each one cuts one of the design's atomic Lua scripts in two round trips to Redis, as a team would that reads in one
call and writes in the next: `{SCRIPT}_READ` runs the script's reads and checks and answers {'read', values...} (or
its final answer, an error say), then `SCRIPT` does the writes, given those values as its last argument, without
checking them again. For a single client nothing happens between the two trips, so each answers exactly as the
correct design does, step for step; another client's request landing between them shows the bug. The window is
the second round trip itself: no sleep widens it.

They are not in `mutants.MUTANTS`: a single-client run cannot kill them and does not try. The concurrent checks
(`run --clients N`, `shared_connection()`) take `RACES`. Each runs as
`--target python:benchmarks.reference_designs.redisq.races:<name>`.
"""

from __future__ import annotations

import json

from benchmarks.reference_designs.redisq.mutants import Mutant, edited
from benchmarks.reference_designs.redisq.store import RedisQueues
from benchmarks.reference_designs.redisq.target import RedisQueueTarget

RACES: list[Mutant] = []


class TwoTrips(RedisQueues):
    """A store whose scripts named in SPLIT run in two round trips: `{name}_READ`, then `name`."""

    SPLIT: tuple[str, ...] = ()

    def _run(self, script: str, queue: str, *args: object) -> list:
        if script not in self.SPLIT:
            return super()._run(script, queue, *args)
        now = repr(float(self.clock()))  # the one `now` of the request, for both trips
        keys = [self._prefix(queue), self.namespace]
        asked: list = [now, *args]
        first = self._scripts[f"{script}_READ"](keys=keys, args=asked)
        if not first or first[0] != b"read":
            return first  # decided by the reads alone (an error, a replayed receive, a duplicate send)
        read = [v.decode() if isinstance(v, bytes) else v for v in first[1:]]
        return self._scripts[script](keys=keys, args=[*asked, json.dumps(read)])


def race(name: str, bug: str, breaks: str, script: str, read: str, write: str,
         profile: str = "sqs-standard") -> None:
    """A race mutant: `script` replaced by the `read` and `write` halves of one request."""
    sources = {**RedisQueues.SOURCES, script: write, f"{script}_READ": read}
    store = type(f"{name}Store", (TwoTrips,), {"SOURCES": sources, "SPLIT": (script,), "__module__": __name__})
    target = type(name, (RedisQueueTarget,), {"store_class": store, "__doc__": bug, "__module__": __name__})
    globals()[name] = target
    RACES.append(Mutant(name, bug, profile, breaks, target))


SOURCES = RedisQueues.SOURCES
READ_VALUES = "local read = cjson.decode(ARGV[#ARGV])\n"  # what the first trip read, in the second

# --- receive -------------------------------------------------------------------------------------------------------

VISIBLE = "ipairs(redis.call('ZRANGEBYSCORE', P .. ':due', '-inf', ARGV[1]))"
ITEMS = "local items = {}\n"

race("ReceiveReadThenClaim",
     "A receive reads the visible ids in one round trip and claims them in the next without checking their deadline "
     "again: two consumers receive the same message.",
     "RCV-EXCLUSIVE", "RECEIVE",
     read=edited(SOURCES["RECEIVE"], ITEMS, f"do return {{'read', unpack(redis.call('ZRANGEBYSCORE', P .. ':due', "
                                            f"'-inf', ARGV[1]))}} end\n{ITEMS}"),
     write=edited(SOURCES["RECEIVE"], VISIBLE, "ipairs(cjson.decode(ARGV[#ARGV]))"))

ALLOWED = "local allowed = {}\nfor _, item in ipairs(items) do\n  allowed[item.id] = true\n"

race("FifoGroupLockAfterRead",
     "A FIFO receive reads which groups are free in one round trip and claims in the next: two consumers each get a "
     "message of the same group at once.",
     "FIFO-GROUP-LOCK", "RECEIVE",
     read=edited(SOURCES["RECEIVE"], "local out = {}\n",
                 "local free = {'read'}\n"
                 "for _, item in ipairs(items) do if allowed[item.id] then table.insert(free, item.id) end end\n"
                 "do return free end\nlocal out = {}\n"),
     # The claim still takes only messages visible now (no double delivery), but trusts the groups read before.
     write=edited(SOURCES["RECEIVE"], ALLOWED,
                  "local allowed = {}\nfor _, id in ipairs(cjson.decode(ARGV[#ARGV])) do allowed[id] = true end\n"
                  "for _, item in ipairs({}) do\n  allowed[item.id] = true\n"),
     profile="sqs-fifo")

race("FifoAttemptCheckThenReceive",
     "A FIFO receive looks up its ReceiveRequestAttemptId in one round trip and receives in the next: a retry sent "
     "while the first try runs receives other messages instead of the same ones.",
     "FIFO-ATTEMPT-ID", "RECEIVE",
     read=edited(SOURCES["RECEIVE"], ITEMS, f"do return {{'read'}} end\n{ITEMS}"),
     write=edited(SOURCES["RECEIVE"], "if attempt ~= '' and ARGV[8] ~= '' then", "if false then"),
     profile="sqs-fifo")

# --- change and delete ---------------------------------------------------------------------------------------------

CHANGE_WRITES = ("redis.call('ZADD', P .. ':due', now + timeout, id)\nredis.call('HSET', key, 'state', 'inflight')\n"
                 "redis.call('HINCRBY', key, 'ver', 1)\nreturn {'ok'}\n")

CHANGE_READ = edited(SOURCES["CHANGE"], CHANGE_WRITES, "return {'read', id}\n")
CHANGE_WRITE = ("local P, NS = KEYS[1], KEYS[2]\nlocal now, timeout = tonumber(ARGV[1]), tonumber(ARGV[3])\n"
                + READ_VALUES + "local id = read[1]\nlocal key = NS .. ':m:' .. id\n" + CHANGE_WRITES)

# A heartbeat that extends a message while its worker deletes it, the same handle in both: the delete lands between
# the change's trips, and the change puts the deleted message back in the queue.
race("ChangeCheckThenWrite",
     "A change checks its handle in one round trip and sets the deadline in the next: a message deleted in between "
     "is put back in the queue and delivered again.",
     "DEL-REMOVES", "CHANGE", read=CHANGE_READ, write=CHANGE_WRITE)

race("FifoChangeCheckThenWrite",
     "A change checks that its handle is current and in flight in one round trip and sets the deadline in the next: "
     "a handle that expired meanwhile changes the receipt of the consumer that received the message since (and a "
     "message deleted meanwhile comes back, as in ChangeCheckThenWrite).",
     "FIFO-STALE-OTHER", "CHANGE",
     read=CHANGE_READ, write=CHANGE_WRITE,
     profile="sqs-fifo")

DELETE_WRITES = SOURCES["DELETE"][SOURCES["DELETE"].index("redis.call('ZREM', P .. ':due', id)\n"):]

race("FifoDeleteCheckThenRemove",
     "A delete checks that its handle is current and in flight in one round trip and removes the message in the "
     "next: a handle that expired meanwhile deletes the message another consumer has received since.",
     "FIFO-STALE-OTHER", "DELETE",
     read=edited(SOURCES["DELETE"], DELETE_WRITES, "return {'read', id, m[3]}\n"),
     write="local P, NS = KEYS[1], KEYS[2]\n" + READ_VALUES
           + "local id, m = read[1], {nil, nil, read[2]}\nlocal key = NS .. ':m:' .. id\n" + DELETE_WRITES,
     profile="sqs-fifo")

# --- purge and send ------------------------------------------------------------------------------------------------

LISTED = "ipairs(redis.call('ZRANGE', P .. ':due', 0, -1))"

# AWS: messages sent while the queue is being purged "might be deleted", so losing one is no bug. Here the message
# sent between the trips leaves the queue (the whole set is dropped) but stays at the end of its group's list:
# neither in flight nor receivable, it locks its group for good, and later sends to the group are never received.
race("FifoPurgeListThenDelete",
     "A purge lists the queue's messages in one round trip and deletes in the next: a FIFO message sent in between "
     "is dropped from the queue but not from its group, whose later messages are never received again.",
     "FIFO-GROUP-LOCK", "PURGE",
     read=edited(SOURCES["PURGE"], f"for _, id in {LISTED} do",
                 "do return {'read', unpack(redis.call('ZRANGE', P .. ':due', 0, -1))} end\n"
                 "for _, id in ipairs({}) do"),
     write=edited(SOURCES["PURGE"], LISTED, "ipairs(cjson.decode(ARGV[#ARGV]))"),
     profile="sqs-fifo")

NEW_ID = "local id = 'm' .. redis.call('INCR', NS .. ':ids')"

race("FifoDedupCheckThenSend",
     "A FIFO send looks up its deduplication id in one round trip and enqueues in the next: a send and its retry "
     "racing each other are both enqueued.",
     "FIFO-DEDUP", "SEND",
     read=edited(SOURCES["SEND"], NEW_ID, f"do return {{'read'}} end\n{NEW_ID}"),
     write=edited(SOURCES["SEND"], "if dedup ~= '' then\n  local earlier", "if false then\n  local earlier"),
     profile="sqs-fifo")
