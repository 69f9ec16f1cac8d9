"""Concurrent consumers on the in-house designs, driven directly (no suite run): several shared connections from
several threads on the same queues. The correct designs never deliver a message twice; the Redis design's race
mutants (benchmarks/reference_designs/redisq/races.py) answer a single client as the design does, and the
non-atomic receive shows its double delivery within a few rounds."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from benchmarks.reference_designs.redisq import mutants, races
from benchmarks.reference_designs.redisq.target import RedisQueueTarget
from sqs_conformance.adapters.base import Target
from sqs_conformance.model.rules import rules_for
from sqs_conformance.model.values import (
    ChangeMessageVisibility,
    ChangeOk,
    CreateQueue,
    DeleteMessage,
    Ok,
    PurgeQueue,
    ReceiveMessage,
    ReceiveOk,
    SendMessage,
    SendOk,
)

CONSUMERS = 8
MESSAGES = 40
ROUNDS = 20  # how many tries a race may take to show


def _in_threads(work, connections: list[Target]) -> list:
    """work(connection) in one thread per connection, all started together; their answers, or the first error."""
    answers: list = [None] * len(connections)
    failures: list[BaseException] = []
    start = threading.Barrier(len(connections))

    def run(i: int) -> None:
        try:
            start.wait()
            answers[i] = work(connections[i])
        except BaseException as error:  # noqa: B036 (reported to the test's thread)
            failures.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(connections))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a consumer hangs"
    if failures:
        raise failures[0]
    return answers


def _consume(connection: Target) -> list[str]:
    """Receive until the queue answers nothing (every message hidden for 600 s on a clock that stays still)."""
    got: list[str] = []
    while True:
        answer = connection.execute(ReceiveMessage("q", max_messages=2, visibility_timeout=600))
        assert isinstance(answer, ReceiveOk), answer
        if not answer.messages:
            return got
        got.extend(m.message_id for m in answer.messages)


def _round(owner: Target, connections: list[Target]) -> Counter[str]:
    """A queue of 40 messages, drained by the shared connections at once: how often each message was delivered."""
    assert owner.execute(CreateQueue("q", {})) == Ok()
    sent = set()
    for i in range(MESSAGES):
        answer = owner.execute(SendMessage("q", f"message {i}"))
        assert isinstance(answer, SendOk)
        sent.add(answer.message_id)
    delivered = Counter(m for got in _in_threads(_consume, connections) for m in got)
    assert set(delivered) == sent  # every message was delivered
    assert owner.execute(ReceiveMessage("q", visibility_timeout=600)) == ReceiveOk(())
    return delivered


def _shared(owner: Target) -> list[Target]:
    connections = [owner.shared_connection() for _ in range(CONSUMERS)]
    assert all(type(c) is type(owner) and c.clock is owner.clock for c in connections)
    return connections


def _no_message_twice(owner: Target, rounds: int = 3) -> None:
    connections = _shared(owner)
    try:
        for _ in range(rounds):
            delivered = _round(owner, connections)
            assert max(delivered.values()) == 1, {m: n for m, n in delivered.items() if n > 1}
            owner.reset()  # the shared connections follow the owner to its next case
        assert owner.clock.now() == 0.0  # a receive moved no clock
    finally:
        for connection in connections:
            connection.close()


def _a_message_twice_within(owner: Target, rounds: int = ROUNDS) -> int:
    """The round in which some message was delivered twice; fails if none was within `rounds`."""
    connections = _shared(owner)
    try:
        for attempt in range(1, rounds + 1):
            if max(_round(owner, connections).values()) > 1:
                return attempt
            owner.reset()
    finally:
        for connection in connections:
            connection.close()
    pytest.fail(f"{type(owner).__name__}: no message delivered twice in {rounds} rounds")


def _clock_never_goes_back(owner: Target) -> None:
    """Long polls on an empty queue from every connection at once move the one clock, never back."""
    assert owner.execute(CreateQueue("empty", {})) == Ok()
    connections = _shared(owner)
    seen: list[float] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.append(owner.clock.now())
            time.sleep(0.0002)  # a sample every so often, not millions

    def poll(connection: Target) -> None:
        for wait in (1, 3, 2, 5):
            assert connection.execute(ReceiveMessage("empty", wait_time_seconds=wait)) == ReceiveOk(())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        _in_threads(poll, connections)
    finally:
        done.set()
        watcher.join()
        for connection in connections:
            connection.close()
    seen.append(owner.clock.now())
    assert seen == sorted(seen) and seen[-1] >= 11


# --- the correct designs -------------------------------------------------------------------------------------------


@pytest.fixture(params=["redisq", "pgq"])
def design(request):
    """The correct design on its server (shared by the module), closed after the test."""
    if request.param == "redisq":
        request.getfixturevalue("shared_redis")
        owner = RedisQueueTarget("sqs-standard")
    else:
        request.getfixturevalue("shared_postgres")  # skips where PostgreSQL is not installed
        from benchmarks.reference_designs.pgq.target import PostgresQueue

        owner = PostgresQueue("sqs-standard")
    yield owner
    owner.close()


def test_shared_connections_of_a_design_never_deliver_a_message_twice(design):
    _no_message_twice(design)


def test_long_polls_of_a_designs_shared_connections_never_move_the_clock_back(design):
    _clock_never_goes_back(design)


def test_a_redis_shared_connection_owns_nothing(shared_redis):
    owner = RedisQueueTarget("sqs-standard")
    try:
        shared = owner.shared_connection()
        assert shared.execute(CreateQueue("q", {})) == Ok()
        assert isinstance(shared.execute(SendMessage("q", "kept")), SendOk)
        shared.reset()  # deletes nothing
        shared.close()
        assert [m.body for m in owner.execute(ReceiveMessage("q")).messages] == ["kept"]
        owner.reset()
        later = owner.shared_connection().shared_connection()  # a connection of a connection: the owner's
        assert owner.execute(CreateQueue("q", {})) == Ok()  # the new case's queue, empty
        assert later.clock is owner.clock and later.execute(ReceiveMessage("q")) == ReceiveOk(())
        later.close()
    finally:
        owner.close()
    assert list(shared_redis.scan_iter(match=f"{owner._namespace}:*")) == []


def test_a_pgq_shared_connection_owns_nothing(shared_postgres):
    from benchmarks.reference_designs.pgq.target import PostgresQueue

    owner = PostgresQueue("sqs-standard")
    try:
        shared = owner.shared_connection()
        assert shared.execute(CreateQueue("q", {})) == Ok()
        assert isinstance(shared.execute(SendMessage("q", "kept")), SendOk)
        shared.reset()  # does nothing
        shared.close()
        assert [m.body for m in owner.execute(ReceiveMessage("q")).messages] == ["kept"]
    finally:
        owner.close()


def test_pgq_no_row_locks_variant_shares_its_race(shared_postgres):
    from benchmarks.reference_designs.pgq.variants import NoRowLocks

    owner = NoRowLocks("sqs-standard")
    try:
        _a_message_twice_within(owner)
    finally:
        owner.close()


# --- the Redis design's race mutants -------------------------------------------------------------------------------


def test_the_races_are_apart_from_the_single_client_mutants():
    names = [r.name for r in races.RACES]
    assert len(names) >= 6 and len(set(names)) == len(names)
    assert not set(names) & {m.name for m in mutants.MUTANTS}
    assert not {r.target for r in races.RACES} & {m.target for m in mutants.MUTANTS}
    assert all(r.breaks in {rule.id for rule in rules_for(r.profile)} for r in races.RACES)


def test_the_non_atomic_receive_delivers_a_message_twice(shared_redis):
    owner = races.ReceiveReadThenClaim("sqs-standard")
    try:
        _a_message_twice_within(owner)
    finally:
        owner.close()


@pytest.mark.parametrize("race", races.RACES, ids=lambda r: r.name)
def test_each_race_answers_a_single_client_as_the_design_does(shared_redis, race):
    """Every split script runs once, through a shared connection and the owner in turn."""
    fifo = race.profile == "sqs-fifo"
    owner = race.target(race.profile)
    shared = owner.shared_connection()
    try:
        assert type(shared) is race.target and shared.clock is owner.clock
        group = {"group_id": "g"} if fifo else {}
        assert owner.execute(CreateQueue("q", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
                                         if fifo else {})) == Ok()
        sent = shared.execute(SendMessage("q", "one", **group))
        assert isinstance(sent, SendOk)
        if fifo:  # the same body again: a duplicate, the same message
            assert shared.execute(SendMessage("q", "one", **group)) == sent
        attempt = {"attempt_id": "a1"} if fifo else {}
        got = owner.execute(ReceiveMessage("q", visibility_timeout=30, **attempt)).messages
        assert [(m.message_id, m.body, m.receive_count) for m in got] == [(sent.message_id, "one", 1)]
        if fifo:  # a retry replays the answer
            assert owner.execute(ReceiveMessage("q", visibility_timeout=30, **attempt)).messages == got
        handle = got[0].receipt_handle
        assert shared.execute(ChangeMessageVisibility("q", handle, 60)) == ChangeOk()
        owner.clock.advance(45)
        assert shared.execute(ReceiveMessage("q")) == ReceiveOk(())  # the change hid it for 60 s from then
        assert shared.execute(DeleteMessage("q", handle)) == Ok()
        owner.clock.advance(60)
        assert owner.execute(ReceiveMessage("q")) == ReceiveOk(())  # deleted
        assert isinstance(owner.execute(SendMessage("q", "two", **group)), SendOk)
        assert shared.execute(PurgeQueue("q")) == Ok()
        assert owner.execute(ReceiveMessage("q")) == ReceiveOk(())  # purged
        later = shared.execute(SendMessage("q", "three", **group))
        assert [m.message_id for m in owner.execute(ReceiveMessage("q")).messages] == [later.message_id]
    finally:
        shared.close()
        owner.close()


# --- the other races show too, where no clock has to move inside the window ---------------------------------------
# FifoChangeCheckThenWrite and FifoDeleteCheckThenRemove need a deadline to pass between their two trips (the
# virtual clock moved by another client inside one round trip): real, but rare here, so only checked as above.

FIFO = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}


def _at_once(*calls):
    return _in_threads(lambda call: call(), list(calls))


def _group_served_twice(owner: Target, connections: list[Target]) -> bool:
    """One group of 40 messages, eight consumers: the group's lock lets only its first message out."""
    owner.execute(CreateQueue("q", FIFO))
    for i in range(MESSAGES):
        owner.execute(SendMessage("q", f"message {i}", group_id="g"))
    got = _in_threads(lambda c: [m.message_id for _ in range(3)
                                 for m in c.execute(ReceiveMessage("q", visibility_timeout=600)).messages],
                      connections)
    return len({m for ids in got for m in ids}) > 1


