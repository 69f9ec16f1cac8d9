"""The hand-written emulator probes (benchmarks/emulator_probes, written from the documents without the suite) against
the suite: every divergence a probe shows must be reported by the suite under a rule a person would fix for it."""

from __future__ import annotations

import pytest

from benchmarks.emulator_probes import compare
from sqs_conformance.conformance import matrix


def probed(*records: tuple[str, str]) -> dict:
    return {"emulator": "fauxqs", "version": "1", "probes": [{"id": i, "verdict": v} for i, v in records]}


def cell(profile: str, **verdicts: str) -> matrix.Cell:
    return matrix.Cell("fauxqs", profile, verdicts={k.replace("_", "-"): v for k, v in verdicts.items()})


def test_a_probed_divergence_counts_as_reported_only_where_its_rule_diverges_in_its_profiles_cell():
    results = probed(("4.send-DelaySeconds=-1", "diverges"), ("5.ceiling-counted-from-receive", "diverges"),
                     ("12.fifo-delete-expired-handle", "diverges"), ("6.delete-twice", "conforms"))
    cells = [cell("sqs-standard", DELAY_HIDES="diverges", VIS_CEILING="conforms"),
             cell("sqs-fifo", DEL_FIFO_EXPIRED="undecided", DELAY_HIDES="diverges")]
    rows = {r.probe: r for r in compare.compare(results, cells)}
    assert set(rows) == {"4.send-DelaySeconds=-1", "5.ceiling-counted-from-receive", "12.fifo-delete-expired-handle"}
    assert rows["4.send-DelaySeconds=-1"].reported
    assert not rows["5.ceiling-counted-from-receive"].reported  # the suite said ✓ where the probe shows ✗
    assert not rows["12.fifo-delete-expired-handle"].reported  # a FIFO probe is looked up in the FIFO cell only
    assert rows["12.fifo-delete-expired-handle"].suite == {"DEL-FIFO-EXPIRED": "undecided"}


def test_either_of_two_rules_naming_one_fault_reports_it_and_an_unknown_probe_is_an_error():
    results = probed(("5.ceiling-not-reset-by-extend", "diverges"))
    (row,) = compare.compare(results, [cell("sqs-standard", VIS_CEILING="diverges")])
    assert row.reported
    with pytest.raises(KeyError, match="names no rule"):
        compare.compare(probed(("99.new-probe", "diverges")), [])


def test_every_probe_that_can_diverge_names_rules_of_the_suite():
    from sqs_conformance.model.rules import CATALOGUE

    from benchmarks.emulator_probes import edges
    known = {r.id for r in CATALOGUE}
    for probe in edges.PROBES:
        if probe.expected is not None:
            assert set(compare.rules_of(probe.id)) <= known, probe.id


def test_the_witnesses_report_every_divergence_the_probes_show_on_moto_server(tmp_path):
    """The probes and `--witnesses-only` on a moved clock, each on a fresh moto server: nothing probed is missed."""
    from benchmarks.emulator_probes import edges
    results = edges.run_emulator("moto-server", tmp_path / "probes")
    assert "error" not in results and any(p["verdict"] == "diverges" for p in results["probes"])
    cells = [matrix.check("moto-server", profile, examples=1, steps=5, seed=1, out_dir=tmp_path / "suite",
                          search=False) for profile in ("sqs-standard", "sqs-fifo")]
    assert all(not c.error and c.clock == "libfaketime" for c in cells), [c.error for c in cells]
    rows = compare.compare(results, cells)
    assert [(r.probe, r.suite) for r in rows if not r.reported] == []
