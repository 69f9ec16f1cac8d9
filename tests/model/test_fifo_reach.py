"""A FIFO receive returns at most MaxNumberOfMessages, and of each group only a prefix of its visible messages: it
reads a group no further than one message past that bound (its reach). What lies behind cannot be in a correct
answer; returned, it is named for the rule a person would fix, and a deep backlog costs a receive nothing more."""

from sqs_conformance.model import Model
from sqs_conformance.model.core import INDEX_FROM
from sqs_conformance.model.values import CreateQueue, ReceivedMessage, ReceiveMessage, ReceiveOk
from tests.model.scenario import Scenario


def _group_of(size: int, indexed: bool = True) -> tuple[Scenario, list[str]]:
    """A FIFO queue whose one group holds `size` visible messages; `indexed=False`: its receives look at each."""
    q = Scenario("sqs-fifo")
    if not indexed:
        q.model = Model("sqs-fifo", indexed=False)
        q.do(CreateQueue("q", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}), 0)
    return q, [q.send(f"m{i}") for i in range(size)]


def _answer(q: Scenario, ids: list[str]) -> ReceiveOk:
    return ReceiveOk(tuple(ReceivedMessage(i, q.model.messages[i].body, None) for i in ids))


def _verdict(q: Scenario, returned: list[str], max_messages: int = 3):
    expectation = q.model.expect(ReceiveMessage("q", max_messages=max_messages), 1.0)
    return expectation.check(_answer(q, returned))


def _named(verdict) -> list[str]:
    return [problem.rules[0] for problem in verdict.divergences]


def test_a_receive_looks_at_as_many_messages_whatever_the_group_holds_behind_its_reach():
    looked_at = []
    for size in (100, 1000):  # both past INDEX_FROM: the group kept at rest in the index
        q, ids = _group_of(size)
        expectation = q.model.expect(ReceiveMessage("q", max_messages=3), 1.0)
        looked_at.append(len(expectation.candidates))
        assert [m.message_id for m in expectation.canonical().response.messages] == ids[:3]
    assert INDEX_FROM < 100 and looked_at[0] == looked_at[1] <= 4


def test_the_first_messages_of_the_group_pass_and_a_message_past_the_reach_alone_breaks_the_order():
    for indexed in (True, False):
        q, ids = _group_of(INDEX_FROM + 8, indexed)  # indexed, or every message looked at
        assert _verdict(q, ids[:3]).ok
        assert _named(_verdict(q, [ids[20]])) == ["FIFO-ORDER"], indexed  # not the lock: nothing holds the group
        assert _named(_verdict(q, [ids[0], ids[20]])) == ["FIFO-ORDER"], indexed


def test_too_many_messages_in_order_break_only_the_bound():
    for indexed in (True, False):
        q, ids = _group_of(INDEX_FROM + 8, indexed)  # indexed, or every message looked at
        assert _named(_verdict(q, ids[:6])) == ["RCV-MAX-MESSAGES"], indexed


def test_the_bound_is_exercised_where_the_group_holds_more_than_it_and_the_lock_only_where_a_message_is_in_flight():
    q, ids = _group_of(INDEX_FROM + 8)
    verdict = _verdict(q, ids[:3])
    assert "RCV-MAX-MESSAGES" in verdict.decisive
    assert "FIFO-GROUP-LOCK" not in verdict.outcome.rules
    q.receive(at=0.5, max_messages=1)  # the first in flight: the group is locked
    locked = _verdict(q, [ids[1]])
    assert _named(locked) == ["FIFO-GROUP-LOCK"]
