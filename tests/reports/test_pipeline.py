"""The reports job on small hand-made traces: exact counts in every table, quarantine, incremental updates."""

import json
import os
import re
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from sqs_conformance.reports import ingest, job, pictures, tables
from tests.reports.conftest import step

pytestmark = pytest.mark.xdist_group("spark")


def write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def first_run():
    """Run r1 on target emu: case 1 (first seen, 3 steps) and case 2 (the final replay, 2 steps) diverge on
    VIS-TERMINATE at their second step, as soon; an unknown receive; two reappearances 0.5 s and 1.5 s late."""
    return [
        step("r1", 1, 0, op="CreateQueue", response="Ok", rules=["VIS-DEFAULT"]),
        step("r1", 1, 1, op="ChangeMessageVisibility", response="Error", verdict="divergence",
             rules=["VIS-TERMINATE"], divergences=[["VIS-TERMINATE", "VIS-SHORTEN"]]),
        step("r1", 1, 2, verdict="unknown", response="Unknown", rules=["RCV-HIDE"]),
        step("r1", 2, 0, op="CreateQueue", response="Ok", rules=["VIS-DEFAULT"], final=True),
        step("r1", 2, 1, op="ChangeMessageVisibility", response="Error", verdict="divergence", final=True,
             rules=["VIS-TERMINATE"], divergences=[["VIS-TERMINATE"]], wall=1_800_000_100.0),
        step("r1", 3, 0, rules=["RCV-HIDE", "RCV-REAPPEAR"], reappeared=[0.5], returned=["m1"]),
        step("r1", 3, 1, rules=["RCV-HIDE", "RCV-REAPPEAR"], reappeared=[1.5], returned=["m1"]),
    ]


def rows(spark, out, table):
    return [r.asDict(recursive=True) for r in spark.read.parquet(f"{out}/tables/{table}").collect()]


def test_a_partition_of_lines_holds_one_trace_file_and_its_malformed_lines_apart(spark, tmp_path):
    write(tmp_path / "traces" / "a.jsonl", first_run() + ["garbage"])
    write(tmp_path / "traces" / "b.jsonl", first_run()[:2])
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    traces = ingest.find_traces(spark, [str(tmp_path / "traces")])
    lines = tmp_path / "out" / "tables" / "lines"
    assert sorted(p.name for p in lines.iterdir() if p.is_dir()) == sorted(f"source={t.source}" for t in traces)
    a = next(t for t in traces if t.path.endswith("a.jsonl"))
    assert sorted(p.name for p in (lines / f"source={a.source}").iterdir() if p.is_dir()) == \
        ["quarantined=false", "quarantined=true"]


def cell(spark, out, rule, target="emu"):
    (found,) = [r for r in rows(spark, out, "matrix") if r["rule"] == rule and r["target"] == target]
    return {k: found[k] for k in ("exercised", "decisive", "conforming", "diverging", "uncertain")}


@pytest.fixture(params=["generated", "interpreted"])
def code(request, spark):
    """The session's queries with generated code, as a larger report runs them, or interpreted, as a small local
    one does (reports/workload.py)."""
    from sqs_conformance.reports.spark import INTERPRETED

    if request.param == "interpreted":
        for key, value in INTERPRETED.items():
            spark.conf.set(key, value)
    plan = spark.range(4).groupBy("id").count()._jdf.queryExecution().executedPlan().toString()  # noqa: SLF001
    assert ("*(" in plan) == (request.param == "generated"), plan  # "*(1)": a whole stage's generated code
    yield request.param
    for key in INTERPRETED:
        spark.conf.unset(key)


