"""Hand-written boto3 probes of an SQS emulator's visibility-timeout edges.

Written from the documents alone (the SQS developer-guide seeds and spec/EVIDENCE.md), never from the
conformance suite, so that they measure from outside what the suite misses. Each probe is one function; its
docstring ends with the passage it tests (`Passage: <document> "<quote>"`, a "..." joins two pieces of one passage).
A probe whose documents are silent or hedge records what the emulator answered and takes no verdict.

    python3 -m benchmarks.emulator_probes.edges --emulator moto-server [--emulator fauxqs ...] \
        [--out benchmarks/emulator_probes/results]
    python3 benchmarks/emulator_probes/edges.py --check-passages /work/shared   # every quote is in its document
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project's root, for `adapters`

from sqs_conformance.adapters.emulators import EMULATORS, EMULATORS_HOME, installed_version, start

ROOT = Path(__file__).resolve().parents[2]

DOCUMENTS = {
    "000": "seeds/000_3b651c4f440e22d7.txt",  # developer guide, 2008-era API
    "001": "seeds/001_f49e5dd5396d3e62.txt",  # developer guide, older
    "002": "seeds/002_65d95d73d0e44e18.txt",  # developer guide, current
    "003": "seeds/003_c65a63634cd8a0c8.txt",  # third-party summary
    "EVIDENCE": "spec/EVIDENCE.md",  # what real AWS was observed to do
}


# ----------------------------------------------------------------------------------------------------------------
# Probes, their registry and their outcomes


@dataclass
class Outcome:
    observed: Any
    conforms: bool | None = None  # None: no verdict (the documents do not decide)
    text_conforms: bool | None = None  # the error text, judged only where the documents give it exactly


@dataclass(frozen=True)
class Probe:
    id: str
    rule: str
    expected: str | None  # None: the documents are silent or hedge, so the probe is undecided
    why_undecided: str | None
    run: Callable[[Ctx], Outcome]
    doc: str

    @property
    def passage(self) -> dict[str, str]:
        match = re.search(r'Passage:\s*(\S+)\s+"(.*)"', self.doc, re.DOTALL)
        if not match:
            raise ValueError(f"probe {self.id} names no passage")
        return {"file": DOCUMENTS[match[1]], "quote": " ".join(match[2].split())}


PROBES: list[Probe] = []


def probe(probe_id: str, rule: str, expected: str | None = None, undecided: str | None = None):
    """Register a probe function; exactly one of `expected` (from the documents) and `undecided` (why not)."""
    if (expected is None) == (undecided is None):
        raise ValueError(f"probe {probe_id}: give either expected or undecided")

    def register(fn: Callable[[Ctx], Outcome]) -> Callable[[Ctx], Outcome]:
        PROBES.append(Probe(probe_id, rule, expected, undecided, fn, fn.__doc__ or ""))
        return fn

    return register


class SetupFailed(Exception):
    """A step before the edge itself did not do what SQS documents (e.g. the message never came)."""


# ----------------------------------------------------------------------------------------------------------------
# A probe's context: the client, fresh queues under a unique prefix, and small helpers


def now() -> float:
    return time.monotonic()


def sleep_until(moment: float) -> None:
    delay = moment - now()
    if delay > 0:
        time.sleep(delay)


def bodies(messages: list[dict]) -> list[str]:
    return [m["Body"] for m in messages]


def error_of(e: ClientError) -> dict[str, Any]:
    """The error's code (the query-compatible one where the JSON protocol carries it), message and HTTP status."""
    metadata = e.response.get("ResponseMetadata", {})
    code = e.response.get("Error", {}).get("Code", "")
    query_code = metadata.get("HTTPHeaders", {}).get("x-amzn-query-error")
    if query_code:
        code = query_code.split(";")[0]
    code = code.removeprefix("AWS.SimpleQueueService.")
    return {"error": code, "message": e.response.get("Error", {}).get("Message", ""),
            "http": metadata.get("HTTPStatusCode")}


def attempt(call: Callable[..., dict], **kwargs) -> dict[str, Any]:
    """Call, and answer {"ok": True, "response": ...} or the error."""
    try:
        response = call(**kwargs)
    except ClientError as e:
        return error_of(e)
    response.pop("ResponseMetadata", None)
    return {"ok": True, "response": response}


def is_error(observed: dict, code: str) -> bool:
    return observed.get("error") == code


class Ctx:
    def __init__(self, sqs, probe_id: str) -> None:
        self.sqs = sqs
        slug = re.sub(r"[^A-Za-z0-9_-]", "-", probe_id)[:40]
        self.prefix = f"p{uuid.uuid4().hex[:8]}-{slug}"
        self.queues: list[str] = []

    def name(self, suffix: str = "q", fifo: bool = False) -> str:
        return f"{self.prefix}-{suffix}" + (".fifo" if fifo else "")

    def queue(self, suffix: str = "q", fifo: bool = False, **attributes: Any) -> str:
        attrs = {key: str(value) for key, value in attributes.items()}
        if fifo:
            attrs["FifoQueue"] = "true"
        try:
            url = self.sqs.create_queue(QueueName=self.name(suffix, fifo), Attributes=attrs)["QueueUrl"]
        except ClientError as e:
            raise SetupFailed(f"CreateQueue {attrs}: {error_of(e)}") from None
        self.queues.append(url)
        return url

    def cleanup(self) -> None:
        for url in self.queues:
            with contextlib.suppress(Exception):  # cleanup is best effort
                self.sqs.delete_queue(QueueUrl=url)

    def send(self, url: str, body: str, group: str | None = None, dedup: str | None = None, **kwargs) -> str:
        if group is not None:
            kwargs["MessageGroupId"] = group
            kwargs["MessageDeduplicationId"] = dedup or uuid.uuid4().hex
        try:
            return self.sqs.send_message(QueueUrl=url, MessageBody=body, **kwargs)["MessageId"]
        except ClientError as e:
            raise SetupFailed(f"SendMessage: {error_of(e)}") from None

    def receive(self, url: str, vt: int | None = None, wait: int | None = 0, max_n: int = 1,
                attributes: bool = False) -> list[dict]:
        """One ReceiveMessage; `wait=None` names no WaitTimeSeconds, `vt=None` no VisibilityTimeout."""
        kwargs: dict[str, Any] = {"QueueUrl": url, "MaxNumberOfMessages": max_n}
        if wait is not None:
            kwargs["WaitTimeSeconds"] = wait
        if vt is not None:
            kwargs["VisibilityTimeout"] = vt
        if attributes:
            kwargs["AttributeNames"] = ["All"]
        return self.sqs.receive_message(**kwargs).get("Messages", [])

    def receive_visible(self, url: str, tries: int = 3, **kwargs) -> list[dict]:
        """Short polls, a few times, for messages that should be visible (a short poll may sample)."""
        for i in range(tries):
            messages = self.receive(url, **kwargs)
            if messages:
                return messages
            if i < tries - 1:
                time.sleep(0.15)
        return []

    def receive_one(self, url: str, **kwargs) -> dict:
        messages = self.receive_visible(url, **kwargs)
        if not messages:
            raise SetupFailed("a message that was sent and is visible was not received")
        return messages[0]

    def sent_and_received(self, url: str, body: str = "m", **kwargs) -> tuple[dict, float]:
        """Send one message, receive it; the message and the moment the receive returned."""
        self.send(url, body)
        message = self.receive_one(url, **kwargs)
        return message, now()

    def change(self, url: str, handle: str, vt: int) -> dict[str, Any]:
        return attempt(self.sqs.change_message_visibility, QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=vt)

    def delete(self, url: str, handle: str) -> dict[str, Any]:
        return attempt(self.sqs.delete_message, QueueUrl=url, ReceiptHandle=handle)

    def attribute(self, url: str, name: str) -> str | None:
        return self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[name]).get("Attributes", {}).get(name)


