"""leaseq: an in-memory SQS look-alike (standard and FIFO) in which a receive grants a lease (an expiry time and a
12-hour ceiling) to a new receipt, visibility changes replace that lease, and FIFO groups are locked by the leases of
their in-flight messages; expired leases are reclaimed from a heap when an operation touches the queue. Written from
the SQS developer guides (the seed documents) and the observed-AWS notes in EVIDENCE.md only; its mutants are in
mutants.py.
"""