def test_the_tables_count_exactly_what_the_traces_hold(spark, tmp_path, code):
    write(tmp_path / "traces" / "a.jsonl", first_run())
    summary = job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    out = tmp_path / "out"
    assert (summary.files, summary.new_files, summary.steps, summary.quarantined, summary.divergences) == \
        (1, 1, 7, 0, 1)
    assert cell(spark, out, "VIS-TERMINATE") == {"exercised": 2, "decisive": 2, "conforming": 0, "diverging": 2,
                                                 "uncertain": 0}
    assert cell(spark, out, "RCV-HIDE") == {"exercised": 3, "decisive": 2, "conforming": 2, "diverging": 0,
                                            "uncertain": 1}
    assert cell(spark, out, "VIS-DEFAULT") == {"exercised": 2, "decisive": 2, "conforming": 2, "diverging": 0,
                                               "uncertain": 0}
    # VIS-SHORTEN is only a second candidate of one divergence: it is neither exercised nor diverging.
    assert not [r for r in rows(spark, out, "matrix") if r["rule"] == "VIS-SHORTEN"]

    (divergence,) = rows(spark, out, "divergences")
    assert (divergence["rule"], divergence["target"], divergence["runs"], divergence["occurrences"]) == \
        ("VIS-TERMINATE", "emu", 1, 2)
    assert divergence["first_seen"].timestamp() == pytest.approx(1_800_000_001.0)
    assert divergence["last_seen"].timestamp() == pytest.approx(1_800_000_101.0)
    minimal = divergence["minimal_case"]
    # As soon in both cases: the first seen (MINIMAL_CASE_ORDER), whatever Hypothesis' replay or the lengths
    assert (minimal["run_id"], minimal["case"], minimal["step"], minimal["case_steps"]) == ("r1", 1, 1, 3)
    assert minimal["file"].endswith("/traces/a.jsonl")

    (timing,) = rows(spark, out, "timing")
    assert (timing["steps"], timing["reappearances"]) == (7, 2)
    assert (timing["lateness_p50"], timing["lateness_p99"]) == (0.5, 1.5)
    assert timing["latency_p50"] == pytest.approx(0.01)


def test_a_minimal_case_replays_on_a_real_clock_then_has_the_fewest_steps_then_the_least_waiting_first_seen(
        spark, tmp_path, code):
    def case(number, length, diverging_at, rule, invoke=None, wall=1_800_000_000.0, verdict="divergence",
             exact_timing_only=False):
        return [step("r1", number, index, rules=[rule], wall=wall,
                     **({"verdict": verdict, "divergences": [[rule]], "invoke": invoke,
                         "exact_timing_only": exact_timing_only} if index == diverging_at else {}))
                for index in range(length)]

    lines = (case(1, 2, 1, "VIS-TERMINATE", invoke=30.0) + case(2, 3, 1, "VIS-TERMINATE", invoke=0.5)  # less waiting
             + case(3, 4, 2, "VIS-SHORTEN", invoke=0.0) + case(4, 2, 1, "VIS-SHORTEN", invoke=300.0)  # fewer steps
             + case(5, 3, 1, "VIS-DEFAULT", wall=1_800_000_050.0) + case(6, 5, 1, "VIS-DEFAULT")  # seen first
             + case(7, 2, 0, "VIS-DEFAULT", verdict="behind")  # behind another divergence: reports nothing
             + case(8, 1, 0, "VIS-SHORTEN", exact_timing_only=True))  # fewer; a real clock would not show it
    write(tmp_path / "traces" / "a.jsonl", lines)
    out = str(tmp_path / "out")
    job.build(spark, [str(tmp_path / "traces")], out)
    minimal = {r["rule"]: r["minimal_case"] for r in rows(spark, out, "divergences")}
    assert {rule: (m["case"], m["step"], m["case_steps"]) for rule, m in minimal.items()} == {
        "VIS-TERMINATE": (2, 1, 3), "VIS-SHORTEN": (4, 1, 2), "VIS-DEFAULT": (6, 1, 5)}


def test_malformed_lines_are_quarantined_and_every_good_line_kept(spark, tmp_path):
    good = first_run()
    bad = ['{"run_id": "r9", "case": 1', "not json at all", '{"run_id": "r9"}',
           step("r9", 1, 0).replace('"case": 1', '"case": "one"'),
           step("r9", 1, 1).replace('"verdict": "ok"', '"verdict": "maybe"')]
    mixed = [good[0], bad[0], good[1], bad[1], *good[2:5], bad[2], bad[3], *good[5:], bad[4]]
    write(tmp_path / "traces" / "mixed.jsonl", mixed)
    summary = job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    assert (summary.steps, summary.quarantined) == (7, 5)
    problems = sorted(r.problem for r in ingest.quarantine(spark, str(tmp_path / "out" / "tables")).collect())
    assert problems.count("not a JSON object of the trace schema") == 3
    assert "unknown verdict maybe" in problems
    assert any(p.startswith("missing target, profile, case, step") for p in problems)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Malformed lines: 5 quarantined" in page and "not json at all" in page


