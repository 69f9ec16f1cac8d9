"""A concurrent case's divergence in the report: one lane per client, each step a box from its send to its answer,
the diverging step framed in red, its steps in words with their client, and links to where `run --clients N` wrote
the finding; a single client's case drawn as before. Rendered from ReportData as the job collects it, without Spark
(test_pipeline's test of the links to the findings runs both kinds through Spark)."""

import json

from sqs_conformance.reports import page, pictures
from tests.reports.test_pipeline import SVG, pictures_in

RUNS = "file:/work/ci/runs"  # where `run` wrote its trace; the report is written beside it, in /work/ci/report
REPORT = "/work/ci/report"
WALL = 1_800_000_000.0


def concurrent_step(step, client, says, invoke, sent, answered, *, round=1, response="ReceiveOk", verdict="ok"):
    """A step of a concurrent case as the job collects it (reports/job.py `_minimal_cases`): `sent` and `answered`
    on the wall clock, in seconds after WALL; the case's own clock stands still within a round (a virtual one)."""
    return {"step": step, "client": client, "round": round, "says": says, "op_type": None, "queue": "q",
            "response_type": response, "error_code": None, "invoke": invoke, "complete": invoke,
            "invoke_wall": WALL + sent, "complete_wall": WALL + answered, "views": "{}", "returned": [],
            "verdict": verdict}


# Client 1 and client 2 receive at once (steps 2 and 3 overlap); client 2's receive diverges; client 0 sends a
# receive while it is in flight (step 4: it may have taken effect first); client 1 deletes after it was answered
# (step 5: after the case's clock moved on, too).
CONCURRENT_CASE = [
    concurrent_step(0, 0, "CreateQueue()", 0.0, 0.00, 0.01, round=0, response="Ok"),
    concurrent_step(1, 0, "Send(c0-1)", 0.0, 0.01, 0.02, round=0, response="SendOk"),
    concurrent_step(2, 1, "Receive(max=1)", 5.0, 0.03, 0.08),
    concurrent_step(3, 2, "Receive(max=1)", 5.0, 0.04, 0.06, verdict="divergence"),
    concurrent_step(4, 0, "Receive(max=2)", 5.0, 0.05, 0.055),
    concurrent_step(5, 1, "Delete(h1)", 35.0, 0.09, 0.10, round=2, response="Ok"),
]


def single_client_step(step, says, invoke, verdict="ok"):
    return {"step": step, "client": None, "round": None, "says": says, "op_type": None, "queue": "q",
            "response_type": "ReceiveOk", "error_code": None, "invoke": invoke, "complete": invoke + 0.01,
            "invoke_wall": WALL + invoke, "complete_wall": WALL + invoke + 0.01,
            "views": json.dumps({"m1": [["receipt", invoke + 30]]}), "returned": [], "verdict": verdict}


SINGLE_CLIENT_CASE = [single_client_step(0, "Receive(max=1)", 0.0), single_client_step(1, "Receive(max=1)", 1.0),
                      single_client_step(2, "Receive(max=1)", 2.0, verdict="divergence")]


def divergence_section(steps, file, diverging_step, rule="RCV-EXCLUSIVE"):
    """The report's section of one divergence whose minimal case is `steps` of `file`."""
    diverging = next(s for s in steps if s["step"] == diverging_step)
    pointer = {"file": file, "run_id": "r1", "case": 4, "step": diverging_step, "case_steps": len(steps),
               "client": diverging["client"], "round": diverging["round"]}
    data = page.ReportData(
        generated="today", files=1, steps=len(steps), runs=1,
        matrix=[{"target": "emu", "target_version": "1.0", "profile": "sqs-standard", "rule": rule, "exercised": 1,
                 "decisive": 1, "diverging": 1, "uncertain": 0, "conforming": 0}],
        divergences=[{"target": "emu", "target_version": "1.0", "profile": "sqs-standard", "rule": rule,
                      "first_seen": "then", "last_seen": "then", "runs": 1, "occurrences": 1,
                      "expected": "hidden", "observed": "returned", "minimal_case": pointer}],
        timing=[], lateness_bars=[], latency_bars=[], quarantined=0, quarantine_sample=[],
        cases={(file, "r1", 4): steps})
    html = page.render(data, REPORT)
    return html.split("<section class=divergence")[1].split("</section>")[0]