def brief(observed: dict[str, Any]) -> dict[str, Any]:
    """An attempt's answer without the response body (for calls whose response does not matter)."""
    return {key: value for key, value in observed.items() if key != "response"}


# ----------------------------------------------------------------------------------------------------------------
# 1-3: hiding, changing, overriding


@probe("1.hidden-then-back", "hidden for the timeout, visible after it",
       expected="queue timeout 2 s: not receivable 1.0 s after the receive, receivable again at 2.8 s")
def hidden_then_back(ctx: Ctx) -> Outcome:
    """Receive under a 2 s queue timeout, then try at +1.0 s and +2.8 s.

    Passage: 000 "Once a message is returned to a consuming component, it isn't available to other receive requests
    for the duration of the visibility timeout period. Once the timeout period expires, the message returns to a
    subsequent receive request"
    """
    q = ctx.queue(VisibilityTimeout=2)
    _, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 1.0)
    early = bodies(ctx.receive(q))
    sleep_until(t0 + 2.8)
    late = bodies(ctx.receive_visible(q))
    return Outcome({"at +1.0 s": early, "at +2.8 s": late}, early == [] and late == ["m"])


@probe("2.change-extends-from-call", "change counts from the call, not additive",
       expected="queue timeout 2 s, ChangeMessageVisibility 3 at +0.5 s: hidden at +2.6 s (past the original "
                "deadline), visible at +4.2 s (past +3.5 s, before the additive +5.0 s)")
def change_extends_from_call(ctx: Ctx) -> Outcome:
    """Extend 0.5 s into a 2 s timeout by 3 s: the new deadline is call + 3 = +3.5 s, not old deadline + 3 = +5 s.

    Passage: 000 "you extend it by 60 seconds (to do this, you call ChangeMessageVisibility with VisibilityTimeout=60
    seconds). At that moment, you then have 60 seconds for your timeout (not 10+60 = 70 seconds; the extension isn't
    additive)"
    """
    q = ctx.queue(VisibilityTimeout=2)
    message, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 0.5)
    changed = ctx.change(q, message["ReceiptHandle"], 3)
    sleep_until(t0 + 2.6)
    mid = bodies(ctx.receive(q))
    sleep_until(t0 + 4.2)
    late = bodies(ctx.receive_visible(q))
    observed = {"change": brief(changed), "at +2.6 s": mid, "at +4.2 s": late}
    return Outcome(observed, changed.get("ok") is True and mid == [] and late == ["m"])


@probe("2.change-shortens", "shortening counts from the call",
       expected="received with timeout 10 s, changed to 1 s at once: hidden at +0.3 s, visible at +1.6 s")
def change_shortens(ctx: Ctx) -> Outcome:
    """Shorten a 10 s timeout to 1 s right after the receive.

    Passage: 002 "you send a ChangeMessageVisibility call with VisibilityTimeout set to 10 seconds, the 10 seconds
    begin to count from the time that you make the ChangeMessageVisibility call"
    """
    q = ctx.queue(VisibilityTimeout=10)
    message, _ = ctx.sent_and_received(q)
    changed = ctx.change(q, message["ReceiptHandle"], 1)
    t1 = now()
    sleep_until(t1 + 0.3)
    early = bodies(ctx.receive(q))
    sleep_until(t1 + 1.6)
    late = bodies(ctx.receive_visible(q))
    observed = {"change": brief(changed), "at +0.3 s": early, "at +1.6 s": late}
    return Outcome(observed, changed.get("ok") is True and early == [] and late == ["m"])


@probe("2.change-zero-releases", "ChangeMessageVisibility 0 releases at once",
       expected="received with timeout 10 s, changed to 0: receivable at once")
def change_zero_releases(ctx: Ctx) -> Outcome:
    """Terminate the timeout with 0 and receive straight away.

    Passage: 000 "SQS allows you to terminate the visibility timeout for a specific message, which immediately makes
    the message visible to other components in the system to process. To do this, you call ChangeMessageVisibility
    with VisibilityTimeout=0 seconds."
    """
    q = ctx.queue(VisibilityTimeout=10)
    message, _ = ctx.sent_and_received(q)
    changed = ctx.change(q, message["ReceiptHandle"], 0)
    again = bodies(ctx.receive_visible(q))
    return Outcome({"change": brief(changed), "receive": again}, changed.get("ok") is True and again == ["m"])


@probe("2.change-not-sticky", "a change applies to that receipt only",
       expected="queue timeout 10 s; released with ChangeMessageVisibility 0 and received again: the next receipt "
                "hides it for the queue's 10 s (not receivable 0.3 s later)")
def change_not_sticky(ctx: Ctx) -> Outcome:
    """Release with 0, receive again without an override: the queue's timeout applies, not the 0.

    Passage: 002 "the new timeout period applies only to the particular receipt of the message.
    ChangeMessageVisibility doesn't affect the timeout of later receipts of the message"
    """
    q = ctx.queue(VisibilityTimeout=10)
    message, _ = ctx.sent_and_received(q)
    changed = ctx.change(q, message["ReceiptHandle"], 0)
    second = bodies(ctx.receive_visible(q))
    time.sleep(0.3)
    third = bodies(ctx.receive(q))
    observed = {"change": brief(changed), "second receive": second, "0.3 s later": third}
    return Outcome(observed, changed.get("ok") is True and second == ["m"] and third == [])


@probe("3.receive-override", "receive-level timeout applies to those messages, queue unchanged",
       expected="queue timeout 10 s, received with VisibilityTimeout 1: hidden at once, receivable at +1.6 s; "
                "the queue attribute stays 10")
def receive_override(ctx: Ctx) -> Outcome:
    """Receive with VisibilityTimeout=1 on a 10 s queue.

    Passage: 001 "When receiving messages, you can also set a special visibility timeout for the returned messages
    without changing the overall queue timeout."
    """
    q = ctx.queue(VisibilityTimeout=10)
    _, t0 = ctx.sent_and_received(q, vt=1)
    early = bodies(ctx.receive(q))
    sleep_until(t0 + 1.6)
    late = bodies(ctx.receive_visible(q))
    queue_value = ctx.attribute(q, "VisibilityTimeout")
    observed = {"at once": early, "at +1.6 s": late, "queue VisibilityTimeout": queue_value}
    return Outcome(observed, early == [] and late == ["m"] and queue_value == "10")


@probe("3.receive-override-zero", "an explicit 0 override is honoured",
       expected="queue timeout 10 s, received with VisibilityTimeout 0: receivable again at once; a following "
                "receive without override hides it for the queue's 10 s")
def receive_override_zero(ctx: Ctx) -> Outcome:
    """Receive with VisibilityTimeout=0 on a 10 s queue (0 must not be taken as "not given").

    Passage: EVIDENCE "ReceiveMessage(VisibilityTimeout=v) applies v to the returned messages only; the queue
    attribute is unchanged"
    """
    q = ctx.queue(VisibilityTimeout=10)
    ctx.sent_and_received(q, vt=0)
    again = bodies(ctx.receive_visible(q))
    time.sleep(0.3)
    after = bodies(ctx.receive(q))
    observed = {"receive right after the 0 receive": again, "0.3 s after that one": after}
    return Outcome(observed, again == ["m"] and after == [])


