"""Writes docs/rules.md from the rule catalogue (sqs_conformance.model.rules), so the page cannot drift from it.

    python3 docs/rules_page.py           # write docs/rules.md
    python3 docs/rules_page.py --check   # exit 1 if docs/rules.md is not what the catalogue gives now

Each rule's sources link to their entry of docs/evidence.md: a document to its section, an evidence row to the
section holding that row (mkdocs checks the anchors when it builds strictly).
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

from sqs_conformance.model.rules import CATALOGUE, Certainty, Rule
from sqs_conformance.model.sources import EVIDENCE, Source

DOCS = Path(__file__).resolve().parent
PAGE = DOCS / "rules.md"
EVIDENCE_PAGE = DOCS / "evidence.md"
PROFILES = ("sqs-standard", "sqs-fifo", "sqs-2008", "smq")


def slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc extension) gives a heading."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def sections(evidence: str) -> dict[str, str]:
    """Each id of docs/evidence.md's tables (`| `id` | ...`) to the anchor of the section it is listed under."""
    where: dict[str, str] = {}
    anchor = ""
    for line in evidence.splitlines():
        if line.startswith("## "):
            anchor = slug(line[3:])
        found = re.match(r"\| `([^`]+)` \|", line)
        if found and anchor:
            where.setdefault(found.group(1), anchor)
    return where


def source(s: Source, anchors: dict[str, str]) -> str:
    entry = s.row if s.document == EVIDENCE else s.document
    if entry not in anchors:
        raise SystemExit(f"rules_page: {entry!r} is not an entry of {EVIDENCE_PAGE}")
    what = "evidence row" if s.document == EVIDENCE else "document"
    text = f"{what} [`{entry}`](evidence.md#{anchors[entry]})"
    return text + (f": “{s.quote}”" if s.quote else "")


def profiles(rule: Rule) -> str:
    return ", ".join(p for p in PROFILES if p in rule.profiles)


def page(rules: tuple[Rule, ...] = CATALOGUE, evidence: str | None = None) -> str:
    anchors = sections(EVIDENCE_PAGE.read_text() if evidence is None else evidence)
    hedged = sum(r.certainty is Certainty.HEDGED for r in rules)
    lines = ["# Rules", "",
             "<!-- Written by `python3 docs/rules_page.py` from the rule catalogue (model/rules.py): do not edit by "
             "hand. A test fails when this page and the catalogue differ. -->", "",
             f"The model checks {len(rules)} rules, each defined once in `model/rules.py`: an id, a one-line "
             "statement, the profiles it applies to, and the sources it rests on, each an entry of "
             "[the evidence](evidence.md). A rule is **firm** where the evidence pins one outcome, **hedged** "
             f"({hedged} of them) where it conflicts or is silent and the model permits every outcome it leaves "
             "open. `sqs-conformance rules [--profile P]` prints the same catalogue.", "",
             "| profile | rules |", "|---|---|"]
    lines += [f"| `{p}` | {sum(p in r.profiles for r in rules)} |" for p in PROFILES]
    lines += ["", "| rule | profiles | firm or hedged | statement |", "|---|---|---|---|"]
    for r in rules:
        lines.append(f"| [{r.id}](#{slug(r.id)}) | {profiles(r)} | {r.certainty.value} | {_cell(r.statement)} |")
    for r in rules:
        lines += ["", f"## {r.id}", "", r.statement, "",
                  f"- profiles: {profiles(r)}",
                  f"- {r.certainty.value}",
                  "- sources:"]
        lines += [f"    - {source(s, anchors)}" for s in r.sources]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs from the catalogue")
    args = parser.parse_args()
    text = page()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text() != text:
            print(f"{PAGE} differs from the rule catalogue: run python3 docs/rules_page.py", file=sys.stderr)
            sys.exit(1)
        return
    PAGE.write_text(text)
    print(f"wrote {PAGE} ({len(CATALOGUE)} rules)")


if __name__ == "__main__":
    main()
