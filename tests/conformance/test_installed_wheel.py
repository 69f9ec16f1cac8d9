"""The wheel as a team installs it into its own project: everything under one namespace, `sqs_conformance`, so a
project with packages of its own named `model` or `reports` keeps them, and the pytest plugin still runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).parents[2]
pytestmark = pytest.mark.xdist_group("wheel")  # one worker builds the wheel, once, for both tests

TEAM_TEST = '''
import model
import reports


def test_the_team_s_own_packages_are_the_ones_imported():
    assert model.WHOSE == "the team's" and reports.WHOSE == "the team's"
'''


# What a copy of the repository to build from leaves out: environments, caches, builds (a build dir that an earlier
# build left half made fails the next: setuptools finds its dist-info there)
NOT_BUILT_FROM = shutil.ignore_patterns(".git", ".venv", ".sqs-conformance", ".hypothesis", "*_cache", "build",
                                        "runs", "site", "*.egg-info", "__pycache__", "*.so")


def _wheel_built(tmp_path_factory, **env: str) -> Path:
    out, source = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source") / "repository"
    shutil.copytree(REPOSITORY, source, ignore=NOT_BUILT_FROM)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                           capture_output=True, text=True, timeout=600, env=os.environ | env)
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = out.glob("sqs_conformance-*.whl")
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return _wheel_built(tmp_path_factory)


def test_without_a_c_compiler_the_wheel_holds_the_model_as_plain_python(tmp_path_factory):
    with zipfile.ZipFile(_wheel_built(tmp_path_factory, CC="false")) as archive:
        names = archive.namelist()
    model = [name for name in names if name.startswith("sqs_conformance/model/")]
    assert "sqs_conformance/model/core.py" in model
    assert [name for name in model if not name.endswith(".py")] == []


def test_the_wheel_holds_the_model_compiled_where_it_was_built(wheel):
    with zipfile.ZipFile(wheel) as archive:
        built = [name for name in archive.namelist() if name.startswith("sqs_conformance/model/core.")]
    assert any(name.endswith(".so") for name in built)  # this machine has a C compiler (.ci/setup.sh sees to it)


def test_the_wheel_installs_one_namespace_and_nothing_generic(wheel):
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        names = archive.namelist()
    assert {top for top in tops if not top.endswith(".dist-info")} == {"sqs_conformance"}
    # Every package of the repository's four folders, and the data they read at run time, travels with them
    packages = [p.relative_to(REPOSITORY) for folder in ("model", "adapters", "conformance", "reports")
                for p in (REPOSITORY / folder).rglob("__init__.py")]
    assert [p for p in packages if f"sqs_conformance/{p}" not in names] == []
    assert "sqs_conformance/conformance/witnesses/sqs-standard-virtual.json" in names
    assert "sqs_conformance/reports/log4j2.properties" in names


def test_a_project_with_its_own_model_and_reports_packages_runs_the_plugin(wheel, tmp_path):
    # The suite's dependencies come from this environment; the suite itself only from the wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
                   check=True, capture_output=True, timeout=600)
    project = tmp_path / "project"
    for package in ("model", "reports"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text('WHOSE = "the team\'s"\n')
    (project / "test_own.py").write_text(TEAM_TEST)
    where = subprocess.run([str(python), "-c", "import sqs_conformance.model as m; print(m.__file__)"],
                           capture_output=True, text=True, cwd=project, check=True).stdout
    assert where.startswith(str(venv)), where  # the installed wheel, not this checkout
    done = subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--sqs-target=model",
                           "--sqs-profile=sqs-standard", "--sqs-witnesses-only", f"--sqs-out={tmp_path / 'runs'}"],
                          capture_output=True, text=True, timeout=600, cwd=project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout  # the team's test and the suite's
