"""benchmarks/record.py: each benchmark writes its own section of docs/benchmarks.md, dated, with versions and the
machine, and leaves the other sections as they were."""

import re
import sys
from pathlib import Path

import pytest

from benchmarks import record

ROOT = Path(__file__).resolve().parents[2]


def run(monkeypatch, path, name, *argv, doc="What it measures.\n\nHow.", prints=()):
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *argv])
    with record.recorded(name, doc, path=path):
        for line in prints:
            print(line)


def test_a_benchmark_writes_its_own_section_dated_with_its_command_versions_and_machine(tmp_path, monkeypatch,
                                                                                         capsys):
    page = tmp_path / "docs" / "benchmarks.md"
    run(monkeypatch, page, "main_command", "--trials", "2", prints=["witnesses only   5.1 s"])
    assert "witnesses only   5.1 s" in capsys.readouterr().out  # still printed as before
    text = page.read_text()
    section = record.sections(text)["main_command"]
    assert "```text\nwitnesses only   5.1 s\n```" in section
    assert "What it measures." in section and "How." not in section
    assert re.search(r"\| measured \| \d{4}-\d\d-\d\d \d\d:\d\d UTC, for \d+\.\d min \|", section)
    assert "| command | `python3 -m benchmarks.main_command --trials 2` |" in section
    versions = re.search(r"\| versions \| (.*) \|", section).group(1)
    assert versions.startswith("Python 3.") and "sqs-conformance " in versions
    assert all(f"{package} " in versions for package in ("moto", "pyspark", "hypothesis"))
    assert re.search(r"\| machine \| \d+ cores, .*load average", section)
    # every other benchmark has its place, saying which command fills it
    assert "Not measured yet: `python3 -m benchmarks.interrupt` writes this section." in text
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(record.BENCHMARKS)


def test_a_second_benchmark_and_a_rerun_replace_only_their_own_section(tmp_path, monkeypatch):
    page = tmp_path / "benchmarks.md"
    run(monkeypatch, page, "main_command", prints=["first: 40.0 s"])
    run(monkeypatch, page, "interrupt", prints=["stop: 0.4 s"])
    run(monkeypatch, page, "main_command", prints=["first: 41.0 s"])
    text = page.read_text()
    assert "first: 41.0 s" in text and "first: 40.0 s" not in text and "stop: 0.4 s" in text
    assert text.count("<!-- benchmark:main_command -->") == 1
    assert text.index("## main_command") < text.index("## interrupt") < text.index("## model_ops")


def test_a_failed_run_help_and_no_record_leave_the_page_alone(tmp_path, monkeypatch):
    page = tmp_path / "benchmarks.md"
    run(monkeypatch, page, "interrupt", prints=["stop: 0.4 s"])
    before = page.read_text()
    monkeypatch.setattr(sys, "argv", ["interrupt.py"])
    with pytest.raises(RuntimeError), record.recorded("interrupt", "", path=page):
        print("half a figure")
        raise RuntimeError("the server did not start")
    with pytest.raises(SystemExit), record.recorded("interrupt", "", path=page):
        print("half a figure")
        sys.exit("the baseline needs DuckDB")
    run(monkeypatch, page, "interrupt", "--help", prints=["usage: ..."])
    run(monkeypatch, page, "interrupt", "--no-record", "--trials", "1", prints=["stop: 9.9 s"])
    assert sys.argv == ["interrupt.py", "--trials", "1"]  # the benchmark never sees --no-record
    assert page.read_text() == before


def test_an_unknown_benchmark_name_is_refused():
    with pytest.raises(ValueError, match="add it to benchmarks/record.py"), record.recorded("nope", ""):
        pass


def test_every_benchmark_records_under_its_own_name_and_the_page_has_its_section():
    mains = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if "def main(" in p.read_text())
    assert mains == sorted(record.BENCHMARKS)
    for name in mains:
        source = (ROOT / "benchmarks" / f"{name}.py").read_text()
        assert f'with recorded("{name}", __doc__):' in source.split('if __name__ == "__main__":')[1]
    assert list(record.sections(record.PAGE.read_text())) == list(record.BENCHMARKS)
