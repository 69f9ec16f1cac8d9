"""SQS standard-queue semantics on SQLite: one in-memory database per target, one SQL statement per state change.

Written from the SQS developer guides (the seed documents) and the observed-AWS notes in EVIDENCE.md only.
"""
