"""Text files through Hadoop's file systems: what the job writes it reads back as it was."""

import pytest

from sqs_conformance.reports import files

pytestmark = pytest.mark.xdist_group("spark")


def test_a_text_is_read_back_whole_as_written(spark, tmp_path):
    text = "first line\n  ünïcode, 🟢\n\nlast line without its newline"
    files.write_text(spark, str(tmp_path / "a.json"), text)
    assert files.read_text(spark, str(tmp_path / "a.json")) == text
    files.write_text(spark, str(tmp_path / "a.json"), "")
    assert files.read_text(spark, str(tmp_path / "a.json")) == ""
    assert files.read_text(spark, str(tmp_path / "absent.json")) is None