@probe("3.queue-change-in-flight", "a queue-attribute change and in-flight deadlines",
       undecided="EVIDENCE: in-flight deadlines are not documented to move; marked uncertain")
def queue_change_in_flight(ctx: Ctx) -> Outcome:
    """Receive under a 1 s queue timeout, set the queue's timeout to 10 s, look at +1.6 s.

    Passage: EVIDENCE "in-flight deadlines are not documented to move (treat as not moving, mark uncertain)"
    """
    q = ctx.queue(VisibilityTimeout=1)
    _, t0 = ctx.sent_and_received(q)
    changed = attempt(ctx.sqs.set_queue_attributes, QueueUrl=q, Attributes={"VisibilityTimeout": "10"})
    sleep_until(t0 + 1.6)
    return Outcome({"set": brief(changed), "at +1.6 s": bodies(ctx.receive_visible(q))})


# ----------------------------------------------------------------------------------------------------------------
# 4: ranges, both sides. One generic probe, one registered case per row of RANGE_CASES.

VT_RANGE = ('EVIDENCE "VisibilityTimeout is an integer 0..43200 on ReceiveMessage, ChangeMessageVisibility(Batch) '
            'and the queue attribute; default 30 ... error code InvalidParameterValue on request parameters, '
            'InvalidAttributeValue on queue attributes"')
WAIT_RANGE = ('EVIDENCE "WaitTimeSeconds | 0..20; "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must '
              'be >= 0 and <= 20, if provided.""')
MAX_RANGE = ('EVIDENCE "MaxNumberOfMessages | 1..10; "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: '
             'Must be between 1 and 10, if provided.""')
DELAY_RANGE = ('EVIDENCE "DelaySeconds 0..900 hides a message before its first receive ... error code '
               'InvalidParameterValue on request parameters, InvalidAttributeValue on queue attributes"')

PARAM, ATTR, OK = "InvalidParameterValue", "InvalidAttributeValue", None
RANGE_CASES = [
    # operation, parameter, value, expected code (None: accepted), exact text if the documents give it, passage
    ("ChangeMessageVisibility", "VisibilityTimeout", -1, PARAM, None, VT_RANGE),
    ("ChangeMessageVisibility", "VisibilityTimeout", 43201, PARAM, None, VT_RANGE),
    ("ChangeMessageVisibility", "VisibilityTimeout", 0, OK, None, VT_RANGE),
    ("ReceiveMessage", "VisibilityTimeout", -1, PARAM, None, VT_RANGE),
    ("ReceiveMessage", "VisibilityTimeout", 43201, PARAM, None, VT_RANGE),
    ("ReceiveMessage", "VisibilityTimeout", 43200, OK, None, VT_RANGE),
    ("CreateQueue", "VisibilityTimeout", -1, ATTR, None, VT_RANGE),
    ("CreateQueue", "VisibilityTimeout", 43201, ATTR, None, VT_RANGE),
    ("CreateQueue", "VisibilityTimeout", 43200, OK, None, VT_RANGE),
    ("CreateQueue", "VisibilityTimeout", 0, OK, None, VT_RANGE),
    ("SetQueueAttributes", "VisibilityTimeout", -1, ATTR, None, VT_RANGE),
    ("SetQueueAttributes", "VisibilityTimeout", 43201, ATTR, None, VT_RANGE),
    ("ReceiveMessage", "WaitTimeSeconds", -1, PARAM, None, WAIT_RANGE),
    ("ReceiveMessage", "WaitTimeSeconds", 21, PARAM,
     "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", WAIT_RANGE),
    ("ReceiveMessage", "WaitTimeSeconds", 20, OK, None, WAIT_RANGE),
    ("ReceiveMessage", "MaxNumberOfMessages", 0, PARAM, None, MAX_RANGE),
    ("ReceiveMessage", "MaxNumberOfMessages", 11, PARAM,
     "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
     MAX_RANGE),
    ("ReceiveMessage", "MaxNumberOfMessages", 10, OK, None, MAX_RANGE),
    ("SendMessage", "DelaySeconds", -1, PARAM, None, DELAY_RANGE),
    ("SendMessage", "DelaySeconds", 901, PARAM, None, DELAY_RANGE),
    ("SendMessage", "DelaySeconds", 900, OK, None, DELAY_RANGE),
    ("CreateQueue", "DelaySeconds", -1, ATTR, None, DELAY_RANGE),
    ("CreateQueue", "DelaySeconds", 901, ATTR, None, DELAY_RANGE),
    ("SetQueueAttributes", "DelaySeconds", -1, ATTR, None, DELAY_RANGE),
    ("SetQueueAttributes", "DelaySeconds", 901, ATTR, None, DELAY_RANGE),
]


def range_call(ctx: Ctx, operation: str, parameter: str, value: int) -> dict[str, Any]:
    """Make `operation` with `parameter=value`, everything else valid (a message waits, a handle is fresh)."""
    q = ctx.queue(VisibilityTimeout=30)
    if operation == "CreateQueue":
        answer = attempt(ctx.sqs.create_queue, QueueName=ctx.name("made"), Attributes={parameter: str(value)})
        if answer.get("ok"):
            ctx.queues.append(answer["response"]["QueueUrl"])
        return answer
    if operation == "SetQueueAttributes":
        return attempt(ctx.sqs.set_queue_attributes, QueueUrl=q, Attributes={parameter: str(value)})
    if operation == "SendMessage":
        return attempt(ctx.sqs.send_message, QueueUrl=q, MessageBody="m", **{parameter: value})
    ctx.send(q, "m")
    if operation == "ChangeMessageVisibility":
        return ctx.change(q, ctx.receive_one(q)["ReceiptHandle"], value)
    kwargs = {"MaxNumberOfMessages": 1, "WaitTimeSeconds": 0, parameter: value}
    return attempt(ctx.sqs.receive_message, QueueUrl=q, **kwargs)


def out_of_range(ctx: Ctx, operation: str, parameter: str, value: int, code: str | None,
                 text: str | None) -> Outcome:
    """One side of one range: the code (or acceptance) is judged; the text only where the documents give it.

    Passage: EVIDENCE "VisibilityTimeout is an integer 0..43200" (each case names its own row of EVIDENCE.md)
    """
    answer = range_call(ctx, operation, parameter, value)
    observed = brief(answer)
    if answer.get("ok") and operation == "ReceiveMessage":
        observed["messages"] = len(answer["response"].get("Messages", []))
    if code is None:
        return Outcome(observed, answer.get("ok") is True)
    text_conforms = None if text is None or answer.get("ok") else answer.get("message") == text
    return Outcome(observed, is_error(answer, code), text_conforms)


def register_range_cases() -> None:
    for operation, parameter, value, code, text, passage in RANGE_CASES:
        expected = "accepted" if code is None else f"error {code}"
        if text:
            expected += f' "{text}"'
        doc = f"{out_of_range.__doc__.split('Passage:')[0]}Passage: {passage}"

        def run(ctx: Ctx, operation=operation, parameter=parameter, value=value, code=code, text=text) -> Outcome:
            return out_of_range(ctx, operation, parameter, value, code, text)

        short = {"ChangeMessageVisibility": "cmv", "ReceiveMessage": "receive", "CreateQueue": "create",
                 "SetQueueAttributes": "set", "SendMessage": "send"}[operation]
        PROBES.append(Probe(f"4.{short}-{parameter}={value}", f"{parameter} range on {operation}", expected, None,
                            run, doc))


