"""How a divergence is shown: the rule and its source, a timeline, and a boto3 script anyone can run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqs_conformance.adapters.base import Unsupported
from sqs_conformance.adapters.sqs_calls import CLIENT_OPTIONS, Handle, QueueName, QueueUrl, RedrivePolicy, sqs_call
from sqs_conformance.conformance.cases import FoundCase
from sqs_conformance.conformance.runner import Finding
from sqs_conformance.conformance.session import Step
from sqs_conformance.model import Divergence, rule
from sqs_conformance.model.rules import rules_for
from sqs_conformance.model.words import operation_words
from sqs_conformance.model.outcomes import (
    AnyBatchOk, AttributeWithin, ReceiveInOrder, ReceiveRepeated, ReceiveSome, ReceiveWithout,
)
from sqs_conformance.model.values import (
    BatchOk, ChangeOk, CreateQueue, Error, ErrorSpec, Ok, ReceiveMessage, ReceiveOk, SendMessage, SendOk,
)


def describe_finding(finding: Finding) -> str:
    r = rule(finding.rule)
    d = finding.divergence
    lines = [
        f"{r.id}: {r.statement}",
        f"  source:   {r.source}",
        f"  expected: {d.expected}",
        f"  observed: {d.observed}",
        f"  minimal case: {len(finding.steps)} steps" + (
            f" (rules already reported also diverged in it: {', '.join(finding.tolerated)})"
            if finding.tolerated else ""),
        "",
        timeline(finding),
    ]
    return "\n".join(lines)


# --- timeline ----------------------------------------------------------------------------------------------------

def timeline(finding: Finding) -> str:
    """Per step: the time, what was done, what the model expects of the messages involved, what came back."""
    involved = list(finding.divergence.message_ids) or sorted(
        {mid for step in finding.steps for mid in step.views})[:3]
    queues = {getattr(step.op, "queue", None) for step in finding.steps}
    named = len(queues - {None}) > 1  # several queues: each row says which
    said = [operation_words(step.op) for step in finding.steps]
    width = max([44, *(len(words) for words in said)]) + (8 if named else 0)
    rows = [f"{'t (s)':>10}  {'operation':{width}s}  " + "  ".join(f"{m:>24s}" for m in involved) + "  answer"]
    for step, words in zip(finding.steps, said, strict=True):
        returned = _returned_ids(step)
        cells = []
        for message_id in involved:
            windows = step.views.get(message_id)
            cell = _window(windows, step.complete)
            if message_id in returned:
                cell = "RETURNED; " + cell
            cells.append(f"{cell:>24s}")
        marker = "  <-- diverges" if step.divergences else ""
        operation = f"{step.op.queue}: {words}" if named and hasattr(step.op, "queue") else words
        rows.append(f"{step.invoke:10.3f}  {operation:{width}s}  " + "  ".join(cells) + "  "
                    + _answer(step) + marker)
    return "\n".join(rows)


def _window(windows: list | None, now: float) -> str:
    if not windows:
        return "gone"
    parts = []
    for hidden, visible_at in windows:
        if hidden == "none" or visible_at <= now:
            parts.append("visible")
        else:
            parts.append(f"{hidden} until {visible_at:.3f}")
    return " or ".join(dict.fromkeys(parts))


def _returned_ids(step: Step) -> set[str]:
    response = step.verdict.outcome.response
    if not isinstance(response, ReceiveOk):
        return set()
    return {m.message_id for m in response.messages if m.message_id is not None}


def _answer(step: Step) -> str:
    response = step.response
    if isinstance(response, Error):
        return f"{response.code}"
    if isinstance(response, ReceiveOk):
        return f"{len(response.messages)} message(s)"
    return type(response).__name__


# --- the boto3 script ------------------------------------------------------------------------------------------

_SCRIPT_HEAD = '''"""Minimal case for {rule_id} ({profile}), found by sqs-conformance against {target}.

{statement}
Source: {source}
Expected: {expected}
Observed: {observed}

