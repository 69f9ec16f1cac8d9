"""The rule catalogue is the one place rules live: the model refers to them by id, and every rule cites sources
that resolve inside the repository (docs/evidence.md)."""

import json
import os
import pathlib
import re

import botocore.session
import pytest

from sqs_conformance.model import CATALOGUE, RULES, rule
from sqs_conformance.model.profiles import PROFILES
from sqs_conformance.model import rules as rules_module
from sqs_conformance.model.rules import ALL_PROFILES
from sqs_conformance.model.sources import EVIDENCE, Source, row, seed

EVIDENCE_DOC = pathlib.Path(__file__).parents[2] / "docs" / "evidence.md"
# The seed documents are the workplace's, not the repository's (their text is not ours to copy): quotes are checked
# against them where they are at hand, and their ids against docs/evidence.md always.
SEEDS = pathlib.Path(os.environ.get("SQS_CONFORMANCE_SEEDS", pathlib.Path(__file__).parents[3] / "shared" / "seeds"))

MODEL_SOURCES = [p for p in pathlib.Path("model").glob("*.py") if p.name != "rules.py"]
QUOTED_RULE_ID = re.compile(r'"([A-Z0-9]+(?:-[A-Z0-9]+)+)"')


def constant(rule_id: str) -> str:
    return rule_id.replace("-", "_")


def names_in_model_code() -> set[str]:
    return {name for path in MODEL_SOURCES for name in re.findall(r"\b[A-Z][A-Z0-9_]+\b", path.read_text())}


def test_ids_are_unique_and_well_formed():
    ids = [r.id for r in CATALOGUE]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Z0-9]+(-[A-Z0-9]+)+", i) for i in ids)


def evidence_ids(heading: str) -> set[str]:
    """The ids in the first column of the tables under the sections whose heading starts with `heading`."""
    ids, inside = set(), False
    for line in EVIDENCE_DOC.read_text().splitlines():
        if line.startswith("## "):
            inside = line[3:].startswith(heading)
        elif inside and (m := re.match(r"\| `([a-z0-9-]+)` \|", line)):
            ids.add(m.group(1))
    return ids


DOCUMENTS = evidence_ids("Documents")
ROWS = evidence_ids("Amazon SQS") | evidence_ids("Alibaba")


def test_the_evidence_document_lists_documents_and_rows():
    assert {"seed-000", "seed-004", "botocore"} <= DOCUMENTS
    assert {"ceiling", "cmv-expired", "fifo-groups", "smq-change", "sqs2008-lock"} <= ROWS


def unresolved(source: Source) -> str | None:
    """Why this citation does not resolve in docs/evidence.md, or None where it does."""
    if source.document == EVIDENCE:
        return None if source.row in ROWS else f"no evidence row {source.row!r}"
    if source.document not in DOCUMENTS:
        return f"no document {source.document!r}"
    return None if source.quote else f"{source.document} cited without the words the rule rests on"


def test_every_rule_cites_sources_that_resolve_in_the_repository():
    for r in CATALOGUE:
        assert r.statement and r.profiles <= ALL_PROFILES and r.profiles and r.sources, r.id
        assert not [why for s in r.sources if (why := unresolved(s))], r.id


def test_a_citation_the_evidence_document_lacks_is_caught():
    assert unresolved(row("ceiling")) is None and unresolved(seed("002", "12 hours")) is None
    assert unresolved(row("no-such-row")) == "no evidence row 'no-such-row'"
    assert unresolved(seed("009", "words")) == "no document 'seed-009'"
    assert unresolved(Source("seed-002")) == "seed-002 cited without the words the rule rests on"


def plain(text: str) -> str:
    """Markdown and line breaks out of a document's text, so a quote is found however it was typeset."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"\s+", " ", re.sub(r"[\\*`]", "", text))


def test_quotes_of_the_sqs_api_model_are_in_the_botocore_installed():
    api = plain(json.dumps(botocore.session.get_session().get_service_data("sqs")))
    quotes = [(r.id, s.quote) for r in CATALOGUE for s in r.sources if s.document == "botocore"]
    assert quotes
    for rule_id, quote in quotes:
        assert quote and plain(quote) in api, (rule_id, quote)


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not on this machine")
def test_quotes_of_the_seed_documents_are_in_them():
    texts = {f"seed-{path.name[:3]}": plain(path.read_text()) for path in SEEDS.glob("00*.txt")}
    for r in CATALOGUE:
        for s in r.sources:
            if s.document.startswith("seed-"):
                assert s.quote and plain(s.quote) in texts[s.document], (r.id, s.document, s.quote)


def test_each_rule_has_its_constant_and_each_constant_its_rule():
    for r in CATALOGUE:
        assert getattr(rules_module, constant(r.id)) == r.id
    constants = {value for name, value in vars(rules_module).items()
                 if name.isupper() and isinstance(value, str) and "-" in value and value not in ALL_PROFILES}
    assert constants == set(RULES)


def test_the_model_names_rules_by_constant_not_by_string():
    quoted = {(path.name, m) for path in MODEL_SOURCES for m in QUOTED_RULE_ID.findall(path.read_text()) if m in RULES}
    assert not quoted, f"rule ids spelt as strings (a typo there would pass silently): {sorted(quoted)}"


def test_every_catalogue_rule_is_attributed_somewhere_in_the_model():
    unused = {r.id for r in CATALOGUE if constant(r.id) not in names_in_model_code()}
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
