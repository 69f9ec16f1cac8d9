"""An SQS standard queue built as an append-only event log: every operation appends immutable events and every
answer is read from a projection folded from that log."""
