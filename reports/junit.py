"""JUnit XML for CI systems: a test suite per target and profile, a test case per rule of the profile."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model.rules import rules_for
from sqs_conformance.model.verdicts import RuleVerdict
from sqs_conformance.reports.page import column, verdict


def render(matrix: list[dict[str, Any]], divergences: list[dict[str, Any]]) -> str:
    suites = ET.Element("testsuites", name="sqs-conformance")
    found = {(column(d), d["rule"]): d for d in divergences}
    for key in sorted({(column(m), m["profile"]) for m in matrix}):
        name, profile = key
        cells = {m["rule"]: m for m in matrix if column(m) == name}
        suite = ET.SubElement(suites, "testsuite", name=name)
        failures = skipped = 0
        for r in rules_for(profile) if profile in PROFILES else []:
            case = ET.SubElement(suite, "testcase", classname=name, name=r.id)
            cell = cells.get(r.id)
            if (name, r.id) in found:
                d = found[(name, r.id)]
                failures += 1
                failure = ET.SubElement(case, "failure", message=f"expected {d['expected']}; observed "
                                                                 f"{d['observed']}", type=r.id)
                where = d["minimal_case"]
                failure.text = (f"{r.statement}\nminimal case: {where['case_steps']} steps, case {where['case']} "
                                f"of run {where['run_id']} in {where['file']}")
            elif verdict(cell) in (RuleVerdict.NOT_EXERCISED, RuleVerdict.UNDECIDED):
                skipped += 1
                why = "not exercised by any trace" if verdict(cell) is RuleVerdict.NOT_EXERCISED else \
                    "undecided: exercised only where any answer was permitted, it could not have failed"
                ET.SubElement(case, "skipped", message=why)
        suite.set("tests", str(len(suite)))
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"

