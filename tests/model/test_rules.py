"""The rule catalogue is the one place rules live: the model refers to them by id, and every rule cites."""

import pathlib
import re

from model import CATALOGUE, RULES, rule
from model.profiles import PROFILES
from model.rules import ALL_PROFILES

MODEL_SOURCES = [p for p in pathlib.Path("model").glob("*.py") if p.name != "rules.py"]
RULE_ID_IN_CODE = re.compile(r'"([A-Z0-9]+(?:-[A-Z0-9]+)+)"')


def ids_in_model_code() -> set[str]:
    found = set()
    for path in MODEL_SOURCES:
        found |= {m for m in RULE_ID_IN_CODE.findall(path.read_text()) if m in RULES or "-" in m}
    return {m for m in found if not m.startswith(("AWS", "SQS-"))}


def test_ids_are_unique_and_well_formed():
    ids = [r.id for r in CATALOGUE]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Z0-9]+(-[A-Z0-9]+)+", i) for i in ids)


def test_every_rule_cites_a_seed_or_the_evidence():
    for r in CATALOGUE:
        assert re.search(r"seed 00[0-4]|EVIDENCE\.md|DOC", r.source), r.id
        assert r.statement and r.profiles <= ALL_PROFILES and r.profiles, r.id


def test_every_id_the_model_uses_is_in_the_catalogue():
    unknown = {i for i in ids_in_model_code() if i not in RULES}
    assert not unknown, unknown


def test_every_catalogue_rule_is_attributed_somewhere_in_the_model():
    unused = {r.id for r in CATALOGUE} - ids_in_model_code()
    assert not unused, f"rules the model never attributes an outcome to: {unused}"


def test_each_profile_has_its_rules():
    assert "FIFO-GROUP-LOCK" in PROFILES["sqs-fifo"].rule_ids
    assert "FIFO-GROUP-LOCK" not in PROFILES["sqs-standard"].rule_ids
    assert "LOCK-UNRECEIVED" in PROFILES["sqs-2008"].rule_ids
    assert "SMQ-NEW-HANDLE" in PROFILES["smq"].rule_ids and "VIS-CEILING" not in PROFILES["smq"].rule_ids


def test_unknown_rule_is_named():
    try:
        rule("VIS-NOPE")
    except KeyError as error:
        assert "VIS-NOPE" in str(error)
    else:
        raise AssertionError("an unknown id must fail")
