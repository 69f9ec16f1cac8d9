"""Values made in one step equal those made the usual way: a message state's copies (a receive's, a change's, a
delete's) what NamedTuple._replace makes of the same changes, a returned message built without its __init__ one
made by it."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, strategies as st

from sqs_conformance.model.outcomes import built
from sqs_conformance.model.state import Gone, Hidden, MessageState, replaced
from sqs_conformance.model.values import ReceivedMessage

TIMES = st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False))
STATES = st.builds(
    MessageState, queue=st.sampled_from(["q", "dlq"]), visible_at=st.floats(0, 1e6, allow_nan=False),
    hidden=st.sampled_from(list(Hidden)), gone=st.sampled_from(list(Gone)), receipt=st.sampled_from([None, "rh-1"]),
    received_at=TIMES, received_slack=st.floats(0, 5), changed_at=TIMES, receive_count=st.integers(0, 20),
    first_receive_at=TIMES, was_locked=st.booleans(), why=st.just(("VIS-DEFAULT",)), slack=st.floats(0, 5),
    redrive_base=st.one_of(st.none(), st.integers(0, 20)), redrive_first_at=TIMES, gone_at=TIMES,
    first_receive_slack=st.floats(0, 5), redrive_first_slack=st.floats(0, 5),
)


@given(STATES, st.floats(0, 1e6, allow_nan=False), st.floats(0, 5), st.integers(0, 43200))
def test_a_receive_changes_what_replace_would(s: MessageState, at: float, slack: float, timeout: int) -> None:
    late, why = at + slack, ("RCV-HIDE",)
    changes = dict(visible_at=at + timeout, slack=late - at, hidden=Hidden.RECEIPT, receipt="rh-2", received_at=at,
                   received_slack=late - at, changed_at=None, receive_count=s.receive_count + 1, was_locked=False,
                   why=why)
    if s.first_receive_at is None:  # its first receive
        changes.update(first_receive_at=at, first_receive_slack=late - at)
    if s.redrive_first_at is None and s.redrive_base is not None:  # its first in a dead-letter queue
        changes.update(redrive_first_at=at, redrive_first_slack=late - at)
    received = s.received("rh-2", at, late, at + timeout, why)
    assert received == s._replace(**changes)
    assert type(received) is MessageState


@given(STATES, st.floats(0, 1e6, allow_nan=False), st.integers(0, 20))
def test_replaced_changes_only_the_fields_named(s: MessageState, visible_at: float, count: int) -> None:
    changes = dict(visible_at=visible_at, receive_count=count, gone=Gone.DELETED)
    assert replaced(s, changes) == s._replace(**changes)


@given(STATES, st.floats(0, 1e6, allow_nan=False), st.floats(0, 5), st.integers(0, 43200),
       st.sampled_from([None, "rh-1", "rh-3"]))
def test_a_change_sets_what_replace_would(s: MessageState, at: float, slack: float, timeout: int,
                                          receipt: str | None) -> None:
    why = ("VIS-EXTEND-NONADDITIVE",)
    changed = s.changed(at + timeout, at, at + slack, why, receipt)
    assert changed == s._replace(visible_at=at + timeout, hidden=Hidden.RECEIPT, receipt=receipt, changed_at=at,
                                 why=why, slack=(at + slack) - at)
    assert type(changed) is MessageState


@given(STATES, st.floats(0, 1e6, allow_nan=False))
def test_a_delete_sets_what_replace_would(s: MessageState, at: float) -> None:
    why = ("DEL-REMOVES",)
    deleted = s.deleted(why, at)
    assert deleted == s._replace(gone=Gone.DELETED, why=why, gone_at=at)
    assert type(deleted) is MessageState


@given(st.text(max_size=5), st.text(max_size=5), st.one_of(st.none(), st.text(max_size=5)),
       st.one_of(st.none(), st.integers(0, 9)), st.one_of(st.none(), st.integers(0, 10**13)))
def test_a_returned_message_built_without_init_equals_one_made_by_it(
        message_id: str, body: str, handle: str | None, count: int | None, first_ms: int | None) -> None:
    fields = dict(message_id=message_id, body=body, receipt_handle=handle, receive_count=count,
                  first_receive_ms=first_ms)
    made, by_init = built(ReceivedMessage, **fields), ReceivedMessage(**fields)
    assert made == by_init and hash(made) == hash(by_init) and repr(made) == repr(by_init)
    with pytest.raises(dataclasses.FrozenInstanceError):  # as frozen as one its __init__ made
        made.body = "changed"  # type: ignore[misc]
