"""`Model.fork` and `Model.fingerprint`, what the history checker's search stands on: a fork is independent of its
original, and two models share a fingerprint only if nothing a later operation reads tells them apart."""

from sqs_conformance.model import Model
from sqs_conformance.model.values import CreateQueue, ReceiveMessage, SendMessage

FIFO = {"FifoQueue": "true", "VisibilityTimeout": "30"}


def _sent(*groups: str) -> Model:
    model = Model("sqs-fifo")
    model.step(CreateQueue("q.fifo", FIFO), 0)
    for n, group in enumerate(groups):
        model.step(SendMessage("q.fifo", "same body", group_id=group, dedup_id=f"d{n}"), 1)
    return model


def test_a_fork_changes_apart_from_its_original():
    original = _sent("a")
    before = original.fingerprint()
    fork = original.fork()
    fork.step(ReceiveMessage("q.fifo"), 2)
    assert original.fingerprint() == before and fork.fingerprint() != before


def test_models_differing_only_in_a_message_group_have_different_fingerprints():
    # the same ids, bodies, times and states: a later receive still tells them apart (which group it locks)
    assert _sent("a", "b").fingerprint() != _sent("a", "a").fingerprint()
    assert _sent("a", "b").fingerprint() == _sent("a", "b").fingerprint()


def test_models_differing_only_in_a_remembered_receive_attempt_have_different_fingerprints():
    tried, untried = _sent("a"), _sent("a")
    tried.step(ReceiveMessage("q.fifo", attempt_id="r1"), 2)
    untried.step(ReceiveMessage("q.fifo"), 2)
    assert tried.fingerprint() != untried.fingerprint()