register_range_cases()


# ----------------------------------------------------------------------------------------------------------------
# 5: the 12-hour ceiling

CEILING_TEXT = re.compile(r"Value (\d+) for parameter VisibilityTimeout is invalid\. Reason: Total VisibilityTimeout "
                          r"for the message is beyond the limit \[43200 seconds\]\.?")


def ceiling_text_conforms(answer: dict[str, Any], value: int) -> bool | None:
    if answer.get("ok"):
        return None
    match = CEILING_TEXT.fullmatch(answer.get("message", ""))
    return bool(match) and int(match[1]) == value


@probe("5.ceiling-43200-at-once", "12-hour ceiling, 43200 right after the receive",
       undecided="EVIDENCE hedges: setting 43200 right after a receive may already fail by a second")
def ceiling_43200_at_once(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibility 43200 straight after the receive.

    Passage: EVIDENCE "Setting 43200 right after a receive may already fail by a second."
    """
    q = ctx.queue(VisibilityTimeout=30)
    message, _ = ctx.sent_and_received(q)
    return Outcome(brief(ctx.change(q, message["ReceiptHandle"], 43200)))


@probe("5.ceiling-43190-at-once", "12-hour ceiling, just under it right after the receive",
       expected="accepted")
def ceiling_43190_at_once(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibility 43190 straight after the receive: 10 s inside the ceiling.

    Passage: 002 "The maximum visibility timeout is 12 hours from the time that Amazon SQS receives the ReceiveMessage
    request."
    """
    q = ctx.queue(VisibilityTimeout=30)
    message, _ = ctx.sent_and_received(q)
    answer = ctx.change(q, message["ReceiptHandle"], 43190)
    return Outcome(brief(answer), answer.get("ok") is True)


@probe("5.ceiling-counted-from-receive", "ceiling counted from receive, not from the call",
       expected='2.5 s after the receive, ChangeMessageVisibility 43199 (receive + 43201.5 s) is refused: '
                'InvalidParameterValue "Value 43199 for parameter VisibilityTimeout is invalid. Reason: Total '
                'VisibilityTimeout for the message is beyond the limit [43200 seconds]"')
def ceiling_counted_from_receive(ctx: Ctx) -> Outcome:
    """Wait 2.5 s after the receive, then ask for 43199 s: the deadline would pass receive + 43200 s.

    Passage: 002 "The maximum visibility timeout is 12 hours from the time that Amazon SQS receives the ReceiveMessage
    request."
    """
    q = ctx.queue(VisibilityTimeout=30)
    message, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 2.5)
    answer = ctx.change(q, message["ReceiptHandle"], 43199)
    return Outcome(brief(answer), is_error(answer, PARAM), ceiling_text_conforms(answer, 43199))


@probe("5.ceiling-not-reset-by-extend", "extending does not reset the ceiling",
       expected="ChangeMessageVisibility 43190 right after the receive is accepted; 2.5 s later 43199 is refused "
                "with InvalidParameterValue (ceiling text)")
def ceiling_not_reset_by_extend(ctx: Ctx) -> Outcome:
    """Extend once (accepted), then 2.5 s later ask for 43199 s: still counted from the receive.

    Passage: 002 "Extending the visibility timeout does not reset the 12-hour maximum."
    """
    q = ctx.queue(VisibilityTimeout=30)
    message, t0 = ctx.sent_and_received(q)
    first = ctx.change(q, message["ReceiptHandle"], 43190)
    sleep_until(t0 + 2.5)
    second = ctx.change(q, message["ReceiptHandle"], 43199)
    observed = {"43190 at once": brief(first), "43199 at +2.5 s": brief(second)}
    return Outcome(observed, first.get("ok") is True and is_error(second, PARAM),
                   ceiling_text_conforms(second, 43199))


@probe("5.ceiling-wait-before-receive-free", "time waiting before the receive does not count",
       expected="a message sent 3 s before its first receive can be changed to 43198 s right after it: accepted")
def ceiling_wait_before_receive_free(ctx: Ctx) -> Outcome:
    """Send, wait 3 s, receive, ask for 43198 s (send + 43201 s, but receive + 43198 s).

    Passage: EVIDENCE "Time the message spent waiting before the receive does not count"
    """
    q = ctx.queue(VisibilityTimeout=30)
    ctx.send(q, "m")
    time.sleep(3.0)
    message = ctx.receive_one(q)
    answer = ctx.change(q, message["ReceiptHandle"], 43198)
    return Outcome(brief(answer), answer.get("ok") is True)


@probe("5.ceiling-first-or-this-receive", "ceiling from the first receive or from this receipt's receive",
       undecided='the documents disagree: seed 003 says "from first receive", EVIDENCE says "after the '
                 'ReceiveMessage that produced the receipt"')
def ceiling_first_or_this_receive(ctx: Ctx) -> Outcome:
    """Receive with 0 (released), wait 2.5 s, receive again, ask for 43199 s: refused only if counted from the first.

    Passage: 003 "Maximum 12-hour limit is from first receive"
    """
    q = ctx.queue(VisibilityTimeout=30)
    _, t0 = ctx.sent_and_received(q, vt=0)
    sleep_until(t0 + 2.5)
    message = ctx.receive_one(q)
    return Outcome(brief(ctx.change(q, message["ReceiptHandle"], 43199)))


# ----------------------------------------------------------------------------------------------------------------
# 6: receipt handles

GARBAGE = "not-a-receipt-handle"


@probe("6.delete-garbage-handle", "malformed handle to DeleteMessage",
       expected=f'error ReceiptHandleIsInvalid "The input receipt handle "{GARBAGE}" is not a valid receipt handle."')
def delete_garbage_handle(ctx: Ctx) -> Outcome:
    """DeleteMessage with a handle that is no handle at all.

    Passage: EVIDENCE "DeleteMessage, malformed handle | ReceiptHandleIsInvalid 'The input receipt handle "<h>" is
    not a valid receipt handle.'"
    """
    q = ctx.queue()
    ctx.send(q, "m")
    answer = ctx.delete(q, GARBAGE)
    text = f'The input receipt handle "{GARBAGE}" is not a valid receipt handle.'
    return Outcome(brief(answer), is_error(answer, "ReceiptHandleIsInvalid"),
                   None if answer.get("ok") else answer.get("message") == text)


@probe("6.change-garbage-handle", "malformed handle to ChangeMessageVisibility",
       expected="error ReceiptHandleIsInvalid")