Run it against any SQS endpoint:  python {filename} [ENDPOINT_URL]
With no endpoint it uses your AWS configuration (real AWS: it creates and deletes its own queues{waits}); with
one, and no AWS credentials configured, dummy ones, as an emulator takes any.
It ends by saying whether the divergence reproduced: exit 1 if it did, 0 if not (3: it cannot tell). {judged}
"""
import json
import os
import re
import sys
import time
import uuid

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint = sys.argv[1] if len(sys.argv) > 1 else None
session = boto3.Session()
dummy = {{"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}}
sqs = session.client("sqs", endpoint_url=endpoint, region_name=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
                     config=Config(**{client_options!r}),
                     **(dummy if endpoint and session.get_credentials() is None else {{}}))
prefix = "conformance-case-" + uuid.uuid4().hex[:8] + "-"
queues, arns, handles, sent = {{}}, {{}}, {{}}, {{}}
ENTRY = {entry!r}  # the batch entry whose answer diverged, or None: the whole answer
OBSERVED = {observed_kind!r}  # what it answered where the divergence was found
EXPECTED = {expected_kind!r}  # what the model permits there
# The answers the model permits there, as `fits` reads them; None where they cannot be put so (then the script
# tells only whether the answer is of the kind found)
PERMITTED = {permitted!r}


def call(label, method, **kwargs):
    try:
        reply = getattr(sqs, method)(**kwargs)
        reply.pop("ResponseMetadata", None)
    except ClientError as error:
        reply = {{"Error": error.response["Error"]}}
    print(label, json.dumps(reply, default=str))
    return reply


def made(queue, reply):
    """A queue the case made: its URL and ARN remembered (a refused creation made none)."""
    if "QueueUrl" in reply:
        queues[queue] = reply["QueueUrl"]
        arns[queue] = sqs.get_queue_attributes(QueueUrl=reply["QueueUrl"],
                                               AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return reply


def remember(reply, handle_by_body):
    for message in reply.get("Messages", []):
        if message["Body"] in handle_by_body:
            handles[handle_by_body[message["Body"]]] = message["ReceiptHandle"]
    return reply


def remember_sent(reply, message_id):
    if "MessageId" in reply:
        sent[message_id] = reply["MessageId"]
    return reply


def part(reply):
    """The answer the divergence is in: the whole reply, or ENTRY's (its failure, or {{}} if it succeeded)."""
    if ENTRY is None or "Error" in reply:
        return reply
    failed = [f for f in reply.get("Failed", []) if f["Id"] == ENTRY]
    return {{"Error": failed[0]}} if failed else {{}}


def kind(reply, call):
    """An answer in the words OBSERVED uses: its error code, the bodies a receive returned, a batch's failures."""
    reply = part(reply)
    if "Error" in reply:
        return "error " + reply["Error"].get("Code", "").removeprefix("AWS.SimpleQueueService.")
    if call == "receive_message":
        return "messages " + ",".join(m["Body"] for m in reply.get("Messages", []))
    if call.endswith("_batch") and ENTRY is None:
        return "failed " + ",".join(sorted(f["Id"] + ":" + f["Code"] for f in reply.get("Failed", [])))
    return "ok"


def fits(answer, reply, call):
    """Whether the reply is the permitted answer `answer`: ("error", code, pattern of its text or None); ("ok",)
    any success; ("failed", the batch's failures or None for any); ("without", bodies it must not return);
    ("count", least, most or None); ("in order", group, the orders its bodies may come in); ("again", the
    [body, handle] pairs of the receive it repeats); ("attribute", name, low, high, or the values it may have);
    ("sent", the earlier send whose message it is, or None for a new one)."""
    what, *args = answer
    reply = part(reply)
    if what == "error":
        error = reply.get("Error")
        said = " ".join((error or {{}}).get("Message", "").split())
        return kind(reply, call) == "error " + args[0] and (args[1] is None or re.fullmatch(args[1], said, re.S))
    if "Error" in reply:
        return False
    messages = reply.get("Messages", [])
    bodies = [m["Body"] for m in messages]
    if what == "failed":
        return args[0] is None or kind(reply, call) == "failed " + ",".join(args[0])
    if what == "without":
        return not set(bodies) & set(args[0])
    if what == "count":
        return args[0] <= len(bodies) and (args[1] is None or len(bodies) <= args[1])
    if what == "in order":
        group = [m["Body"] for m in messages if m.get("Attributes", {{}}).get("MessageGroupId") == args[0]]
        return any(list(order[:len(group)]) == group for order in args[1])
    if what == "again":
        return [[m["Body"], m["ReceiptHandle"]] for m in messages] == [[b, handles.get(h)] for b, h in args[0]]
    if what == "sent":
        return reply.get("MessageId") == sent.get(args[0]) if args[0] else reply.get("MessageId") not in sent.values()
    if what == "attribute":
        value = reply.get("Attributes", {{}}).get(args[0])
        return value in args[3] if args[3] else value is not None and args[1] <= int(value) <= args[2]
    return what == "ok"