def test_new_and_grown_traces_update_the_tables_and_nothing_is_counted_twice(spark, tmp_path):
    traces, out = tmp_path / "traces", str(tmp_path / "out")
    first = write(traces / "a.jsonl", first_run())
    job.build(spark, [str(traces)], out)

    second_run = [step("r2", 1, 0, rules=["VIS-TERMINATE"], op="ChangeMessageVisibility", verdict="divergence",
                       divergences=[["VIS-TERMINATE"]], final=True, wall=1_900_000_000.0)]
    write(traces / "b.jsonl", second_run)
    summary = job.build(spark, [str(traces)], out)
    assert (summary.files, summary.new_files, summary.steps) == (2, 1, 8)
    (divergence,) = rows(spark, out, "divergences")
    assert divergence["runs"] == 2 and divergence["last_seen"].timestamp() == pytest.approx(1_900_000_000.0)
    # The minimal case is now the one-step final case of run r2.
    assert (divergence["minimal_case"]["run_id"], divergence["minimal_case"]["case_steps"]) == ("r2", 1)

    time.sleep(0.01)
    with first.open("a") as f:  # a trace grows as a run appends to it
        f.write(step("r1", 4, 0, rules=["VIS-DEFAULT"], op="CreateQueue", response="Ok") + "\n")
    os.utime(first, (time.time() + 5, time.time() + 5))
    summary = job.build(spark, [str(traces)], out)
    assert (summary.new_files, summary.steps) == (1, 9)
    assert cell(spark, out, "VIS-DEFAULT") == {"exercised": 3, "decisive": 3, "conforming": 3, "diverging": 0,
                                               "uncertain": 0}

    summary = job.build(spark, [str(traces)], out)
    assert (summary.new_files, summary.steps) == (0, 9)


def parts(out, table):
    return sorted(p.name for p in (Path(out) / "tables" / table).glob("part-*"))


def test_a_report_of_nothing_new_keeps_the_derived_tables_built_from_the_same_lines_by_the_same_code(
        spark, tmp_path, monkeypatch):
    traces, out = tmp_path / "traces", str(tmp_path / "out")
    write(traces / "a.jsonl", first_run())
    first = job.build(spark, [str(traces)], out)
    built = {name: parts(out, name) for name in job.DERIVED}
    page = (tmp_path / "out" / "report.html").read_text()

    again = job.build(spark, [str(traces)], out)  # nothing new: the tables are not written again
    assert {name: parts(out, name) for name in job.DERIVED} == built
    assert again.new_files == 0 and (again.steps, again.divergences, again.files) == (first.steps, first.divergences,
                                                                                      first.files)
    assert _without_date(page) == _without_date((tmp_path / "out" / "report.html").read_text())

    (tmp_path / "out" / "tables" / "timing" / "_SUCCESS").unlink()  # a job stopped while writing it: built again
    job.build(spark, [str(traces)], out)
    assert all(parts(out, name) != built[name] for name in job.DERIVED)
    built = {name: parts(out, name) for name in job.DERIVED}

    monkeypatch.setattr(job, "_stamp", lambda spark, store: "other code")  # the code that derives them changed
    job.build(spark, [str(traces)], out)
    assert all(parts(out, name) != built[name] for name in job.DERIVED)
    monkeypatch.undo()

    write(traces / "b.jsonl", [step("r2", 1, 0)])  # new lines
    summary = job.build(spark, [str(traces)], out)
    assert summary.steps == first.steps + 1 and cell(spark, out, "RCV-HIDE")["exercised"] == 4