def change_garbage_handle(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibility with a handle that is no handle at all.

    Passage: EVIDENCE "CMV, malformed handle | ReceiptHandleIsInvalid"
    """
    q = ctx.queue()
    ctx.send(q, "m")
    answer = ctx.change(q, GARBAGE, 10)
    return Outcome(brief(answer), is_error(answer, "ReceiptHandleIsInvalid"))


@probe("6.message-id-as-handle", "a message id is not a receipt handle",
       undecided="the documents do not say whether a message id counts as a malformed handle")
def message_id_as_handle(ctx: Ctx) -> Outcome:
    """DeleteMessage and ChangeMessageVisibility with the MessageId of a received message in place of its handle.

    Passage: EVIDENCE "DeleteMessage, malformed handle | ReceiptHandleIsInvalid"
    """
    q = ctx.queue(VisibilityTimeout=1)
    message, t0 = ctx.sent_and_received(q)
    change = ctx.change(q, message["MessageId"], 0)
    delete = ctx.delete(q, message["MessageId"])
    sleep_until(t0 + 1.6)
    left = bodies(ctx.receive_visible(q))
    return Outcome({"change": brief(change), "delete": brief(delete), "still there at +1.6 s": left})


@probe("6.change-deleted-message", "ChangeMessageVisibility on a deleted message",
       expected='error InvalidParameterValue "Value <handle> for parameter ReceiptHandle is invalid. Reason: Message '
                'does not exist or is not available for visibility timeout change."')
def change_deleted_message(ctx: Ctx) -> Outcome:
    """Receive, delete, then change the visibility through the same handle.

    Passage: EVIDENCE "CMV, deleted message | InvalidParameterValue "Value <handle> for parameter ReceiptHandle is
    invalid. Reason: Message does not exist or is not available for visibility timeout change.""
    """
    q = ctx.queue(VisibilityTimeout=10)
    message, _ = ctx.sent_and_received(q)
    handle = message["ReceiptHandle"]
    deleted = ctx.delete(q, handle)
    answer = ctx.change(q, handle, 10)
    text = (f"Value {handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not "
            "available for visibility timeout change.")
    observed = {"delete": brief(deleted), "change": brief(answer)}
    return Outcome(observed, deleted.get("ok") is True and is_error(answer, PARAM),
                   None if answer.get("ok") else answer.get("message") == text)


@probe("6.delete-twice", "deleting twice succeeds", expected="both DeleteMessage calls succeed")
def delete_twice(ctx: Ctx) -> Outcome:
    """Delete the same receipt twice.

    Passage: EVIDENCE "DeleteMessage twice | succeeds both times"
    """
    q = ctx.queue(VisibilityTimeout=10)
    message, _ = ctx.sent_and_received(q)
    first, second = ctx.delete(q, message["ReceiptHandle"]), ctx.delete(q, message["ReceiptHandle"])
    return Outcome({"first": brief(first), "second": brief(second)},
                   first.get("ok") is True and second.get("ok") is True)


@probe("6.change-expired-handle", "ChangeMessageVisibility through an expired handle, not received again",
       expected="HTTP 200, no error (whether it hides the message again is not decided)")
def change_expired_handle(ctx: Ctx) -> Outcome:
    """Receive with 1 s, wait 1.6 s, change to 10 s through the expired handle.

    Passage: EVIDENCE "CMV, expired handle (standard queue, not yet received again) | HTTP 200, no error. Whether the
    message is hidden again is unknown: allow both"
    """
    q = ctx.queue(VisibilityTimeout=1)
    message, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 1.6)
    answer = ctx.change(q, message["ReceiptHandle"], 10)
    hidden_again = not ctx.receive_visible(q)
    return Outcome({"change": brief(answer), "hidden again": hidden_again}, answer.get("ok") is True)


@probe("6.delete-expired-handle", "DeleteMessage through an expired handle, not received again",
       expected="succeeds, and the message is deleted")
def delete_expired_handle(ctx: Ctx) -> Outcome:
    """Receive with 1 s, wait 1.6 s, delete through the expired handle, look for the message.

    Passage: EVIDENCE "DeleteMessage, expired handle (standard, not yet received again) | succeeds, and the message
    is deleted"
    """
    q = ctx.queue(VisibilityTimeout=1)
    message, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 1.6)
    answer = ctx.delete(q, message["ReceiptHandle"])
    left = bodies(ctx.receive_visible(q))
    return Outcome({"delete": brief(answer), "left": left}, answer.get("ok") is True and left == [])


@probe("6.delete-stale-handle", "DeleteMessage through a stale handle (received again since)",
       expected="the call succeeds (whether the message is deleted is not decided)")
def delete_stale_handle(ctx: Ctx) -> Outcome:
    """Receive (1 s), let it time out, receive again (10 s), delete through the first handle.

    Passage: EVIDENCE "the request will succeed, but the message might not be deleted"
    """
    q = ctx.queue(VisibilityTimeout=1)
    message, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 1.6)
    second = ctx.receive_one(q, vt=10)
    answer = ctx.delete(q, message["ReceiptHandle"])
    released = ctx.change(q, second["ReceiptHandle"], 0)
    left = bodies(ctx.receive_visible(q))
    observed = {"delete": brief(answer), "release through the new handle": brief(released), "left": left}
    return Outcome(observed, answer.get("ok") is True)


@probe("6.change-stale-handle", "ChangeMessageVisibility through a stale handle takes effect",
       expected="accepted, and ChangeMessageVisibility 0 through the old handle releases the message")
def change_stale_handle(ctx: Ctx) -> Outcome:
    """Receive (1 s), let it time out, receive again (10 s), change to 0 through the first handle.

    Passage: EVIDENCE "CMV, stale handle after another receive (standard) | accepted, and it takes effect (v = 0
    released the message)"
    """
    q = ctx.queue(VisibilityTimeout=1)
    message, t0 = ctx.sent_and_received(q)
    sleep_until(t0 + 1.6)
    ctx.receive_one(q, vt=10)
    answer = ctx.change(q, message["ReceiptHandle"], 0)
    again = bodies(ctx.receive_visible(q))
    return Outcome({"change": brief(answer), "receive": again}, answer.get("ok") is True and again == ["m"])


@probe("6.new-handle-each-receive", "each receive returns a new handle",
       expected="three receives (VisibilityTimeout 0) of one message give three different receipt handles")
def new_handle_each_receive(ctx: Ctx) -> Outcome:
    """Receive the same message three times with VisibilityTimeout=0.

    Passage: EVIDENCE "each receive of a message returns a new receipt handle, different from every earlier one for
    that message"
    """
    q = ctx.queue(VisibilityTimeout=30)
    ctx.send(q, "m")
    handles = [ctx.receive_one(q, vt=0)["ReceiptHandle"] for _ in range(3)]
    return Outcome({"distinct handles": len(set(handles)), "handles": handles}, len(set(handles)) == 3)


# ----------------------------------------------------------------------------------------------------------------
# 7-8: receive count, long polling


@probe("7.receive-count-and-first-timestamp", "receive count rises; first-receive timestamp stays",
       expected="ApproximateReceiveCount 1, 2, 3 over three receives (VisibilityTimeout 0, 1.2 s apart); "
                "ApproximateFirstReceiveTimestamp the same each time, within 1 s of the first receive, in ms")
def receive_count_and_first_timestamp(ctx: Ctx) -> Outcome:
    """Receive one message three times, 1.2 s apart, asking for all attributes.

    Passage: EVIDENCE "ApproximateReceiveCount rises on every receive, VisibilityTimeout=0 receives included;
    ApproximateFirstReceiveTimestamp is the first receive (ms)"
    """
    q = ctx.queue(VisibilityTimeout=30)
    ctx.send(q, "m")
    before = time.time() * 1000
    receipts = [ctx.receive_one(q, vt=0, attributes=True)]
    after = time.time() * 1000
    for _ in range(2):
        time.sleep(1.2)
        receipts.append(ctx.receive_one(q, vt=0, attributes=True))
    counts = [r.get("Attributes", {}).get("ApproximateReceiveCount") for r in receipts]
    firsts = [r.get("Attributes", {}).get("ApproximateFirstReceiveTimestamp") for r in receipts]
    observed = {"counts": counts, "first receive timestamps": firsts,
                "first receive between (ms)": [int(before), int(after)]}
    same = len(set(firsts)) == 1 and firsts[0] is not None and firsts[0].isdigit()
    in_window = same and before - 1000 <= int(firsts[0]) <= after + 1000
    return Outcome(observed, counts == ["1", "2", "3"] and in_window)


def send_later(ctx: Ctx, url: str, delay: float, errors: list) -> threading.Thread:
    def later() -> None:
        time.sleep(delay)
        try:
            ctx.send(url, "late")
        except Exception as e:  # noqa: BLE001 - reported with the probe
            errors.append(str(e))

    thread = threading.Thread(target=later)
    thread.start()
    return thread


@probe("8.long-poll-returns-on-arrival", "a long poll returns as soon as a message arrives",
       expected="WaitTimeSeconds 3 on an empty queue, a message sent 1.0 s in: returned with it in under 2.2 s")
def long_poll_returns_on_arrival(ctx: Ctx) -> Outcome:
    """Long-poll 3 s on an empty queue while another thread sends at +1.0 s.

    Passage: EVIDENCE "long polling (WaitTimeSeconds > 0) returns as soon as any message is available"
    """
    q = ctx.queue()
    errors: list = []
    thread = send_later(ctx, q, 1.0, errors)
    t0 = now()
    got = bodies(ctx.receive(q, wait=3))
    elapsed = round(now() - t0, 2)
    thread.join()
    observed = {"messages": got, "seconds": elapsed, "send errors": errors}
    return Outcome(observed, got == ["late"] and elapsed < 2.2)


@probe("8.long-poll-waits-out", "a long poll with nothing to return waits its wait",
       undecided="the documents say when a long poll returns early, not that it waits the full time otherwise")
def long_poll_waits_out(ctx: Ctx) -> Outcome:
    """Long-poll 2 s on a queue that stays empty; time it.

    Passage: EVIDENCE "long polling (WaitTimeSeconds > 0) returns as soon as any message is available"
    """
    q = ctx.queue()
    t0 = now()
    got = bodies(ctx.receive(q, wait=2))
    return Outcome({"messages": got, "seconds": round(now() - t0, 2)})


@probe("8.queue-wait-attribute", "ReceiveMessageWaitTimeSeconds applies when the receive names no wait",
       undecided="the documents do not describe the ReceiveMessageWaitTimeSeconds queue attribute")
def queue_wait_attribute(ctx: Ctx) -> Outcome:
    """Queue attribute ReceiveMessageWaitTimeSeconds 3; a receive naming no wait; a message sent 1.0 s in.

    Passage: EVIDENCE "long polling (WaitTimeSeconds > 0) returns as soon as any message is available"
    """
    q = ctx.queue(ReceiveMessageWaitTimeSeconds=3)
    errors: list = []
    thread = send_later(ctx, q, 1.0, errors)
    t0 = now()
    got = bodies(ctx.receive(q, wait=None))
    elapsed = round(now() - t0, 2)
    thread.join()
    return Outcome({"messages": got, "seconds": elapsed, "send errors": errors})


# ----------------------------------------------------------------------------------------------------------------
# 9: batches (ChangeMessageVisibilityBatch, and SendMessageBatch for the size limit)


def change_batch(ctx: Ctx, url: str, entries: list[dict]) -> dict[str, Any]:
    return attempt(ctx.sqs.change_message_visibility_batch, QueueUrl=url, Entries=entries)


def received_handle(ctx: Ctx) -> tuple[str, str]:
    q = ctx.queue(VisibilityTimeout=10)
    message, _ = ctx.sent_and_received(q)
    return q, message["ReceiptHandle"]


@probe("9.batch-empty", "an empty batch is refused", expected="error EmptyBatchRequest")
def batch_empty(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibilityBatch with no entries.

    Passage: EVIDENCE "empty: AWS.SimpleQueueService.EmptyBatchRequest"
    """
    q = ctx.queue()
    answer = change_batch(ctx, q, [])
    return Outcome(answer, is_error(answer, "EmptyBatchRequest"))