try:
'''

_SCRIPT_TAIL = '''    shown = kind(last, LAST_CALL)
    said = part(last).get("Error", {}).get("Message")
    shown_in_full = shown + (f" {said!r}" if said is not None else "")
finally:
    for url in queues.values():
        sqs.delete_queue(QueueUrl=url)
if PERMITTED is not None and not any(fits(answer, last, LAST_CALL) for answer in PERMITTED):
    print(f"reproduced: the diverging step answered {shown_in_full}, which the model does not permit ({EXPECTED})")
    sys.exit(1)
if PERMITTED is None and shown == OBSERVED:
    print(f"cannot tell: the diverging step answered {shown!r} again, and the divergence is in what this script does "
          f"not read (the model: {EXPECTED!r}); `sqs-conformance confirm` judges the whole answer")
    sys.exit(3)
print(f"not reproduced: the diverging step answered {shown_in_full} (found: {OBSERVED!r}; the model: {EXPECTED!r})")
'''


def boto3_script(finding: Finding, profile: str, target: str, filename: str = "case.py") -> str:
    d = finding.divergence
    r = rule(finding.rule)
    total_wait = sum(step.advanced for step in finding.steps)
    waits = f"; it waits {total_wait:,.0f} s in all" if total_wait >= 1 else ""
    last = finding.steps[-1]
    checks = permitted_checks(d)
    judged = ("It checks what diverged, an error's text included, against what the model permits there." if checks
              else "It tells only whether the answer is of the kind found (the divergence is in details it does not "
              "read, or in when the answer came): `sqs-conformance confirm` judges the whole answer.")
    head = _SCRIPT_HEAD.format(rule_id=r.id, profile=profile, target=target, statement=r.statement,
                               source=r.source, expected=d.expected, observed=d.observed, filename=filename,
                               waits=waits, observed_kind=answer_words(last.response, d.entry),
                               expected_kind=d.expected, entry=d.entry,
                               client_options=CLIENT_OPTIONS, permitted=checks, judged=judged)
    body = []
    for step in finding.steps:
        if step.advanced:
            body.append(f"    time.sleep({step.advanced!r})")
        body.extend("    " + line for line in _call_lines(step, remembers=step is not last))
    body[-1] = "    last = " + body[-1].strip()  # the diverging step's reply
    try:
        last_call = sqs_call(last.op).method
    except Unsupported:
        last_call = "create_queue"
    body.append(f"    LAST_CALL = {last_call!r}")
    return head + "\n".join(body) + "\n" + _SCRIPT_TAIL


def permitted_checks(divergence: Divergence) -> list[tuple] | None:
    """The answers the model permitted at the diverging step, as a script's `fits` reads them. None where the model
    did not list them, or where the script's reading would say less than the model checked (a change's new
    deadline, a receive count)."""
    checks: list[tuple] = []
    for answer in divergence.permitted:
        if isinstance(answer, ErrorSpec):
            checks.append(("error", answer.code, answer.pattern))
        elif isinstance(answer, AnyBatchOk):
            checks.append(("failed", None))
        elif isinstance(answer, BatchOk) and divergence.entry is None:
            checks.append(("failed", sorted(f"{f.id}:{f.code}" for f in answer.failed)))
        elif answer == Ok() or answer == ChangeOk() or isinstance(answer, BatchOk):
            checks.append(("ok",))
        elif isinstance(answer, ReceiveWithout):
            checks.append(("without", list(answer.bodies)))
        elif isinstance(answer, ReceiveSome):
            checks.append(("count", answer.least, answer.most))
        elif isinstance(answer, ReceiveInOrder):
            checks.append(("in order", answer.group, [list(order) for order in answer.orders]))
        elif isinstance(answer, ReceiveRepeated):
            checks.append(("again", [list(pair) for pair in answer.pairs]))
        elif isinstance(answer, SendOk):
            checks.append(("sent", answer.message_id))
        elif isinstance(answer, AttributeWithin):
            checks.append(("attribute", answer.name, answer.low, answer.high, list(answer.values)))
        else:
            return None
    return checks or None


def answer_words(response, entry: str | None = None) -> str:
    """A response in the words a RULE.py script reads a boto3 reply in (its `kind`): of the whole, or of one batch
    entry's answer."""
    if entry is not None and isinstance(response, BatchOk):
        failed = [f.code for f in response.failed if f.id == entry]
        return f"error {failed[0]}" if failed else "ok"
    if isinstance(response, Error):
        return f"error {response.code}"
    if isinstance(response, ReceiveOk):
        return "messages " + ",".join(m.body for m in response.messages)
    if isinstance(response, BatchOk):
        return "failed " + ",".join(sorted(f"{f.id}:{f.code}" for f in response.failed))
    return "ok"


def _code(value: Any) -> str:
    """A parameter of a call as the script writes it: the markers as the script finds them (its queues, its
    dead-letter queues' ARNs, the handles its receives remembered), everything else as the literal sent."""
    if isinstance(value, QueueName):
        return f"prefix + {value.suffix!r}"
    if isinstance(value, QueueUrl):
        return f"queues[{value.queue!r}]"
    if isinstance(value, Handle):
        return f"handles.get({value.value!r}, {value.value!r})"
    if isinstance(value, RedrivePolicy):
        return (f'json.dumps({{"deadLetterTargetArn": arns[{value.dead_letter_queue!r}], '
                f'"maxReceiveCount": {value.max_receive_count!r}}})')
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_code(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_code(item) for item in value) + "]"
    return repr(value)


def _call_lines(step: Step, remembers: bool = True) -> list[str]:
    """The step as the script performs it: the very call the adapter makes (adapters/sqs_calls.py); unless it is
    the diverging step, remembering the handles and message ids later steps are judged by."""
    op, label = step.op, f"step {step.index}:"
    try:
        call = sqs_call(op)
    except Unsupported:
        return [f"# {type(op).__name__} has no SQS API call"]
    params = ", ".join(f"{key}={_code(value)}" for key, value in call.params.items())
    line = f"call({label!r}, {call.method!r}, {params})"
    if isinstance(op, CreateQueue):  # remembered also where it diverges: a queue made is deleted at the end
        return [f"made({op.queue!r}, {line})"]
    if not remembers:
        return [line]
    if isinstance(op, SendMessage) and isinstance(step.verdict.outcome.response, SendOk):
        return [f"remember_sent({line}, {step.verdict.outcome.response.message_id!r})"]
    if isinstance(op, ReceiveMessage):
        response = step.verdict.outcome.response
        by_body = {m.body: m.receipt_handle for m in response.messages} if isinstance(response, ReceiveOk) else {}
        return [f"remember({line}, {by_body!r})"]
    return [line]


def summary_json(result) -> str:
    """The run's outcome as JSON (findings, tallies): for CI systems and the reports pipeline."""
    return json.dumps({
        "run_id": result.run_id, "target": result.target, "target_version": result.target_version,
        "profile": result.profile, "conforms": result.conforms, "cases": result.cases, "steps": result.steps,
        "rounds": result.rounds, "errors": result.errors,
        "findings": {rid: {"expected": f.divergence.expected, "observed": f.divergence.observed,
                           "steps": len(f.steps), "tolerated": f.tolerated} for rid, f in result.findings.items()},
        "rules": {rid: vars(t) for rid, t in sorted(result.tallies.rules.items())},
        "never_decisive": result.gaps(),
        "verdicts": {r.id: result.verdict(r.id).value for r in rules_for(result.profile)},
        "time": vars(result.spent),
    }, indent=2)


def write_findings(result, out_dir: Path) -> Path | None:
    """Per diverging rule: its description, a boto3 script and its case for `confirm`; and the run's summary.
    Returns the folder of the findings, None (and no folder) where there are none."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"summary-{result.run_id}.json").write_text(summary_json(result) + "\n")
    if not result.findings:
        return None
    findings = out_dir / "findings" / result.run_id
    findings.mkdir(parents=True, exist_ok=True)
    where = f"{result.target} {result.target_version}"
    for rule_id, finding in result.findings.items():
        (findings / f"{rule_id}.txt").write_text(describe_finding(finding) + "\n")
        (findings / f"{rule_id}.py").write_text(boto3_script(finding, result.profile, where, f"{rule_id}.py"))
        (findings / f"{rule_id}.json").write_text(case_json(finding, result.profile, where, result.early_not_rare)
                                                  + "\n")
    return findings


def case_json(finding: Finding, profile: str, target: str, early_not_rare: list[str] | None = None) -> str:
    """A minimal case as data, in model space: what `confirm` replays against another target, with the rules whose
    early returns its run had found not rare (one early return in the case then diverges, as it did there)."""
    steps = [(s.advanced, s.op) for s in finding.steps]
    return FoundCase(finding.rule, profile, target, steps, list(early_not_rare or [])).to_json()