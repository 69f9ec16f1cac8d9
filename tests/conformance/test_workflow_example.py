"""The GitHub Actions example works as written from an empty repository: its steps run in order, as a runner would
run them (the install and the actions aside), on a first push, a later pull request and one that brings a bug.

The first run finds no baseline, writes it and the commit step pushes it; a later run gates on it and passes; a
run of a target with one more bug fails. The target is a planted one, on the model, for speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]
WORKFLOW = ROOT / "examples" / "github-actions.yml"
PROFILE = "sqs-standard"
ONE_BUG = "python:tests.conformance.planted:WrongMalformedHandleCode"
TWO_BUGS = "python:tests.conformance.planted:TwoBugs"


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def a_repository(tmp_path: Path) -> Path:
    """An emulator's repository with nothing of the suite's in it, cloned from its `origin`."""
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin), cwd=tmp_path)
    repo = tmp_path / "emulator"
    git("clone", "-q", str(origin), str(repo), cwd=tmp_path)
    (repo / "README").write_text("an emulator\n")
    git("add", "README", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start", cwd=repo)
    git("push", "-q", "-u", "origin", "HEAD:main", cwd=repo)
    return repo


def job_steps(event: str, target: str, repo: Path, skip: tuple[str, ...] = ()) -> dict[str, int]:
    """The job's `run` steps as GitHub runs them for `event`: a step without `if` runs while none has failed, one
    with `always()` whatever came before; each step's exit code by name."""
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["conformance"]
    matrix = {"${{ matrix.profile }}": PROFILE, "${{ github.event_name }}": event}

    def filled(text: str) -> str:
        for placeholder, value in matrix.items():
            text = text.replace(placeholder, value)
        return text

    env = {**os.environ, **{k: filled(str(v)) for k, v in job["env"].items()}, "SQS_TARGET": target,
           "PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    codes: dict[str, int] = {}
    failed = False
    for step in job["steps"]:
        name = step.get("name", "")
        if "run" not in step or name.startswith("Install") or name in skip:
            continue  # an action, or the install: the suite is installed here already
        condition = step.get("if", "success()")
        runs = {"success()": not failed, "always()": True,
                "github.event_name == 'push'": not failed and event == "push"}[condition]
        if not runs:
            continue
        done = subprocess.run(["bash", "-e", "-c", filled(step["run"])], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=900)
        assert "Traceback" not in done.stderr, done.stderr
        codes[name] = done.returncode
        failed = failed or done.returncode != 0
    return codes


def test_the_workflow_writes_and_commits_its_baseline_then_gates_on_it(tmp_path):
    repo = a_repository(tmp_path)
    baseline = f"sqs-conformance/baseline-{PROFILE}.json"

    first = job_steps("push", ONE_BUG, repo)
    assert first == {"Check every rule once against the baseline": 0, "Build the report": 0,
                     "Commit the baseline a first run wrote": 0}
    assert (repo / "runs" / "report" / "report.html").exists()
    pushed = git("show", f"origin/main:{baseline}", cwd=repo)  # committed and pushed, as the job would
    assert "HANDLE-MALFORMED" in pushed

    later = job_steps("pull_request", ONE_BUG, repo, skip=("Build the report",))
    assert later == {"Check every rule once against the baseline": 0}

    with_a_new_bug = job_steps("pull_request", TWO_BUGS, repo, skip=("Build the report",))
    assert with_a_new_bug == {"Check every rule once against the baseline": 1}
    assert git("status", "--porcelain", baseline, cwd=repo) == ""  # a pull request never rewrites it