@probe("9.batch-eleven", "at most 10 entries per batch",
       expected='error TooManyEntriesInBatchRequest "Maximum number of entries per request are 10. You have sent 11."')
def batch_eleven(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibilityBatch with 11 entries (distinct ids, a valid handle).

    Passage: EVIDENCE "at most 10 entries: AWS.SimpleQueueService.TooManyEntriesInBatchRequest "Maximum number of
    entries per request are 10. You have sent N.""
    """
    q, handle = received_handle(ctx)
    entries = [{"Id": f"e{i}", "ReceiptHandle": handle, "VisibilityTimeout": 10} for i in range(11)]
    answer = change_batch(ctx, q, entries)
    text = "Maximum number of entries per request are 10. You have sent 11."
    return Outcome(answer, is_error(answer, "TooManyEntriesInBatchRequest"),
                   None if answer.get("ok") else answer.get("message") == text)


@probe("9.send-batch-eleven", "at most 10 entries per batch (SendMessageBatch)",
       expected='error TooManyEntriesInBatchRequest "Maximum number of entries per request are 10. You have sent 11."')
def send_batch_eleven(ctx: Ctx) -> Outcome:
    """SendMessageBatch with 11 entries.

    Passage: EVIDENCE "at most 10 entries: AWS.SimpleQueueService.TooManyEntriesInBatchRequest "Maximum number of
    entries per request are 10. You have sent N.""
    """
    q = ctx.queue()
    entries = [{"Id": f"e{i}", "MessageBody": f"m{i}"} for i in range(11)]
    answer = attempt(ctx.sqs.send_message_batch, QueueUrl=q, Entries=entries)
    text = "Maximum number of entries per request are 10. You have sent 11."
    return Outcome(answer, is_error(answer, "TooManyEntriesInBatchRequest"),
                   None if answer.get("ok") else answer.get("message") == text)


@probe("9.batch-duplicate-ids", "batch entry ids must be distinct", expected="error BatchEntryIdsNotDistinct")
def batch_duplicate_ids(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibilityBatch with two entries of the same id.

    Passage: EVIDENCE "duplicate ids: AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
    """
    q, handle = received_handle(ctx)
    entries = [{"Id": "same", "ReceiptHandle": handle, "VisibilityTimeout": 10}] * 2
    answer = change_batch(ctx, q, entries)
    return Outcome(answer, is_error(answer, "BatchEntryIdsNotDistinct"))


@probe("9.batch-invalid-id", "batch entry ids are [A-Za-z0-9_-]{1,80}", expected="error InvalidBatchEntryId")
def batch_invalid_id(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibilityBatch with the id "bad id!".

    Passage: EVIDENCE "ids [A-Za-z0-9_-]{1,80}: AWS.SimpleQueueService.InvalidBatchEntryId"
    """
    q, handle = received_handle(ctx)
    answer = change_batch(ctx, q, [{"Id": "bad id!", "ReceiptHandle": handle, "VisibilityTimeout": 10}])
    return Outcome(answer, is_error(answer, "InvalidBatchEntryId"))


@probe("9.batch-partial-failure", "per-entry failures are reported, the rest applied",
       expected='a malformed-handle entry before a good one: "bad" in Failed with SenderFault true, "good" in '
                'Successful, and the good entry (VisibilityTimeout 0) releases its message')
def batch_partial_failure(ctx: Ctx) -> Outcome:
    """ChangeMessageVisibilityBatch: entry "bad" (malformed handle) then entry "good" (release to 0).

    Passage: EVIDENCE "per-entry failures go in Failed[] with SenderFault: true"
    """
    q, handle = received_handle(ctx)
    entries = [{"Id": "bad", "ReceiptHandle": GARBAGE, "VisibilityTimeout": 0},
               {"Id": "good", "ReceiptHandle": handle, "VisibilityTimeout": 0}]
    answer = change_batch(ctx, q, entries)
    if not answer.get("ok"):
        return Outcome(brief(answer), False)
    failed = answer["response"].get("Failed", [])
    successful = [entry["Id"] for entry in answer["response"].get("Successful", [])]
    again = bodies(ctx.receive_visible(q))
    observed = {"Failed": failed, "Successful": successful, "released": again}
    good_failure = [(f.get("Id"), f.get("SenderFault")) for f in failed] == [("bad", True)]
    return Outcome(observed, good_failure and successful == ["good"] and again == ["m"])


# ----------------------------------------------------------------------------------------------------------------
# 10-11: purge, counts, delay


@probe("10.purge-removes-in-flight", "purge removes everything, in-flight messages too",
       expected="two messages, one in flight (1 s): after PurgeQueue none is receivable, also at +1.6 s")
def purge_removes_in_flight(ctx: Ctx) -> Outcome:
    """Send two, receive one with 1 s, purge; look at once and after the in-flight one's deadline.

    Passage: EVIDENCE "PurgeQueue also removes in-flight messages"
    """
    q = ctx.queue()
    ctx.send(q, "a")
    ctx.send(q, "b")
    ctx.receive_one(q, vt=1)
    t0 = now()
    purged = attempt(ctx.sqs.purge_queue, QueueUrl=q)
    at_once = bodies(ctx.receive_visible(q, max_n=10))
    sleep_until(t0 + 1.6)
    later = bodies(ctx.receive_visible(q, max_n=10))
    observed = {"purge": brief(purged), "at once": at_once, "at +1.6 s": later}
    return Outcome(observed, purged.get("ok") is True and at_once == [] and later == [])


@probe("10.purge-twice", "a second purge within 60 s",
       undecided="the documents do not say what a second purge within 60 s answers")
def purge_twice(ctx: Ctx) -> Outcome:
    """PurgeQueue twice in a row.

    Passage: EVIDENCE "PurgeQueue also removes in-flight messages"
    """
    q = ctx.queue()
    ctx.send(q, "a")
    first = attempt(ctx.sqs.purge_queue, QueueUrl=q)
    second = attempt(ctx.sqs.purge_queue, QueueUrl=q)
    return Outcome({"first": brief(first), "second": brief(second)})


@probe("11.queue-counts", "GetQueueAttributes counts: visible, not visible, delayed",
       undecided="the documents do not define the ApproximateNumberOfMessages* attributes")
def queue_counts(ctx: Ctx) -> Outcome:
    """One message in flight, one visible, one delayed 30 s; read the three counts.

    Passage: EVIDENCE "DelaySeconds 0..900 hides a message before its first receive; it is not in flight"
    """
    q = ctx.queue(VisibilityTimeout=30)
    ctx.sent_and_received(q, body="in flight")
    ctx.send(q, "visible")
    ctx.send(q, "delayed", DelaySeconds=30)
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
             "ApproximateNumberOfMessagesDelayed"]
    attributes = ctx.sqs.get_queue_attributes(QueueUrl=q, AttributeNames=names).get("Attributes", {})
    return Outcome({name: attributes.get(name) for name in names})


@probe("11.delay-hides-until-due", "a delayed message is hidden until its delay ends",
       expected="DelaySeconds 2: not receivable at once nor at +1.2 s, receivable at +2.8 s")
def delay_hides_until_due(ctx: Ctx) -> Outcome:
    """Send with DelaySeconds=2; receive at once, at +1.2 s and at +2.8 s.

    Passage: EVIDENCE "DelaySeconds 0..900 hides a message before its first receive"
    """
    q = ctx.queue()
    ctx.send(q, "m", DelaySeconds=2)
    t0 = now()
    at_once = bodies(ctx.receive(q))
    sleep_until(t0 + 1.2)
    mid = bodies(ctx.receive(q))
    sleep_until(t0 + 2.8)
    late = bodies(ctx.receive_visible(q))
    observed = {"at once": at_once, "at +1.2 s": mid, "at +2.8 s": late}
    return Outcome(observed, at_once == [] and mid == [] and late == ["m"])


# ----------------------------------------------------------------------------------------------------------------
# 12: FIFO


@probe("12.fifo-missing-group", "FIFO SendMessage without MessageGroupId",
       undecided="the documents do not say what a FIFO send without a group id answers")
def fifo_missing_group(ctx: Ctx) -> Outcome:
    """SendMessage to a FIFO queue with a deduplication id but no MessageGroupId.

    Passage: 002 "When you receive a message with a message group ID, no more messages for the same message group ID
    are returned"
    """
    q = ctx.queue(fifo=True)
    answer = attempt(ctx.sqs.send_message, QueueUrl=q, MessageBody="m", MessageDeduplicationId="d1")
    return Outcome(brief(answer))


@probe("12.fifo-group-lock", "a group is locked while a message of it is in flight",
       expected="two messages of one group; the first received (10 s): a second receive returns nothing")
def fifo_group_lock(ctx: Ctx) -> Outcome:
    """FIFO: send m1, m2 in group g; receive one; receive again (up to 10).

    Passage: 002 "When you receive a message with a message group ID, no more messages for the same message group ID
    are returned unless you delete the message or it becomes visible."
    """
    q = ctx.queue(fifo=True, VisibilityTimeout=10)
    ctx.send(q, "m1", group="g")
    ctx.send(q, "m2", group="g")
    first = bodies([ctx.receive_one(q)])
    second = bodies(ctx.receive(q, max_n=10))
    return Outcome({"first": first, "second": second}, first == ["m1"] and second == [])


@probe("12.fifo-order-after-timeout", "after a timeout the group comes back in order",
       expected="m1 received (1 s) and left to time out: at +1.6 s a receive of up to 10 starts with m1, in order")
def fifo_order_after_timeout(ctx: Ctx) -> Outcome:
    """FIFO: send m1, m2; receive m1 with 1 s; at +1.6 s receive up to 10.

    Passage: EVIDENCE "after a timeout the group comes back in its original order"
    """
    q = ctx.queue(fifo=True, VisibilityTimeout=10)
    ctx.send(q, "m1", group="g")
    ctx.send(q, "m2", group="g")
    first = bodies([ctx.receive_one(q, vt=1)])
    t0 = now()
    sleep_until(t0 + 1.6)
    again = bodies(ctx.receive_visible(q, max_n=10))
    in_order = bool(again) and again == ["m1", "m2"][:len(again)]
    return Outcome({"first": first, "at +1.6 s": again}, first == ["m1"] and in_order)


@probe("12.fifo-delete-expired-handle", "FIFO delete after the deadline is refused",
       expected='error InvalidParameterValue "... Reason: The receipt handle has expired."')
def fifo_delete_expired_handle(ctx: Ctx) -> Outcome:
    """FIFO: receive with 1 s, delete at +1.6 s.

    Passage: EVIDENCE "DeleteMessage, FIFO, after the deadline | InvalidParameterValue "… Reason: The receipt handle
    has expired.""
    """
    q = ctx.queue(fifo=True, VisibilityTimeout=10)
    ctx.send(q, "m1", group="g")
    message = ctx.receive_one(q, vt=1)
    t0 = now()
    sleep_until(t0 + 1.6)
    answer = ctx.delete(q, message["ReceiptHandle"])
    text = None if answer.get("ok") else answer.get("message", "").endswith("Reason: The receipt handle has expired.")
    return Outcome(brief(answer), is_error(answer, PARAM), text)


@probe("12.fifo-delete-in-extended-deadline", "FIFO delete inside a deadline that a change extended",
       expected="received with 1 s, changed to 3 s at once: DeleteMessage at +1.6 s succeeds and the message is gone")
def fifo_delete_in_extended_deadline(ctx: Ctx) -> Outcome:
    """FIFO: receive with 1 s, extend to 3 s, delete at +1.6 s.

    Passage: EVIDENCE "inside a deadline that CMV extended, the delete succeeds"
    """
    q = ctx.queue(fifo=True, VisibilityTimeout=10)
    ctx.send(q, "m1", group="g")
    message = ctx.receive_one(q, vt=1)
    t0 = now()
    changed = ctx.change(q, message["ReceiptHandle"], 3)
    sleep_until(t0 + 1.6)
    answer = ctx.delete(q, message["ReceiptHandle"])
    sleep_until(t0 + 3.6)
    left = bodies(ctx.receive_visible(q))
    observed = {"change": brief(changed), "delete": brief(answer), "left at +3.6 s": left}
    return Outcome(observed, changed.get("ok") is True and answer.get("ok") is True and left == [])


@probe("12.fifo-dedup", "a resend with the same deduplication id is not a duplicate",
       expected="the same body sent twice with one MessageDeduplicationId: one message is delivered")
def fifo_dedup(ctx: Ctx) -> Outcome:
    """FIFO: send twice with MessageDeduplicationId d1, receive up to 10.

    Passage: 002 "it can retry sending as many times as necessary, using the same message deduplication ID. Assuming
    that the producer receives at least one acknowledgement before the deduplication interval expires, multiple
    retries neither affect the ordering of messages nor introduce duplicates."
    """
    q = ctx.queue(fifo=True, VisibilityTimeout=10)
    ids = [ctx.send(q, "m1", group="g", dedup="d1") for _ in range(2)]
    got = bodies(ctx.receive_visible(q, max_n=10))
    return Outcome({"message ids": ids, "received": got}, got == ["m1"])


# ----------------------------------------------------------------------------------------------------------------
# 13: redrive


@probe("13.redrive-max-receive-1", "maxReceiveCount 1 moves the message on the next receive",
       expected="received once (released with VisibilityTimeout 0); the next receive returns nothing, the dead-letter "
                "queue has the message")
def redrive_max_receive_1(ctx: Ctx) -> Outcome:
    """Source queue with RedrivePolicy maxReceiveCount 1: receive with 0, receive again, then read the DLQ.

    Passage: EVIDENCE "when the receive count would exceed maxReceiveCount, the message moves to the dead-letter
    queue instead of being returned"
    """
    dlq = ctx.queue("dlq")
    arn = ctx.attribute(dlq, "QueueArn")
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": "1"})
    q = ctx.queue("src", RedrivePolicy=policy)
    ctx.sent_and_received(q, vt=0)
    second = bodies(ctx.receive_visible(q))
    dead = bodies(ctx.receive(dlq, wait=1))
    return Outcome({"second receive": second, "dead-letter queue": dead}, second == [] and dead == ["m"])


# ----------------------------------------------------------------------------------------------------------------
# Running


def client(url: str):
    config = Config(parameter_validation=False, retries={"total_max_attempts": 1}, connect_timeout=5,
                    read_timeout=30)
    return boto3.client("sqs", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=config)


def verdict(p: Probe, conforms: bool | None) -> str:
    if p.expected is None or conforms is None:
        return "undecided"
    return "conforms" if conforms else "diverges"


def run_probe(sqs, p: Probe) -> dict[str, Any]:
    ctx = Ctx(sqs, p.id)
    started = now()
    try:
        outcome = p.run(ctx)
    except SetupFailed as e:
        outcome = Outcome({"setup failed": str(e)}, False)
    except ClientError as e:
        outcome = Outcome({"unexpected error": error_of(e)}, False)
    except Exception as e:  # noqa: BLE001 - a probe that breaks is recorded, not fatal
        outcome = Outcome({"exception": f"{type(e).__name__}: {e}"}, False)
    finally:
        ctx.cleanup()
    record = {"id": p.id, "rule": p.rule, "passage": p.passage, "expected": p.expected, "observed": outcome.observed,
              "verdict": verdict(p, outcome.conforms)}
    if p.why_undecided:
        record["why_undecided"] = p.why_undecided
    if outcome.text_conforms is not None and p.expected is not None:
        record["text_verdict"] = "conforms" if outcome.text_conforms else "diverges"
    record["seconds"] = round(now() - started, 2)
    return record


def summary_line(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"{result['emulator']}: not run ({result['error']})"
    verdicts = [r["verdict"] for r in result["probes"]]
    texts = sum(r.get("text_verdict") == "diverges" for r in result["probes"])
    return (f"{result['emulator']} {result['version']}: {len(verdicts)} probes, {verdicts.count('conforms')} conform, "
            f"{verdicts.count('diverges')} diverge, {verdicts.count('undecided')} undecided; "
            f"{texts} error texts diverge")


def run_emulator(name: str, out: Path) -> dict[str, Any]:
    emu = EMULATORS[name]
    result: dict[str, Any] = {"emulator": name, "version": emu.version,
                              "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
    try:
        result["version"] = installed_version(emu)
        server = start(emu, home=ROOT / EMULATORS_HOME, say=lambda message: print(message, flush=True))
    except Exception as e:  # noqa: BLE001 - an emulator that cannot start is recorded
        result["error"] = f"{type(e).__name__}: {e}"
    else:
        try:
            sqs = client(server.url)
            result["probes"] = []
            for p in PROBES:
                result["probes"].append(run_probe(sqs, p))
                print(f"  {p.id}: {result['probes'][-1]['verdict']}", file=sys.stderr, flush=True)
        finally:
            server.stop()
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return result


def normalise(text: str) -> str:
    """Markdown out of the way (links, escapes, code quotes), whitespace collapsed, for comparing quotes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("\\", "").replace("`", "").replace("*", "")
    return " ".join(text.split())


def check_passages(shared: Path) -> int:
    """Each quote's pieces (joined by "...") are found in its document. Returns how many are not."""
    misses = 0
    for p in PROBES:
        passage = p.passage
        document = normalise((shared / passage["file"]).read_text())
        for piece in (normalise(part).strip(" .\"'") for part in passage["quote"].split("...")):
            if piece not in document:
                print(f"{p.id}: not in {passage['file']}: {piece!r}")
                misses += 1
    return misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emulator", action="append", choices=sorted(EMULATORS), default=[])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--check-passages", type=Path, metavar="SHARED",
                        help="check every quoted passage against the documents under SHARED, then stop")
    args = parser.parse_args(argv)
    if args.check_passages:
        misses = check_passages(args.check_passages)
        print(f"{len(PROBES)} probes, {misses} passages not found")
        return 1 if misses else 0
    if not args.emulator:
        parser.error("name at least one --emulator")
    for name in args.emulator:
        print(summary_line(run_emulator(name, args.out)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
