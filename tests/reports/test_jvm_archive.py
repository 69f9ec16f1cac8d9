"""`report --jvm-archive DIR`: the first report builds the driver JVM's class archive, later ones start with it,
and one the JVM cannot use is removed and built again, never costing a report."""

import pytest

from sqs_conformance.reports.jvm_archive import JvmArchive
from sqs_conformance.reports.spark import java_banner
from tests.reports.conftest import step
from tests.reports.test_report_cli import sqs_conformance

pytestmark = pytest.mark.xdist_group("spark")


def test_the_archive_is_built_once_used_after_and_replaced_when_it_does_not_fit(tmp_path):
    (tmp_path / "t.jsonl").write_text(step("r1", 1, 0, verdict="divergence", rules=["VIS-TERMINATE"],
                                           divergences=[["VIS-TERMINATE"]], final=True) + "\n")
    archive = JvmArchive(tmp_path / "archive", java_banner()).archive
    archive.parent.mkdir()
    archive.write_bytes(b"not an archive")  # what a JVM cannot map: another Java's, or damaged

    def report(out):
        done = sqs_conformance("report", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / out),
                               "--jvm-archive", str(archive.parent))
        assert done.returncode == 0 and "1 distinct divergences" in done.stdout, done.stdout + done.stderr
        return [line for line in done.stdout.splitlines() if line.startswith("--jvm-archive")]

    assert report("first") == [f"--jvm-archive: {archive} could not be used (another Java, or damaged): removed,"
                               f" the next report builds it again"]
    assert not archive.exists()
    said = report("second")
    assert said[-1] == f"--jvm-archive: {archive} built; later reports start with it", said
    assert archive.stat().st_size > 10_000_000 and not list(archive.parent.glob("*.classes"))
    assert report("third") == []  # its JVM mapped the archive: otherwise it would say so and remove it
    assert archive.exists()
    assert (tmp_path / "third" / "junit.xml").read_text() == (tmp_path / "first" / "junit.xml").read_text()


def test_an_archive_folder_that_cannot_be_written_is_one_line(tmp_path):
    (tmp_path / "t.jsonl").write_text(step() + "\n")
    (tmp_path / "a-file").write_text("")
    done = sqs_conformance("report", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "out"),
                           "--jvm-archive", str(tmp_path / "a-file" / "archive"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("sqs-conformance: error: --jvm-archive")
    assert not (tmp_path / "out").exists()
