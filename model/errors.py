"""Every error the model can expect, in one place: code, text pattern (where the evidence records it), status.

Codes are in the normalised spelling adapters produce ('AWS.SimpleQueueService.X' is 'X').

Handles inside texts are matched loosely (`.+`): the target's handle is not the model's.
"""

from __future__ import annotations

import functools
import re
from enum import Enum

from sqs_conformance.model.values import ErrorSpec

INVALID_PARAMETER_VALUE = "InvalidParameterValue"
INVALID_ATTRIBUTE_VALUE = "InvalidAttributeValue"
RECEIPT_HANDLE_IS_INVALID = "ReceiptHandleIsInvalid"
TOO_MANY_ENTRIES = "TooManyEntriesInBatchRequest"
EMPTY_BATCH = "EmptyBatchRequest"
INVALID_BATCH_ENTRY_ID = "InvalidBatchEntryId"
BATCH_IDS_NOT_DISTINCT = "BatchEntryIdsNotDistinct"
MISSING_PARAMETER = "MissingParameter"
OVER_LIMIT = "OverLimit"
PURGE_IN_PROGRESS = "PurgeQueueInProgress"
SMQ_MESSAGE_NOT_EXIST = "MessageNotExist"
SMQ_INVALID_ARGUMENT = "InvalidArgument"

_DOT = r"\.?"  # AWS texts were seen with and without a trailing period


def _invalid_value(parameter: str, value: object, reason: str | None) -> ErrorSpec:
    shown = re.escape(str(value))
    if reason is None:
        return ErrorSpec(INVALID_PARAMETER_VALUE, None, 400, f"Value {value} for parameter {parameter} is invalid.")
    return ErrorSpec(
        INVALID_PARAMETER_VALUE,
        rf"Value {shown} for parameter {parameter} is invalid\. Reason: {re.escape(reason.rstrip('.'))}{_DOT}",
        400,
        f"Value {value} for parameter {parameter} is invalid. Reason: {reason}",
    )


def out_of_range(parameter: str, value: object, dialect: str) -> ErrorSpec:
    """A request parameter outside its range where the evidence records no text (VIS-RANGE, DELAY-HIDES)."""
    if dialect == "smq":
        return ErrorSpec(SMQ_INVALID_ARGUMENT, None, 400, f"{parameter} is out of range")
    return _invalid_value(parameter, value, None)


def attribute_out_of_range(name: str, value: object) -> ErrorSpec:
    return ErrorSpec(INVALID_ATTRIBUTE_VALUE, None, 400, f"Invalid value for the parameter {name}.")


_MAX_MESSAGES_RANGE = "Must be between 1 and 10, if provided."
_WAIT_RANGE = "Must be >= 0 and <= 20, if provided."


def max_messages_out_of_range(value: object) -> ErrorSpec:
    return _invalid_value("MaxNumberOfMessages", value, _MAX_MESSAGES_RANGE)


def wait_out_of_range(value: object) -> ErrorSpec:
    return _invalid_value("WaitTimeSeconds", value, _WAIT_RANGE)


_BEYOND_CEILING = "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]."


def beyond_ceiling(value: object) -> ErrorSpec:
    return _invalid_value("VisibilityTimeout", value, _BEYOND_CEILING)


_NOT_AVAILABLE = "Message does not exist or is not available for visibility timeout change"
_EXPIRED = "The receipt handle has expired"


@functools.cache  # one immutable spec: a history refuses thousands of handles
def not_available_for_change() -> ErrorSpec:
    return ErrorSpec(
        INVALID_PARAMETER_VALUE,
        rf"Value .+ for parameter ReceiptHandle is invalid\. Reason: {re.escape(_NOT_AVAILABLE)}{_DOT}",
        400,
        f"Value <handle> for parameter ReceiptHandle is invalid. Reason: {_NOT_AVAILABLE}.",
    )


@functools.cache
def handle_expired() -> ErrorSpec:
    return ErrorSpec(
        INVALID_PARAMETER_VALUE,
        rf"(Value .+ for parameter ReceiptHandle is invalid\. Reason: )?{re.escape(_EXPIRED)}{_DOT}",
        400,
        f"Value <handle> for parameter ReceiptHandle is invalid. Reason: {_EXPIRED}.",
    )


