"""spoolq: a standard SQS queue on a spool directory (one file per message) for many concurrent consumers.

`SpoolQueue` is the design; `variants.VARIANTS` are race-prone versions of it. Run the suite against it with
`--target python:benchmarks.reference_designs.spoolq.target:SpoolQueue`.
"""

from .target import SpoolQueue

__all__ = ["SpoolQueue"]
