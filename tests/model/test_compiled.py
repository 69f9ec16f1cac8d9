"""The model compiled (setup.py, with Cython) decides as its plain source does, and a build never runs for a source
changed since it was made (model/compiled.py)."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sqs_conformance.model import Model
from sqs_conformance.model.compiled import PLAIN_ENV, builds_not_to_run, compiled_modules

ROOT = Path(__file__).resolve().parents[2]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def decisions() -> dict:
    """What the model decides on benchmarks.model_ops' workload in each profile, its own answers checked with every
    fifth a second late from the middle on (so that some diverge), as one hash; how many diverged; and which of its
    modules ran compiled."""
    from benchmarks.model_ops import run_model, workload

    lines, diverged = [], 0
    for profile in ("sqs-standard", "sqs-fifo", "sqs-2008", "smq"):
        _, _, recorded = run_model(profile, workload(3000), backlog=10)
        checker = Model(profile)
        for i, (op, at, response) in enumerate(recorded):
            late = i > len(recorded) // 2 and i % 5 == 4
            verdict = checker.observe(op, at + late, response)
            diverged += bool(verdict.divergences)
            lines.append(repr((type(op).__name__, verdict.consistent, verdict.unseen, verdict.outcome.rules,
                               verdict.outcome.undecided, verdict.outcome.situations, verdict.decisive,
                               [(d.rules, d.expected, d.observed) for d in verdict.divergences])))
    return {"hash": hashlib.sha256("\n".join(lines).encode()).hexdigest(), "diverged": diverged,
            "compiled": compiled_modules()}


def _decided_in_a_process(plain: bool) -> dict:
    env = {key: value for key, value in os.environ.items() if key != PLAIN_ENV} | ({PLAIN_ENV: "1"} if plain else {})
    done = subprocess.run([sys.executable, "-c", "import json, tests.model.test_compiled as t; "
                                                 "print(json.dumps(t.decisions()))"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def test_the_compiled_model_decides_as_its_source():
    compiled, plain = _decided_in_a_process(plain=False), _decided_in_a_process(plain=True)
    if not compiled["compiled"]:
        pytest.skip("the model is not compiled here: setup.py found no Cython or no C compiler at install")
    assert plain["compiled"] == []  # SQS_CONFORMANCE_PLAIN_MODEL: every module from its source
    assert "sqs_conformance.model.core" in compiled["compiled"]
    assert compiled["diverged"] > 0  # the hash covers diverging steps too
    assert compiled == plain | {"compiled": compiled["compiled"]}


def _module_pair(folder: Path, name: str, source_newer: bool) -> None:
    source, build = folder / f"{name}.py", folder / f"{name}{SUFFIX}"
    source.write_text("")
    build.write_bytes(b"")
    older, newer = (build, source) if source_newer else (source, build)
    os.utime(older, (1_000_000, 1_000_000))
    os.utime(newer, (2_000_000, 2_000_000))


def test_a_build_older_than_its_source_runs_from_the_source(tmp_path):
    _module_pair(tmp_path, "kept", source_newer=False)
    _module_pair(tmp_path, "edited", source_newer=True)
    (tmp_path / f"orphan{SUFFIX}").write_bytes(b"")  # no source to run instead: left to the import system
    assert builds_not_to_run(tmp_path, plain_wanted=False) == {"edited"}
    assert builds_not_to_run(tmp_path, plain_wanted=True) == {"kept", "edited"}
