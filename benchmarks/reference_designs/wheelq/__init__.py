"""wheelq: an in-memory SQS look-alike (standard and FIFO) whose deadlines live on a timer wheel of one-second
buckets, released lazily when an operation touches the queue. Written from the SQS developer guides (the seed
documents) and the observed-AWS notes in EVIDENCE.md only; its mutants are in mutants.py.
"""