def malformed_handle(handle: str, *, with_text: bool, dialect: str) -> tuple[ErrorSpec, ...]:
    """A handle no receive issued. DeleteMessage's text is recorded; ChangeMessageVisibility's is not."""
    if dialect == "smq":
        return (ErrorSpec(SMQ_INVALID_ARGUMENT, None, 400, "invalid receipt handle"),
                ErrorSpec(SMQ_MESSAGE_NOT_EXIST, None, 404, "Message not exist."))
    if not with_text:
        return (ErrorSpec(RECEIPT_HANDLE_IS_INVALID, None, 404, "The receipt handle is not valid."),)
    return (ErrorSpec(
        RECEIPT_HANDLE_IS_INVALID,
        r'The input receipt handle ".*" is not a valid receipt handle\.?',
        404,
        f'The input receipt handle "{handle}" is not a valid receipt handle.',
    ),)


@functools.cache
def smq_message_not_exist() -> ErrorSpec:
    return ErrorSpec(SMQ_MESSAGE_NOT_EXIST, None, 404, "Message not exist.")


def too_many_entries(count: int) -> ErrorSpec:
    return ErrorSpec(
        TOO_MANY_ENTRIES,
        rf"Maximum number of entries per request are 10\. You have sent {count}{_DOT}",
        400,
        f"Maximum number of entries per request are 10. You have sent {count}.",
    )


def empty_batch() -> ErrorSpec:
    return ErrorSpec(EMPTY_BATCH, None, 400, "There should be at least one SendMessageBatchRequestEntry.")


def invalid_batch_entry_id() -> ErrorSpec:
    return ErrorSpec(INVALID_BATCH_ENTRY_ID, None, 400, "A batch entry id can only contain alphanumeric characters, "
                     "hyphens and underscores. It can be at most 80 letters long.")


def batch_ids_not_distinct() -> ErrorSpec:
    return ErrorSpec(BATCH_IDS_NOT_DISTINCT, None, 400, "Id entries are not distinct.")


def missing_group_id() -> ErrorSpec:
    return ErrorSpec(MISSING_PARAMETER, None, 400, "The request must contain the parameter MessageGroupId.")


def missing_dedup_id() -> ErrorSpec:
    return ErrorSpec(INVALID_PARAMETER_VALUE, None, 400, "The queue should either have ContentBasedDeduplication "
                     "enabled or MessageDeduplicationId provided explicitly")


def fifo_message_delay(value: object) -> ErrorSpec:
    return _invalid_value("DelaySeconds", value, None)


def over_limit() -> ErrorSpec:
    return ErrorSpec(OVER_LIMIT, None, 403, "Too many messages in flight.")


def purge_in_progress() -> ErrorSpec:
    return ErrorSpec(PURGE_IN_PROGRESS, None, 403, "Only one PurgeQueue operation is allowed every 60 seconds.")


class Check(Enum):
    """Checks a refusal's text names. Several checks refuse with the same code (InvalidParameterValue); where the
    evidence records a check's text, an answer carrying that text says which check refused, whatever the value."""

    CEILING = "the 12-hour ceiling"
    EXPIRY = "the handle's expiry"
    GONE = "the message's existence"
    RANGE = "a parameter's range"


def check_named_by(message: str) -> Check | None:
    """The check whose recorded text a refusal carries, or None; whatever its code, which may be what is wrong
    (fauxqs refuses a change of a message no longer there with the recorded text under `MessageNotInflight`)."""
    texts = ((Check.CEILING, _BEYOND_CEILING), (Check.EXPIRY, _EXPIRED), (Check.GONE, _NOT_AVAILABLE),
             (Check.RANGE, _MAX_MESSAGES_RANGE), (Check.RANGE, _WAIT_RANGE))
    return next((check for check, text in texts if text.rstrip(".") in message), None)


_PARAMETER_NAMED = re.compile(r"(?:for (?:the )?parameter|[Aa]ttribute) ([A-Za-z]+)")


def parameter_named_by(message: str) -> str | None:
    """The request parameter or queue attribute a refusal's text names as wrong ('Value ... for parameter
    RedrivePolicy is invalid', 'Invalid value for the parameter DelaySeconds'), or None."""
    found = _PARAMETER_NAMED.search(message)
    return found.group(1) if found else None