def _without_date(page: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", page)


SVG = "{http://www.w3.org/2000/svg}"


def pictures_in(html: str) -> list[ET.Element]:
    """Every inline SVG of a page, parsed as XML: a picture whose markup is not well-formed fails here, as it
    would break a browser's parse of everything after it."""
    return [ET.fromstring("<svg" + part.split("</svg>")[0] + "</svg>") for part in html.split("<svg")[1:]]


def test_every_picture_of_the_report_is_well_formed(spark, tmp_path):
    write(tmp_path / "traces" / "a.jsonl", first_run())
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    page = (tmp_path / "out" / "report.html").read_text()
    found = pictures_in(page)
    assert len(found) >= 3  # a timeline, two histograms
    assert all(p.tag == f"{SVG}svg" and float(p.get("width")) >= 500 or p.get("aria-label") == "histogram"
               for p in found)


def test_the_html_report_shows_the_matrix_rules_timelines_and_timing(spark, tmp_path):
    write(tmp_path / "traces" / "a.jsonl", first_run())
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    page = (tmp_path / "out" / "report.html").read_text()
    assert "http://" not in page.replace("http://www.w3.org", "") and "<script" not in page  # offline
    matrix = page.split("<table id=matrix-table>")[1].split("</table>")[0]
    assert "<th>emu 1.0 (sqs-standard)</th>" in matrix
    terminate_row = matrix.split("#rule-VIS-TERMINATE'>VIS-TERMINATE</a></td>")[1].split("</tr>")[0]
    assert terminate_row == "<td class=diverges title='diverges'>2 of 2</td>"
    hide_row = matrix.split("#rule-RCV-HIDE'>RCV-HIDE</a></td>")[1].split("</tr>")[0]
    assert hide_row == "<td class=conforms title='conforms'>2 / 3 +1?</td>"
    summary = {row.split("</th>")[0].split(">")[-1]: row.split("</th>")[1].split(">")[-1]
               for row in matrix.split("<tr class=summary>")[1:]}
    assert summary["rules diverging"] == "1"  # VIS-TERMINATE
    assert summary["rules conforming (decided)"] == str(sum(
        1 for row in matrix.split("<tr>")[1:] if "<td class=conforms" in row))
    assert "<section class=rule id='rule-VIS-TERMINATE'>" in page
    assert "ChangeMessageVisibility(0) makes the message receivable at once." in page
    divergence = page.split("<section class=divergence")[1].split("</section>")[0]
    assert "Minimal case: 2 steps, case 1 of run <code>r1</code>" in divergence
    assert divergence.count("<svg") == 1
    (picture,) = pictures_in(divergence)
    labels = [t.text for t in picture.iter(f"{SVG}text")]
    assert "0. CreateQueue(q)" in labels and "1. ChangeMessageVisibility(q)" not in labels
    assert "1. Change(q)" in labels and "→ Error" in labels  # every step, labelled with what came back
    framed = [r for r in picture.iter(f"{SVG}rect") if r.get("stroke") == pictures.DIVERGING
              and float(r.get("height")) > pictures.LANE]  # a column's frame, not the legend's swatch
    assert len(framed) == 1 and float(framed[0].get("x")) == pictures.LEFT + pictures.STEP_WIDTH + 1  # step 1
    legend = page.split("<h2 id=divergences>")[1].split("<section class=divergence")[0]  # once, above them all
    assert "the step whose answer the model does not permit" in [t.text for p in pictures_in(legend)
                                                                 for t in p.iter(f"{SVG}text")]
    assert "<li class=diverging><code>t=1.000 Change(q) → Error</code></li>" in divergence  # its steps in words
    assert "how late messages came back" in page and "operation latency" in page

    suites = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    (suite,) = suites
    assert suite.get("name") == "emu 1.0 (sqs-standard)" and suite.get("failures") == "1"
    (failed,) = [c for c in suite if c.find("failure") is not None]
    assert failed.get("name") == "VIS-TERMINATE"
    exercised = {c.get("name") for c in suite if c.find("skipped") is None}
    assert exercised == {"VIS-DEFAULT", "VIS-TERMINATE", "RCV-HIDE", "RCV-REAPPEAR"}


def test_the_histograms_count_each_latency_and_lateness_in_its_bar_and_the_page_counts_runs_and_files(spark, tmp_path):
    write(tmp_path / "traces" / "a.jsonl", [
        step("r1", 1, 0, latency=0.0004),  # under a millisecond: bar 0
        step("r1", 1, 1, latency=0.003), step("r1", 1, 2, latency=0.003),  # ≤ 4 ms: bar 2
        step("r1", 1, 3, latency=1e5, reappeared=[0.1, 0.3, 7.0]),  # beyond the last latency bar; late 0, 1, 20
    ])
    write(tmp_path / "traces" / "b.jsonl", [step("r2", 1, 0, latency=0.01, reappeared=[-0.2])])  # bar 4; late 0
    write(tmp_path / "traces" / "c.jsonl", [step("r3", 1, 0, latency=0.01, clock="virtual")])  # another clock
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    steps = ingest.steps(spark, str(tmp_path / "out" / "tables")).select(*tables.COLUMNS)
    latency = job._rows(tables.latency_summary(steps, tables.tallied(steps)))
    lateness = job._rows(tables.lateness_summary(steps, tables.tallied(steps)))
    bars = {(b["clock"], b["bar"], b["count"]) for b in tables.bars(latency, "latency_bars")}
    assert bars == {("real", 0, 1), ("real", 2, 2), ("real", 4, 1), ("real", tables.LATENCY_LAST_BIN, 1),
                    ("virtual", 4, 1)}
    bars = {(b["clock"], b["bar"], b["count"]) for b in tables.bars(lateness, "lateness_bars")}
    assert bars == {("real", 0, 2), ("real", 1, 1), ("real", tables.LATENESS_LAST_BIN, 1)}
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<p>6 steps of 3 runs from 3 trace files; " in page


def test_a_rule_never_exercised_decisively_is_a_gap_not_a_pass(spark, tmp_path):
    """Exercised only where any answer was permitted (or by a trace older than schema 3, which did not record it):
    grey in the matrix, decisive / all shown, and skipped in JUnit with the reason."""
    write(tmp_path / "traces" / "a.jsonl", [
        step("r1", 1, 0, op="CreateQueue", response="Ok", rules=["VIS-DEFAULT"]),
        step("r1", 1, 1, rules=["RCV-HIDE", "RCV-COUNT"], decisive=["RCV-HIDE"]),
        step("r1", 1, 2, op="ChangeMessageVisibility", response="ChangeOk", rules=["VIS-CEILING"], decisive=[]),
        step("r2", 1, 0, op="DeleteMessage", response="Ok", rules=["DEL-REMOVES"], schema=2),
    ])
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    out = tmp_path / "out"
    assert cell(spark, out, "RCV-COUNT") == {"exercised": 1, "decisive": 0, "conforming": 1, "diverging": 0,
                                             "uncertain": 0}
    assert cell(spark, out, "RCV-HIDE")["decisive"] == 1
    assert cell(spark, out, "DEL-REMOVES")["decisive"] == 0
    matrix = (out / "report.html").read_text().split("<table id=matrix-table>")[1].split("</table>")[0]
    for rule_id in ("RCV-COUNT", "VIS-CEILING", "DEL-REMOVES"):
        row = matrix.split(f"#rule-{rule_id}'>{rule_id}</a></td>")[1].split("</tr>")[0]
        assert row == "<td class=undecided title='undecided'>0 / 1</td>", rule_id
    (suite,) = ET.parse(out / "junit.xml").getroot()
    passed = {c.get("name") for c in suite if c.find("skipped") is None and c.find("failure") is None}
    assert passed == {"VIS-DEFAULT", "RCV-HIDE"}
    (count,) = [c for c in suite if c.get("name") == "RCV-COUNT"]
    assert "could not have failed" in count.find("skipped").get("message")


def test_each_divergence_links_to_the_finding_its_run_wrote(spark, tmp_path):
    """The report's minimal case and the run's finding are the same case, and the report links to its files: a
    single client's run's findings/RUN/RULE.txt and .py, a concurrent run's concurrent/RULE/TIMELINE.txt and RULE.py,
    its case drawn one lane per client."""
    import re
    from urllib.parse import urlparse

    from sqs_conformance.conformance.concurrent.command import run_clients
    from sqs_conformance.conformance.concurrent.run import ConcurrentOptions
    from sqs_conformance.conformance.report import write_findings
    from sqs_conformance.conformance.runner import RunOptions, run
    from tests.concurrent.targets import ForgetfulConsumers
    from tests.conformance.planted import TwoBugs

    result = run(TwoBugs("sqs-standard"), "sqs-standard", RunOptions(seed=1, search=False, out_dir=tmp_path / "run"))
    write_findings(result, tmp_path / "run")
    # A concurrent run into the same folder: its lines appended to the trace (and its columnar copy), its findings
    # under concurrent/, each with its history.jsonl, which the report reads as a trace too
    # three cases: real threads, so one case on a busy machine may interleave without the race (a CI run did)
    concurrent = run_clients(ForgetfulConsumers("sqs-standard"), "sqs-standard",
                             ConcurrentOptions(clients=2, cases=3, seed=1, mode="threads"), tmp_path / "run")
    # the second consumer is handed what the first holds (and, hiding it for 0 s, breaks RCV-HIDE on its own)
    assert "RCV-EXCLUSIVE" in concurrent.findings and set(concurrent.findings) <= {"RCV-EXCLUSIVE", "RCV-HIDE"}
    summary = job.build(spark, [str(tmp_path / "run")], str(tmp_path / "out"))
    # The finding's history is read for its minimal case, but its steps, copies of the run's, are not counted again
    histories = set((tmp_path / "run").glob("concurrent/*/history.jsonl"))
    traces = [t for t in (tmp_path / "run").rglob("*.jsonl") if t not in histories]
    assert summary.files == len(traces) + len(histories) and summary.steps == sum(
        len(t.read_text().splitlines()) for t in traces)
    run_lines = [json.loads(line) for t in traces for line in t.read_text().splitlines()]
    in_trace = [d for line in run_lines if line["verdict"] != "behind" for d in line["divergences"]
                if d["rules"][0] == "RCV-EXCLUSIVE"]
    exclusive = [r for r in rows(spark, tmp_path / "out", "divergences") if r["rule"] == "RCV-EXCLUSIVE"]
    assert [(r["runs"], r["occurrences"]) for r in exclusive] == [(1, len(in_trace))]
    page = (tmp_path / "out" / "report.html").read_text()
    links = re.findall(r"<a href='([^#'][^']+\.(?:txt|py))'>", page)
    assert len(links) == 2 * (len(result.findings) + len(concurrent.findings))
    for link in links:  # relative to the report, as a copy of the folder (a CI artefact) keeps them
        assert not urlparse(link).scheme and (tmp_path / "out" / link).resolve().is_file(), link
    for rule_id, finding in result.findings.items():
        section = page.split(f"id='div-model:sqs-standard-{rule_id}'")[1].split("</section>")[0]
        assert f"Minimal case: {len(finding.steps)} steps" in section  # the same case as the finding's
        assert "client" not in section  # one column per step, as ever
    section = page.split("id='div-model:sqs-standard-RCV-EXCLUSIVE'")[1].split("</section>")[0]
    assert "href='../run/concurrent/RCV-EXCLUSIVE/TIMELINE.txt'" in section
    (picture,) = pictures_in(section)
    lanes = [t.text for t in picture.iter(f"{SVG}text") if t.text.startswith("client ")]
    assert lanes == ["client 0", "client 1"]  # one lane per client
    assert len([r for r in picture.iter(f"{SVG}rect") if r.get("stroke") == pictures.DIVERGING]) == 1


def test_a_report_of_a_concurrent_finding_alone_counts_its_steps(spark, tmp_path):
    """A finding's history is a copy of its run's steps, left out of the tallies beside its run's trace; read alone,
    it is all there is, and counted."""
    from sqs_conformance.conformance.concurrent.command import run_clients
    from sqs_conformance.conformance.concurrent.run import ConcurrentOptions
    from tests.concurrent.targets import ForgetfulConsumers

    # three cases, as above: one case of real threads on a busy machine may interleave without the race
    run_clients(ForgetfulConsumers("sqs-standard"), "sqs-standard",
                ConcurrentOptions(clients=2, cases=3, seed=1, mode="threads"), tmp_path / "run")
    history = tmp_path / "run" / "concurrent" / "RCV-EXCLUSIVE" / "history.jsonl"
    summary = job.build(spark, [str(history)], str(tmp_path / "out"))
    assert summary.steps == len(history.read_text().splitlines()) > 0
    assert cell(spark, tmp_path / "out", "RCV-EXCLUSIVE", target="model:sqs-standard")["diverging"] == 1


def test_a_step_behind_another_divergence_is_not_counted_as_diverging(spark, tmp_path):
    """What a step shows after another step led the model astray may be that step's consequence: the run does not
    report it, and neither does the report (nor does the step decide anything)."""
    lines = [step("r1", 1, 0, op="DeleteMessage", response="Error", verdict="divergence", rules=["HANDLE-MALFORMED"],
                  divergences=[["HANDLE-MALFORMED"]]),
             step("r1", 1, 1, op="DeleteMessageBatch", response="BatchOk", verdict="behind", rules=["BATCH-EMPTY"],
                  divergences=[["BATCH-EMPTY"]], decisive=[])]
    write(tmp_path / "traces" / "a.jsonl", lines)
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    assert cell(spark, tmp_path / "out", "HANDLE-MALFORMED")["diverging"] == 1
    assert cell(spark, tmp_path / "out", "BATCH-EMPTY") == \
        {"exercised": 1, "decisive": 0, "conforming": 0, "diverging": 0, "uncertain": 0}
    assert {r["rule"] for r in rows(spark, tmp_path / "out", "divergences")} == {"HANDLE-MALFORMED"}
