"""Request parameters and queue attributes, checked and refused as SQS spells it (model/errors.py)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from sqs_conformance.model import errors
from sqs_conformance.model.values import Error, Raw

CEILING = 43200  # seconds a receipt may stay hidden after its receive, and the VisibilityTimeout maximum
ACCOUNT = "000000000000"
REGION = "us-east-1"

QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")
BATCH_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
# The characters SQS accepts in a body (its documented set).
_BAD_BODY_CHAR = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# name: (lowest, highest, default)
RANGES: dict[str, tuple[int, int, int]] = {
    "VisibilityTimeout": (0, CEILING, 30),
    "DelaySeconds": (0, 900, 0),
    "ReceiveMessageWaitTimeSeconds": (0, 20, 0),
    "MaximumMessageSize": (1024, 262144, 262144),
    # CHOICE: messages older than the retention period are dropped, as SQS does (default four days); the suite's
    # cases rarely advance that far.
    "MessageRetentionPeriod": (60, 1209600, 345600),
}
DEFAULTS = {name: str(default) for name, (_, _, default) in RANGES.items()}


def arn(queue: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue}"


def as_int(raw: Raw) -> int | None:
    """An integer as SQS reads one off the wire: an int or a string of digits.
    CHOICE: booleans, floats (even 30.0) and anything else are not integers, and are refused as out of range."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and re.fullmatch(r"[+-]?\d{1,12}", raw.strip()):
        return int(raw)
    return None


def in_range(raw: Raw, low: int, high: int) -> int | None:
    value = as_int(raw)
    return value if value is not None and low <= value <= high else None


@dataclass(frozen=True)
class Redrive:
    target: str  # the dead-letter queue's name
    max_receive_count: int

    def encode(self) -> str:
        return json.dumps({"deadLetterTargetArn": arn(self.target), "maxReceiveCount": self.max_receive_count},
                          separators=(",", ":"))


def parse_redrive(raw: Raw) -> Redrive | None:
    """A RedrivePolicy as a JSON map (or a dict), or None if it is not one."""
    try:
        policy = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    if not isinstance(policy, dict):
        return None
    target, count = policy.get("deadLetterTargetArn"), in_range(policy.get("maxReceiveCount"), 1, 1000)
    prefix = f"arn:aws:sqs:{REGION}:{ACCOUNT}:"
    if not isinstance(target, str) or not target.startswith(prefix) or count is None:
        return None
    return Redrive(target[len(prefix):], count)


def redrive_error(raw: Raw, reason: str) -> Error:
    # CHOICE: a bad RedrivePolicy is InvalidParameterValue, as AWS answers it, not InvalidAttributeValue.
    return Error(errors.INVALID_PARAMETER_VALUE,
                 f"Value {raw} for parameter RedrivePolicy is invalid. Reason: {reason}.")


def check_attributes(raw: dict[str, Raw]) -> dict[str, str] | Error:
    """The attributes as they will be stored (strings), or the first refusal in the order given.
    RedrivePolicy is only parsed here: whether its target exists is the caller's to check."""
    if not isinstance(raw, dict):
        return Error(errors.INVALID_ATTRIBUTE_VALUE, "Attributes must be a map.")
    out: dict[str, str] = {}
    for name, value in raw.items():
        if name in RANGES:
            low, high, _ = RANGES[name]
            number = in_range(value, low, high)
            if number is None:
                return errors.attribute_out_of_range(name, value).instantiate()
            out[name] = str(number)
        elif name == "RedrivePolicy":
            if value in ("", None):
                out[name] = ""  # CHOICE: an empty policy removes redrive
                continue
            policy = parse_redrive(value)
            if policy is None:
                return redrive_error(value, "Redrive policy is not a valid JSON map with deadLetterTargetArn and "
                                            "maxReceiveCount between 1 and 1000")
            out[name] = policy.encode()
        elif name == "FifoQueue" and str(value).lower() == "false":
            continue  # a standard queue saying so
        else:
            # CHOICE: attributes this design does not keep (policies, encryption, FIFO-only ones) are unknown.
            return Error("InvalidAttributeName", f"Unknown Attribute {name}.")
    return out


def check_body(body: Raw, max_size: int) -> Error | None:
    # CHOICE: where the evidence is silent, a body is refused as SQS documents: missing, bad characters, too long.
    if not isinstance(body, str) or body == "":
        return Error(errors.MISSING_PARAMETER, "The request must contain the parameter MessageBody.")
    bad = _BAD_BODY_CHAR.search(body)
    if bad:
        return Error("InvalidMessageContents", f"Invalid binary character '#x{ord(bad.group()):X}' was found in the "
                     "message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | "
                     "#xE000 to #xFFFD | #x10000 to #x10FFFF")
    if len(body.encode("utf-8", "surrogatepass")) > max_size:
        return Error(errors.INVALID_PARAMETER_VALUE,
                     f"One or more parameters are invalid. Reason: Message must be shorter than {max_size} bytes.")
    return None


def check_batch(entries: tuple[object, ...], kind: str) -> Error | None:
    """The batch's own shape, checked before any entry. CHOICE: in this order: empty, too many, a bad id, a
    repeated id; the empty batch's text names the operation's entry type."""
    if not entries:
        return Error(errors.EMPTY_BATCH, f"There should be at least one {kind}RequestEntry in the request.")
    if len(entries) > 10:
        return errors.too_many_entries(len(entries)).instantiate()
    ids = [getattr(entry, "id", None) for entry in entries]
    if any(not isinstance(i, str) or not BATCH_ENTRY_ID.fullmatch(i) for i in ids):
        return errors.invalid_batch_entry_id().instantiate()
    if len(set(ids)) != len(ids):
        return errors.batch_ids_not_distinct().instantiate()
    return None
