"""The command line, as a user meets it: exit codes, files written, one-line errors, never a traceback."""

import json
import subprocess

import pytest
from tests.cli import SQS_CONFORMANCE


def cli(*args, cwd=None):
    return subprocess.run([*SQS_CONFORMANCE, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_run_against_the_model_conforms_and_writes_its_files(tmp_path):
    done = cli("run", "--target", "model", "--examples", "15", "--seed", "1", "--budget", "0",
               "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms" in done.stdout and "VIS-EXTEND-NONADDITIVE" in done.stdout  # the rule table
    summaries = list((tmp_path / "out").glob("summary-*.json"))
    assert len(summaries) == 1 and json.loads(summaries[0].read_text())["conforms"] is True
    assert not (tmp_path / "out" / "findings").exists()  # nothing diverged: no empty folder
    assert done.stdout.strip().splitlines()[-1].endswith(" conforms to sqs-standard")  # the verdict comes last
    checked = cli("check", str(tmp_path / "out" / "trace.jsonl"))
    assert checked.returncode == 0 and "no divergence" in checked.stdout


def test_a_diverging_run_ends_with_where_to_look_and_the_verdict(tmp_path):
    done = cli("run", "--target", "python:tests.conformance.planted:EmptyBatchAccepted", "--witnesses-only",
               "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    tail = " ".join(lines[-8:])  # a long path may fold a line
    assert "diverges from sqs-standard on" in lines[-1]
    for pointer in ("trace: ", "minimal cases: ", "re-run one: sqs-conformance confirm --target python:tests"):
        assert pointer in tail


@pytest.mark.parametrize("args, message", [
    (["run", "--target", "nope"], "unknown target 'nope'"),
    (["run", "--target", "model", "--examples", "0"], "--examples"),
    (["run", "--target", "model", "--profile", "sqs-9999"], "--profile"),
    (["run", "--target", "moto", "--profile", "smq"], "cannot be checked against profile smq"),
    (["run"], "--target"),
    (["check", "/no/such/trace.jsonl"], "no trace file"),
    (["frobnicate"], "No such command"),
    (["run", "--target", "aws"], "add --allow-real-aws"),
    (["run", "--target", "endpoint"], "needs --endpoint-url"),
    (["run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9"], "cannot reach"),
    (["run", "--target", "endpoint", "--endpoint-url", "nope"], "Invalid endpoint"),
    (["run", "--target", "moto", "--jobs", "2"], "moto in-process runs one job"),
    (["run", "--target", "model", "--tolerate", "NO-SUCH-RULE"], "no such rule NO-SUCH-RULE"),
    (["run", "--target", "model", "--tolerance", "-1"], "--tolerance"),
    (["cleanup", "--target", "moto"], "--target"),
    (["confirm", "--target", "model", "/no/such/case.json"], "no case file"),
    (["run", "--target", "model", "--out", "/proc/no-such-place/runs"], "--out /proc/no-such-place/runs: cannot"),
])
def test_bad_input_gets_one_line_and_exit_2(args, message):
    done = cli(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sqs-conformance: error:") and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_a_malformed_trace_is_one_line_and_exit_2(tmp_path):
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"run_id": "x"}\n')
    done = cli("check", str(trace))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "bad.jsonl:1:" in done.stderr


def test_an_out_path_that_is_a_file_is_refused_without_touching_it(tmp_path):
    existing = tmp_path / "notes.txt"
    existing.write_text("keep me")
    done = cli("run", "--target", "model", "--examples", "2", "--budget", "0", "--out", str(existing))
    assert done.returncode == 2 and existing.read_text() == "keep me"


def test_an_empty_trace_and_a_file_that_is_no_trace_are_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    done = cli("check", str(empty))
    assert done.returncode == 2 and "nothing was checked" in done.stderr and done.stderr.count("\n") == 1


def test_version_names_the_package():
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.startswith("sqs-conformance, version ")


def test_rules_lists_the_catalogue():
    from sqs_conformance.model import CATALOGUE

    done = cli("rules")
    assert done.returncode == 0 and all(r.id in done.stdout for r in CATALOGUE)


def test_a_run_refused_before_it_starts_leaves_no_folder_behind(tmp_path):
    out = tmp_path / "runs" / "today"
    done = cli("run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--out", str(out))
    assert done.returncode == 2 and "cannot reach" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "runs").exists()
    kept = tmp_path / "kept"
    (kept / "earlier").mkdir(parents=True)
    done = cli("run", "--target", "endpoint", "--endpoint-url", "http://127.0.0.1:9", "--out", str(kept))
    assert done.returncode == 2 and (kept / "earlier").is_dir()  # a folder that was there stays, as it was
