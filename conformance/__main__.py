"""`python3 -m conformance` is `sqs-conformance`."""

from conformance.cli import entry

entry()