def _duplicate_enqueued(owner: Target, connections: list[Target]) -> bool:
    """Eight sends of one body (content-based deduplication) at once: one message."""
    owner.execute(CreateQueue("q", FIFO))
    sent = _in_threads(lambda c: c.execute(SendMessage("q", "same", group_id="g")).message_id, connections)
    return len(set(sent)) > 1


def _attempt_answered_twice(owner: Target, connections: list[Target]) -> bool:
    """Eight tries of one receive (one attempt id) at once, over 16 groups: one answer."""
    owner.execute(CreateQueue("q", FIFO))
    for i in range(16):
        owner.execute(SendMessage("q", f"message {i}", group_id=f"g{i}"))
    got = _in_threads(lambda c: c.execute(ReceiveMessage("q", visibility_timeout=600, attempt_id="a")).messages,
                      connections)
    return len(set(got)) > 1


def _group_jammed_by_purge(owner: Target, connections: list[Target]) -> bool:
    """Sends to a group while it is purged: a message sent after the purge is received."""
    owner.execute(CreateQueue("q", FIFO))
    owner.execute(SendMessage("q", "before", group_id="g"))
    purged = threading.Event()

    def send() -> None:
        i = 0
        while not purged.is_set() or i < 2:
            connections[1].execute(SendMessage("q", f"during {i}", group_id="g"))
            i += 1

    def purge() -> None:
        assert connections[0].execute(PurgeQueue("q")) == Ok()
        purged.set()

    _at_once(send, purge)
    owner.execute(SendMessage("q", "after", group_id="g"))
    return owner.execute(ReceiveMessage("q", max_messages=10)).messages == ()


