"""Targets the suite can drive: the model itself, moto, SQS-compatible endpoints, in-house queues."""
