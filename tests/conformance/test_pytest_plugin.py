"""`pytest --sqs-target=...` runs the machines as tests, also under pytest-xdist."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("extra", [[], ["-n", "2"]])
def test_the_plugin_runs_the_suite_as_tests(tmp_path, extra):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--sqs-target=model", "--sqs-examples=10",
         "--sqs-seed=1", f"--sqs-out={tmp_path / 'runs'}", "-q", "-p", "no:cacheprovider", *extra, str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_a_failing_target_fails_its_test(tmp_path):
    conftest = tmp_path / "conftest.py"
    conftest.write_text(
        "import adapters.registry as registry\n"
        "from tests.conformance.planted import WrongMalformedHandleCode\n"
        "original = registry.make_target\n"
        "registry.make_target = lambda spec, profile: WrongMalformedHandleCode(profile) if spec == 'planted' "
        "else original(spec, profile)\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--sqs-target=planted",
         "--sqs-profile=sqs-standard", "--sqs-examples=40", "--sqs-seed=5", f"--sqs-out={tmp_path / 'runs'}", "-q",
         "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path.cwd())})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "HANDLE-MALFORMED" in done.stdout