def boxes(picture):
    """Each step's box in a per-client timeline (the rect whose tooltip names the step): step -> (x, y, width)."""
    found = {}
    for rect in picture.iter(f"{SVG}rect"):
        title = rect.find(f"{SVG}title")
        if title is not None and title.text.startswith("step "):
            found[int(title.text.split()[1].rstrip(","))] = (float(rect.get("x")), float(rect.get("y")),
                                                             float(rect.get("width")))
    return found


def overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2]


def test_a_concurrent_divergence_is_drawn_one_lane_per_client_with_its_diverging_step_framed():
    section = divergence_section(CONCURRENT_CASE, f"{RUNS}/trace.jsonl", diverging_step=3)
    (picture,) = pictures_in(section)
    labels = [t.text for t in picture.iter(f"{SVG}text")]
    assert [label for label in labels if label.startswith("client ")] == ["client 0", "client 1", "client 2"]

    box = boxes(picture)
    # Up to the diverging step, and the receive sent while it was in flight; not the delete sent after its answer
    assert sorted(box) == [0, 1, 2, 3, 4]
    lane = {s["step"]: s["client"] for s in CONCURRENT_CASE}
    assert all((box[a][1] == box[b][1]) == (lane[a] == lane[b]) for a in box for b in box)  # one lane a client
    assert box[0][1] < box[2][1] < box[3][1]  # clients 0, 1, 2 from the top
    assert overlap(box[2], box[3]) and overlap(box[3], box[4])  # in flight at once
    assert box[1][0] + box[1][2] < box[2][0]  # answered before the next was sent
    assert all(width >= pictures.STEP_WIDTH for _, _, width in box.values())  # room for each label

    (frame,) = [r for r in picture.iter(f"{SVG}rect") if r.get("stroke") == pictures.DIVERGING]
    x, y, width = box[3]
    assert float(frame.get("x")) < x and x + width < float(frame.get("x")) + float(frame.get("width"))
    assert float(frame.get("y")) < y < float(frame.get("y")) + float(frame.get("height"))
    red = [t.text for t in picture.iter(f"{SVG}text") if t.get("fill") == pictures.DIVERGING]
    assert red == ["3. Receive(max=1)", "→ ReceiveOk"]  # labelled as a single client's step is, in red

    # Each step in words with its client; a receive's answer as the trace has it (its messages are not recorded)
    assert "<li><code>c1 t=5.000 Receive(max=1) → ReceiveOk</code></li>" in section
    assert "<li class=diverging><code>c2 t=5.000 Receive(max=1) → ReceiveOk</code></li>" in section
    assert "<li><code>c0 t=5.000 Receive(max=2) → ReceiveOk</code></li>" in section
    assert "Delete(h1)" not in section
    assert "it diverged at step 3, sent by client 2 in round 1." in section


def test_a_concurrent_divergence_links_to_the_finding_run_wrote_under_concurrent():
    links = ["href='../runs/concurrent/RCV-EXCLUSIVE/TIMELINE.txt'", "href='../runs/concurrent/RCV-EXCLUSIVE/RULE.py'"]
    from_the_run_s_trace = divergence_section(CONCURRENT_CASE, f"{RUNS}/trace.jsonl", diverging_step=3)
    # The finding's own history.jsonl is a trace under the run's --out too, and its case the shortest: its own folder
    from_the_finding_s_history = divergence_section(
        CONCURRENT_CASE, f"{RUNS}/concurrent/RCV-EXCLUSIVE/history.jsonl", diverging_step=3)
    for section in (from_the_run_s_trace, from_the_finding_s_history):
        assert all(link in section for link in links), section
        assert "findings/" not in section


def test_a_single_client_divergence_is_drawn_as_before_one_column_per_step():
    section = divergence_section(SINGLE_CLIENT_CASE, f"{RUNS}/trace.jsonl", diverging_step=2, rule="RCV-HIDE")
    assert pictures.timeline(SINGLE_CLIENT_CASE, 2) in section
    (picture,) = pictures_in(section)
    assert not boxes(picture) and not [t for t in picture.iter(f"{SVG}text") if t.text.startswith("client ")]
    (frame,) = [r for r in picture.iter(f"{SVG}rect") if r.get("stroke") == pictures.DIVERGING]
    assert float(frame.get("x")) == pictures.LEFT + 2 * pictures.STEP_WIDTH + 1  # the third column
    assert "<li class=diverging><code>t=2.000 Receive(max=1) → empty</code></li>" in section
    assert "Minimal case: 3 steps, case 4 of run <code>r1</code>" in section
    assert "href='../runs/findings/r1/RCV-HIDE.txt'" in section and "href='../runs/findings/r1/RCV-HIDE.py'" in section
