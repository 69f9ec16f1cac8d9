"""The report shows, for every rule the run found diverging, the very case the run's finding holds: the same
steps, the same divergence. Both pick it in one order (`MINIMAL_CASE_ORDER`), among the same steps."""

from __future__ import annotations

import json

import pytest

from adapters.moto_target import MotoTarget
from conformance.runner import run
from conformance.trace import encode
from reports.job import build

pytestmark = pytest.mark.xdist_group("spark")


def test_each_rule_shows_the_run_s_case(spark, tmp_path):
    target = MotoTarget()
    try:
        result = run(target, "sqs-standard", seed=2, out_dir=tmp_path / "runs", budget=15)
    finally:
        target.close()
    assert len(result.findings) >= 10  # moto diverges on 13 rules at this version
    build(spark, [str(tmp_path / "runs")], str(tmp_path / "report"))
    shown = {row["rule"]: row for row in (r.asDict(recursive=True) for r in
                                          spark.read.parquet(str(tmp_path / "report" / "tables" / "divergences"))
                                          .collect())}
    lines = [json.loads(line) for line in (tmp_path / "runs" / "trace.jsonl").read_text().splitlines()]
    assert set(result.findings) <= set(shown)
    for rule_id, finding in result.findings.items():
        row = shown[rule_id]
        pointer = row["minimal_case"]
        case = sorted((line for line in lines if (line["run_id"], line["case"]) == (pointer["run_id"], pointer["case"])
                       and line["step"] <= pointer["step"]), key=lambda line: line["step"])
        assert [line["operation"] for line in case] == [encode(s.sent) for s in finding.steps], rule_id
        assert [line["invoke"] for line in case] == [s.invoke for s in finding.steps], rule_id
        assert (row["expected"], row["observed"]) == (finding.divergence.expected, finding.divergence.observed)
