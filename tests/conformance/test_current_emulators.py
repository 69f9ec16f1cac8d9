"""The emulators' current releases beside the pinned ones: fauxqs-current on the Node installed into its own folder
(npm's `node`), moto-server-current in a virtualenv of its own; both taken by `run` and `matrix`, and shown beside
their pinned entries on the matrix's page."""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import boto3
import pytest

from sqs_conformance.adapters import emulators
from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.registry import SPECS, is_known
from sqs_conformance.conformance import matrix
from sqs_conformance.model.rules import rules_for
from tests.cli import SQS_CONFORMANCE
from tests.loopback import LOOPBACK_V4, listening_addresses

ROOT = Path(__file__).resolve().parents[2]
CURRENT = {"moto-server-current": "moto-server", "fauxqs-current": "fauxqs"}
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="Node.js and npm are needed for the npm emulators")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One folder of emulators for the module: each release is installed once, as a user's first run does."""
    return tmp_path_factory.mktemp("emulators")


def version_of(answer: str) -> tuple[int, ...]:
    return tuple(int(part) for part in answer.strip().lstrip("v").split("."))


def test_the_current_releases_are_entries_of_their_own_beside_the_pinned_ones():
    for name, pinned in CURRENT.items():
        current, old = emulators.EMULATORS[name], emulators.EMULATORS[pinned]
        assert current.current_of == pinned and current.version != emulators.installed_version(old)
        assert re.fullmatch(r"\d+\.\d+\.\d+", current.version), "an exact release, not a range"
        assert all(current.version in package for package in current.packages)
        assert current.folder() != old.folder()
    assert emulators.EMULATORS["moto-server-current"].installer == "pip"  # not the project's own moto
    fauxqs = emulators.EMULATORS["fauxqs-current"]
    assert version_of(fauxqs.node) >= (22, 5) and f"node@{fauxqs.node}" in fauxqs.requirements()
    assert emulators.EMULATORS["fauxqs"].requirements() == ("fauxqs@1.9.2",)  # the pinned one: the system's Node


