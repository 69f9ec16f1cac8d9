"""The report says what the run said: for every rule the run found diverging, the very case the run's finding
holds (the same steps, the same divergence: both pick it in one order, `MINIMAL_CASE_ORDER`, among the same
steps), every rule the run lists in its matrix, the values each step was sent with, and links to the findings
that still lead there from a copy of the folder (a CI artefact)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from sqs_conformance.adapters.moto_target import MotoTarget
from sqs_conformance.conformance.report import write_findings
from sqs_conformance.conformance.runner import RunOptions, run
from sqs_conformance.conformance.trace import encode
from sqs_conformance.model.rules import rules_for
from sqs_conformance.model.words import operation_words
from sqs_conformance.reports.job import build

pytestmark = pytest.mark.xdist_group("spark")


def test_each_rule_shows_the_run_s_case(spark, tmp_path):
    target = MotoTarget()
    try:
        result = run(target, "sqs-standard", RunOptions(seed=2, out_dir=tmp_path / "runs", budget=15))
    finally:
        target.close()
    assert len(result.findings) >= 10  # moto diverges on 13 rules at this version
    write_findings(result, tmp_path / "runs")  # as `run` writes them, beside the trace
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

    page = (tmp_path / "report" / "report.html").read_text()
    matrix = page.split("<table id=matrix-table>")[1].split("</table>")[0]
    assert set(re.findall(r"<tr><td class=rule><a href='#rule-([A-Z0-9-]+)'>", matrix)) == {
        r.id for r in rules_for("sqs-standard")}  # as `run` lists them, those no step can reach included
    # Each rule's verdict in the run's words, as the run says it (one vocabulary: model/verdicts.py)
    said = dict(re.findall(r"<tr><td class=rule><a href='#rule-([A-Z0-9-]+)'>[^<]*</a></td><td class=\w+ "
                           r"title='([a-z ]+)'>", matrix))
    assert said == {r.id: result.verdict(r.id).value for r in rules_for("sqs-standard")}
    assert page.count("what the timelines' colours and marks mean") == 1  # one legend, not one per timeline
    for rule_id, finding in result.findings.items():  # the diverging step named with what it was sent
        assert f"{operation_words(finding.steps[-1].op)} →" in page.split(f"id='div-moto-{rule_id}'")[1], rule_id
    links = set(re.findall(r"href='([^#'][^']*)'", page))
    assert links and all(not link.startswith(("/", "file:")) for link in links)
    moved = tmp_path / "artefact"  # the whole folder elsewhere: the links still lead to the findings
    shutil.copytree(tmp_path / "runs", moved / "runs")
    shutil.copytree(tmp_path / "report", moved / "report")
    assert all((moved / "report" / link).resolve().is_file() for link in links), links
