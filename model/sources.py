"""What a rule cites: a document of `docs/evidence.md` (with a short quote where the rule rests on its wording) or
a row of that file's record of what real AWS was observed to do. The ids resolve in `docs/evidence.md`;
`tests/model/test_rules.py` checks every one."""

from __future__ import annotations

from dataclasses import dataclass

EVIDENCE = "evidence"  # the rows of docs/evidence.md, as opposed to one of the documents it lists


@dataclass(frozen=True, slots=True)
class Source:
    document: str  # an id of docs/evidence.md's documents (`seed-002`, `botocore`), or EVIDENCE for a row
    row: str | None = None  # the id of the evidence row, where document is EVIDENCE
    quote: str | None = None  # the document's own words the rule rests on, where it rests on wording

    def __str__(self) -> str:
        where = f"docs/evidence.md row '{self.row}'" if self.document == EVIDENCE else self.document
        return f"{where}: '{self.quote}'" if self.quote else where


def seed(number: str, quote: str) -> Source:
    """A passage of one of the seed documents (`seed("002", "...")`)."""
    return Source(f"seed-{number}", quote=quote)


def row(row_id: str) -> Source:
    """A row of what real AWS was observed to do."""
    return Source(EVIDENCE, row=row_id)


def api(quote: str) -> Source:
    """The SQS API model botocore ships (its operation and error documentation)."""
    return Source("botocore", quote=quote)
