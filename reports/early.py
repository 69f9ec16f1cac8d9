"""A report's local Spark session started while the run whose traces it will read is still going.

`run --report` used to start Spark once the run had ended: about 4 s of a small report's 10 were the driver JVM
starting, with the machine's other core idle while the run went on. Started ahead, in a thread, the JVM comes up
beside the run (a separate process: the run's Python keeps its own core). What depends on the traces is decided
twice: the JIT (a JVM option) from the traces already there when it starts, whether queries run interpreted (a
setting of the session) again from the traces as they are when the report begins (reports/workload.py). Neither
changes what a query computes, only how fast.
"""

from __future__ import annotations

import threading

from sqs_conformance.reports.spark import session, set_interpreted
from sqs_conformance.reports.workload import interpreted, session_options, workload


class EarlySession:
    """`start` begins starting the session; `session` waits for it and fits it to the traces as they are then;
    `stop` ends it if no report took it (a run that failed)."""

    def __init__(self, inputs: list[str], out_dir: str) -> None:
        self._quick_jit = session_options(inputs, out_dir)["quick_jit"]
        self._spark = None
        self._error: BaseException | None = None
        self._taken = False
        self._thread = threading.Thread(target=self._start, name="report-session", daemon=True)

    @classmethod
    def start(cls, inputs: list[str], out_dir: str) -> EarlySession:
        early = cls(inputs, out_dir)
        early._thread.start()
        return early

    def _start(self) -> None:
        try:
            self._spark = session(None, None, quick_jit=self._quick_jit)
        except BaseException as error:  # noqa: BLE001 - handed to the report, which says what went wrong
            self._error = error

    def session(self, inputs: list[str], out_dir: str):
        """The started session, its queries interpreted or not as the report of `inputs` into `out_dir` now calls
        for; the start's own error (a ReportError says what) if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        self._taken = True
        set_interpreted(self._spark, interpreted(workload(inputs, out_dir)))
        return self._spark

    def stop(self) -> None:
        """Stop the session unless a report took it; waits for a start still going on."""
        self._thread.join()
        if self._spark is not None and not self._taken:
            self._spark.stop()
