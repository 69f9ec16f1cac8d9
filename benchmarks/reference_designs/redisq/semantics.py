"""What differs between the queue services the design can behave as: a few switches, named by what they do."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Semantics:
    name: str
    fifo: bool = False
    visibility_min: int = 0
    visibility_max: int = 43200
    ceiling: int | None = 43200  # a receipt's deadline may not pass its receive + this (None: no ceiling)
    stale_handles_work: bool = True  # a handle from an earlier receive still addresses the message
    change_mints_handle: bool = False  # smq: an accepted change answers with a new handle; the old one dies
    lock_unreceived: bool = False  # sqs-2008: a change naming a never-received message's id hides it
    validates_receive: bool = True  # MaxNumberOfMessages and WaitTimeSeconds are range-checked
    batches: bool = True
    delay: bool = True
    long_poll: bool = True
    redrive: bool = True
    purge: bool = True
    peek: bool = False
    dialect: str = "sqs"  # the error codes it answers with: "sqs" or "smq"
    dedup_window: float = 300.0
    attempt_window: float = 300.0
    purge_interval: float = 60.0
    max_messages: int = 10
    max_wait: int = 20
    max_delay: int = 900
    max_batch: int = 10


SEMANTICS = {
    s.name: s for s in (
        Semantics("sqs-standard"),
        Semantics("sqs-fifo", fifo=True),
        Semantics("sqs-2008", ceiling=None, lock_unreceived=True, batches=False, delay=False, long_poll=False,
                  redrive=False, purge=False, peek=True),
        Semantics("smq", visibility_min=1, ceiling=None, stale_handles_work=False, change_mints_handle=True,
                  validates_receive=False, batches=False, delay=False, long_poll=False, redrive=False, purge=False,
                  peek=True, dialect="smq"),
    )
}
