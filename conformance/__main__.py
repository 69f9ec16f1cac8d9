"""`python3 -m conformance` is `sqs-conformance`."""

from sqs_conformance.conformance.cli import entry

entry()
