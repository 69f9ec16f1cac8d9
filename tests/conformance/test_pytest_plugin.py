"""`pytest --sqs-target=...` runs the machines as tests, also under pytest-xdist."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).parents[2]


@pytest.mark.parametrize("extra", [[], ["-n", "2"]])
def test_the_plugin_runs_the_suite_as_tests(tmp_path, extra):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--sqs-target=model", "--sqs-examples=10", "--sqs-budget=0",
         "--sqs-seed=1", f"--sqs-out={tmp_path / 'runs'}", "-q", "-p", "no:cacheprovider", *extra, str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_a_failing_target_fails_its_test(tmp_path):
    conftest = tmp_path / "conftest.py"
    conftest.write_text(
        "import sqs_conformance.adapters.registry as registry\n"
        "from tests.conformance.planted import WrongMalformedHandleCode\n"
        "original = registry.make_target\n"
        "registry.make_target = lambda spec, profile: WrongMalformedHandleCode(profile) if spec == 'planted' "
        "else original(spec, profile)\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--sqs-target=planted",
         "--sqs-profile=sqs-standard", "--sqs-examples=40", "--sqs-budget=0", "--sqs-seed=5",
         f"--sqs-out={tmp_path / 'runs'}", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path.cwd())})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "HANDLE-MALFORMED" in done.stdout


IN_HOUSE = '''
from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.model.values import DeleteMessage, Error, Ok


class LenientQueue(ModelTarget):
    """A team's queue that accepts a delete through a malformed handle."""

    def execute(self, op):
        response = super().execute(op)
        if isinstance(op, DeleteMessage) and isinstance(response, Error) and response.code == "ReceiptHandleIsInvalid":
            return Ok()
        return response
'''


def test_in_another_project_beside_its_own_tests(tmp_path):
    """A team's own folder: its tests, its in-house queue class, the plugin adding one test per profile with a
    marker, findings written, JUnit XML for its CI."""
    import xml.etree.ElementTree as ET

    (tmp_path / "myqueue.py").write_text(IN_HOUSE)
    (tmp_path / "test_own.py").write_text("def test_the_teams_own():\n    assert True\n")

    def pytest(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                               "--sqs-target=python:myqueue:LenientQueue", "--sqs-profile=sqs-standard",
                               "--sqs-witnesses-only", *args], capture_output=True, text=True, timeout=600,
                              cwd=tmp_path)

    done = pytest("--junitxml=junit.xml")
    assert done.returncode == 1, done.stdout + done.stderr
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    cases = {(c.get("classname"), c.get("name")): c for c in junit.iter("testcase")}
    suite = ("sqs-conformance.python:myqueue:LenientQueue", "sqs-standard")
    assert set(cases) == {("test_own", "test_the_teams_own"), suite}
    failure = cases[suite].find("failure")
    assert failure is not None and "HANDLE-MALFORMED" in failure.get("message", "") + (failure.text or "")
    assert "minimal cases:" in done.stdout
    assert list((tmp_path / "runs").rglob("HANDLE-MALFORMED.json"))  # written like `run` writes them

    only_own = pytest("-m", "not sqs_conformance")
    assert only_own.returncode == 0 and "1 passed, 1 deselected" in only_own.stdout, only_own.stdout
    only_suite = pytest("-m", "sqs_conformance")
    assert only_suite.returncode == 1 and "1 failed, 1 deselected" in only_suite.stdout, only_suite.stdout


def test_its_defaults_are_runs():
    from sqs_conformance.conformance import pytest_plugin
    from sqs_conformance.conformance.cli import run

    class Options:
        """What the plugin declares, as pytest's parser would take it."""

        def __init__(self):
            self.defaults = {}

        def getgroup(self, name):
            return self

        def addoption(self, name, **kwargs):
            self.defaults[name] = kwargs.get("default")

    declared = Options()
    pytest_plugin.pytest_addoption(declared)
    runs = {p.name: p.default for p in run.params}
    assert declared.defaults["--sqs-examples"] == runs["examples"]
    assert declared.defaults["--sqs-steps"] == runs["steps"]
    assert declared.defaults["--sqs-budget"] is runs["budget"] is None  # both: the clock's default budget


def test_a_profile_the_target_does_not_speak_is_skipped_with_its_reason(tmp_path):
    """The project's own in-house example speaks sqs-standard only: its FIFO test is skipped, in one line."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
                           "--sqs-target=python:examples.inhouse_queue:InHouseQueue", "--sqs-witnesses-only",
                           f"--sqs-out={tmp_path / 'runs'}"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY)})  # where examples/ is importable
    assert done.returncode == 0, done.stdout + done.stderr
    # Both counted as collected, as a test file's are
    assert "collected 2 items" in done.stdout and "1 passed, 1 skipped" in done.stdout, done.stdout
    (skipped,) = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped.endswith("InHouseQueue speaks sqs-standard, not sqs-fifo"), skipped
    assert "Traceback" not in done.stdout + done.stderr


def test_many_consumers_as_tests_of_their_own_pass_on_the_model_and_fail_with_a_timeline(tmp_path):
    conftest = tmp_path / "conftest.py"
    conftest.write_text(
        "import sqs_conformance.adapters.registry as registry\n"
        "from tests.concurrent.targets import ForgetfulConsumers\n"
        "original = registry.make_target\n"
        "registry.make_target = lambda spec, profile: ForgetfulConsumers(profile) if spec == 'forgetful' "
        "else original(spec, profile)\n")
    arguments = ["--sqs-profile=sqs-fifo", "--sqs-examples=5", "--sqs-budget=0", "--sqs-seed=1", "--sqs-clients=4",
                 f"--sqs-out={tmp_path / 'runs'}", "-q", "-p", "no:cacheprovider", "-rA", str(tmp_path)]
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    model = subprocess.run([sys.executable, "-m", "pytest", "--sqs-target=model", *arguments],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path, env=environment)
    assert model.returncode == 0 and "2 passed" in model.stdout, model.stdout + model.stderr
    assert "sqs-fifo-4-clients" in model.stdout
    forgetful = subprocess.run([sys.executable, "-m", "pytest", "--sqs-target=forgetful", *arguments],
                               capture_output=True, text=True, timeout=600, cwd=tmp_path, env=environment)
    assert forgetful.returncode == 1, forgetful.stdout + forgetful.stderr
    assert "1 failed, 1 passed" in forgetful.stdout and "RCV-EXCLUSIVE" in forgetful.stdout
    assert "client 0" in forgetful.stdout and "TIMELINE.txt" in forgetful.stdout