def _deleted_comes_back(owner: Target, connections: list[Target]) -> bool:
    """A heartbeat extends a message while its worker deletes it, with the same handle: it stays deleted."""
    owner.execute(CreateQueue("q", {}))
    owner.execute(SendMessage("q", "work"))
    handle = owner.execute(ReceiveMessage("q", visibility_timeout=30)).messages[0].receipt_handle
    _at_once(lambda: connections[0].execute(ChangeMessageVisibility("q", handle, 60)),
             lambda: connections[1].execute(DeleteMessage("q", handle)))
    owner.clock.advance(61)
    return owner.execute(ReceiveMessage("q")).messages != ()


SHOWS = {"FifoGroupLockAfterRead": _group_served_twice, "FifoDedupCheckThenSend": _duplicate_enqueued,
         "FifoAttemptCheckThenReceive": _attempt_answered_twice, "FifoPurgeListThenDelete": _group_jammed_by_purge,
         "ChangeCheckThenWrite": _deleted_comes_back}


def _shows_within(owner: Target, scenario, rounds: int) -> bool:
    connections = _shared(owner)
    try:
        for _ in range(rounds):
            if scenario(owner, connections):
                return True
            owner.reset()
        return False
    finally:
        for connection in connections:
            connection.close()


@pytest.mark.parametrize("race", [r for r in races.RACES if r.name in SHOWS], ids=lambda r: r.name)
def test_the_race_shows_with_concurrent_clients_and_never_on_the_design(shared_redis, race):
    scenario = SHOWS[race.name]
    for target, rounds, shows in ((RedisQueueTarget, 10, False), (race.target, 2 * ROUNDS, True)):
        owner = target(race.profile)
        try:
            assert _shows_within(owner, scenario, rounds) is shows, (target.__name__, race.bug)
        finally:
            owner.close()
