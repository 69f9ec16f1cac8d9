"""The command line as a user runs it, from this environment's Python (the `sqs-conformance` script's module)."""

import sys

SQS_CONFORMANCE = [sys.executable, "-m", "sqs_conformance.conformance"]
