"""The reference in-house design: SQS visibility semantics on Redis, the way teams build their own queues.

One sorted set per queue holds every live message scored by the time it becomes receivable (its visible-at
deadline); a hash per message keeps its body, receive count and current receipt handle; Lua scripts make each
receive, change and delete one atomic step. Time is never read from Redis: the caller passes `now`, so the suite
drives the queue in virtual time. Switches (`semantics.py`) give the sqs-standard, sqs-fifo, sqs-2008 and smq
behaviours of the seed documents.

    store.py      the queue library (what a team's services would import)
    scripts.py    its Lua scripts
    semantics.py  the per-service switches
    server.py     a redis-server of its own on 127.0.0.1, stopped by its pid
    target.py     the suite's adapter: --target python:benchmarks.reference_designs.redisq.target:RedisQueueTarget
    mutants.py    plausible bugs of this design, to measure the suite (benchmarks/mutants.py)
"""