@pytest.mark.xdist_group("current-emulators")  # one worker installs each release once
@pytest.mark.parametrize("name", [
    "moto-server-current",
    pytest.param("fauxqs-current", marks=needs_npm),
])
def test_a_current_release_is_installed_in_its_own_folder_served_on_loopback_only_and_stopped_by_pid(home, name):
    emu = emulators.EMULATORS[name]
    server = emulators.start(emu, home=home)
    try:
        assert server.process.poll() is None
        assert listening_addresses(server.port) == {LOOPBACK_V4}
        client = boto3.client("sqs", endpoint_url=server.url, region_name="us-east-1",
                              aws_access_key_id="x", aws_secret_access_key="x")
        url = client.create_queue(QueueName="current-release")["QueueUrl"]
        client.send_message(QueueUrl=url, MessageBody="hello")
        messages = client.receive_message(QueueUrl=url, VisibilityTimeout=30)["Messages"]
        assert [m["Body"] for m in messages] == ["hello"]
        assert client.receive_message(QueueUrl=url).get("Messages") is None  # hidden while in flight
    finally:
        server.stop()
    assert server.process.returncode is not None and listening_addresses(server.port) == set()
    with pytest.raises(ProcessLookupError):
        os.kill(server.process.pid, 0)
    folder = home / f"{name}-{emu.version}"
    assert json.loads((folder / "installed.json").read_text()) == list(emu.requirements())
    if emu.installer == "pip":  # its own moto, in its own virtualenv: not the project's
        assert server.process.args[0] == str(folder / "venv" / "bin" / "python")
        installed = subprocess.run([server.process.args[0], "-c", "import moto; print(moto.__version__)"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        assert installed == emu.version
        import moto

        assert moto.__version__ != installed
    else:
        assert (folder / "node_modules" / "fauxqs" / "package.json").is_file()
        assert json.loads((folder / "node_modules" / "fauxqs" / "package.json").read_text())["version"] == emu.version


@pytest.mark.xdist_group("current-emulators")
@needs_npm
def test_fauxqs_current_runs_on_the_node_of_its_own_folder_at_least_22_5(home):
    emu = emulators.EMULATORS["fauxqs-current"]
    folder = home / f"fauxqs-current-{emu.version}"
    server = emulators.start(emu, home=home)
    try:
        executable = os.readlink(f"/proc/{server.process.pid}/exe")  # what the kernel runs, not what was asked
        # the launcher's own line, once it listened: the package it loaded and the Node it ran on (printed just
        # after the port opens: the start may see the port first)
        said = _launcher_line(folder / "server.log")
    finally:
        server.stop()
    assert Path(executable).is_relative_to(folder.resolve())
    assert said == {"serving": "fauxqs", "version": emu.version, "node": f"v{emu.node}", "url": server.url}
    assert version_of(said["node"]) >= (22, 5)
    system_node = shutil.which("node")
    if system_node is not None:  # the system's Node is not the one it ran on
        assert Path(system_node).resolve() != Path(executable).resolve()
    assert emulators.installed_version(emu) == f"{emu.version} on Node {emu.node}"


def _launcher_line(log: Path, seconds: float = 10.0) -> dict | None:
    """The last JSON line of the launcher's log, once there is one (None if none came within `seconds`)."""
    ends = time.monotonic() + seconds
    while True:
        said = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
        if said or time.monotonic() >= ends:
            return said[-1] if said else None
        time.sleep(0.05)


def test_a_node_that_did_not_install_or_is_another_version_is_refused_in_one_line(tmp_path):
    emu = emulators.Emulator("fauxqs-next", "9.9.9", "npm", ("fauxqs@9.9.9",), node="22.23.3")
    with pytest.raises(TargetError, match=r"its Node 22\.23\.3 \(npm package node@22\.23\.3\) gave no runnable "
                                          r".*node_modules/node/bin/node.*npm's install scripts must run") as error:
        emulators._check_node(emu, tmp_path)
    assert "\n" not in str(error.value)
    binary = tmp_path / "node_modules" / "node" / "bin" / "node"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho v20.20.2\n")
    binary.chmod(0o755)
    with pytest.raises(TargetError, match="it answered v20.20.2"):
        emulators._check_node(emu, tmp_path)
    binary.write_text("#!/bin/sh\necho v22.23.3\n")
    emulators._check_node(emu, tmp_path)  # the version asked for: accepted


def test_run_and_matrix_take_the_current_releases_and_refuse_a_misspelt_one_in_one_line():
    for name in CURRENT:
        assert is_known(name) and is_known(f"{name}:faketime") and name in SPECS
    assert matrix.known(("fauxqs-current", "moto-server-current")) == ["fauxqs-current", "moto-server-current"]
    assert {"fauxqs-current", "moto-server-current"} <= set(matrix.known(()))  # the default: every emulator
    for command in (["run", "--target", "fauxqs-currant"], ["matrix", "--emulator", "fauxqs-currant", "--no-page"]):
        result = subprocess.run([*SQS_CONFORMANCE, *command], capture_output=True, text=True, timeout=60,
                                cwd=ROOT)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "fauxqs-currant" in result.stderr
        assert "fauxqs-current" in result.stderr and "moto-server-current" in result.stderr  # the known ones


def cell(emulator: str, version: str, checked: str, verdicts: dict[str, str]) -> matrix.Cell:
    every = {r.id: "conforms" for r in rules_for("sqs-standard")}
    return matrix.Cell(emulator, "sqs-standard", version, "libfaketime", 120.0, 100, every | verdicts,
                       checked=checked, command=f"sqs-conformance matrix --emulator {emulator}")


def test_the_matrix_shows_each_current_release_beside_its_pinned_one_with_the_day_each_was_measured(tmp_path):
    cells = [cell("moto-server", "5.2.1", "2026-11-27T02:18:00+00:00", {}),
             cell("fauxqs", "1.9.2", "2026-11-27T02:39:00+00:00", {"DEL-REMOVES": "diverges"}),
             cell("local-aws-sqs", "2.0.2", "2026-11-27T02:45:00+00:00", {}),
             # checked later, by another command: appended, yet shown beside their pinned entries
             cell("fauxqs-current", "2.4.1 on Node 22.23.3", "2026-11-28T09:00:00+00:00", {}),
             cell("moto-server-current", "5.2.5", "2026-11-28T10:00:00+00:00", {"VIS-RANGE": "diverges"})]
    assert matrix.side_by_side(cells) == [cells[0], cells[4], cells[1], cells[3], cells[2]]  # each once
    text = matrix.markdown(cells)
    assert ("\n| rule | moto-server 5.2.1 | moto-server-current 5.2.5 | fauxqs 1.9.2 | "
            "fauxqs-current 2.4.1 on Node 22.23.3 | local-aws-sqs 2.0.2 |\n") in text
    assert "| measured | 2026-11-27 | 2026-11-28 | 2026-11-27 | 2026-11-28 | 2026-11-27 |" in text
    assert "| DEL-REMOVES | ✓ | ✓ | **✗** | ✓ | ✓ |" in text
    assert "| VIS-RANGE | ✓ | **✗** | ✓ | ✓ | ✓ |" in text
    # a current release whose pinned entry is not on the page keeps its place
    alone = matrix.markdown([cells[2], cells[3]])
    assert "\n| rule | local-aws-sqs 2.0.2 | fauxqs-current 2.4.1 on Node 22.23.3 |\n" in alone
    assert matrix.side_by_side(cells[:3]) == cells[:3]  # no current release: the order given
    # merged from the matrices that checked them, as `matrix --merge` does: one page, both columns side by side
    matrix.save(cells[:3], tmp_path / "pinned.json")
    matrix.save(cells[3:], tmp_path / "current.json")
    page = tmp_path / "emulators.md"
    result = subprocess.run([*SQS_CONFORMANCE, "matrix", "--merge", str(tmp_path / "pinned.json"),
                             "--merge", str(tmp_path / "current.json"), "--page", str(page)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    written = page.read_text()
    assert ("\n| rule | moto-server 5.2.1 | moto-server-current 5.2.5 | fauxqs 1.9.2 | "
            "fauxqs-current 2.4.1 on Node 22.23.3 | local-aws-sqs 2.0.2 |\n") in written
    assert ("| emulators | moto-server 5.2.1, moto-server-current 5.2.5, fauxqs 1.9.2, "
            "fauxqs-current 2.4.1 on Node 22.23.3, local-aws-sqs 2.0.2 |") in written


def test_the_emulator_page_has_each_current_release_measured_beside_its_pinned_one():
    """docs/emulators.md, as `sqs-conformance matrix` wrote it: a column per release, current beside pinned."""
    text = (ROOT / "docs" / "emulators.md").read_text()
    for profile in matrix.PROFILES:
        table = text[text.index(f"## {profile}\n"):]
        head = table.splitlines()[2]
        measured = table.splitlines()[4]
        columns = [c.strip() for c in head.strip("|").split("|")][1:]
        names = [c.split(" ")[0] for c in columns]
        assert measured.startswith("| measured | ")
        days = [d.strip() for d in measured.strip("|").split("|")][1:]
        assert len(days) == len(names) and len(set(names)) == len(names)  # each emulator once, each dated
        for current, pinned in CURRENT.items():
            assert names.index(current) == names.index(pinned) + 1, f"{profile}: {current} beside {pinned}"
            version = emulators.installed_version(emulators.EMULATORS[current])
            assert columns[names.index(current)] == f"{current} {version}", "a pin moved: run the matrix on it"
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", days[names.index(current)])
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", days[names.index(pinned)])
