"""One SparkSession (one JVM) for every reports test: starting one takes 5–10 s here. Under pytest-xdist these
tests share one worker (each module is marked `xdist_group("spark")`, and .ci/run passes `--dist loadgroup`),
so the JVM starts once."""

import json

import pytest

from sqs_conformance.model.trace_format import SCHEMA_VERSION
from tests.trace_lines import trace_line


@pytest.fixture(scope="session")
def spark():
    from sqs_conformance.reports.spark import session

    spark = session()
    yield spark
    spark.stop()


def step(run="r1", case=1, index=0, *, target="emu", version="1.0", profile="sqs-standard", clock="real",
         op="ReceiveMessage", response="ReceiveOk", verdict="ok", rules=("RCV-HIDE",), divergences=(),
         final=False, invoke=None, latency=0.01, wall=1_800_000_000.0, reappeared=(), views=None, returned=(),
         decisive=None, exact_timing_only=False, schema=SCHEMA_VERSION):
    """One trace line of a single client as the engine writes it (`decisive` defaults to every rule exercised;
    schema 2 lacks it), with what a test varies."""
    invoke = float(index) if invoke is None else invoke
    fields = dict(
        run_id=run, target=target, target_version=version, profile=profile, clock=clock, tolerance=0.5, case=case,
        step=index, final=final, operation={"type": op, "queue": "q"}, response={"type": response},
        invoke=invoke, complete=invoke + latency, invoke_wall=wall + invoke, complete_wall=wall + invoke + latency,
        verdict=verdict, rules=list(rules),
        divergences=[{"rules": list(d), "expected": "ChangeOk", "observed": "error X", "message_ids": ["m1"]}
                     for d in divergences],
        views=views if views is not None else {"m1": [["receipt", invoke + 30]]}, returned=list(returned),
        reappeared=[{"message": "m1", "deadline": invoke - late, "lateness": late} for late in reappeared],
        client=None, round=None)  # a single client's: a concurrent case's line names its client and round
    if schema >= 6:
        fields["exact_timing_only"] = exact_timing_only
    if schema >= 3:
        fields["decisive"] = list(rules if decisive is None else decisive)
    return json.dumps(trace_line(schema, **fields))
