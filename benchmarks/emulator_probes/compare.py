"""Does the suite report what the hand-written probes show? Each probe divergence recorded in `results/*.json`
is looked up in matrix cells written by `sqs-conformance matrix` (its `matrix.json`): it counts as reported
when a rule a person would fix for it diverges in the cell of the probe's emulator and profile.

    python3 benchmarks/emulator_probes/compare.py runs/matrix/matrix.json [more matrix.json ...] [--results DIR]

Prints one line per probed divergence and a total per emulator; exits 1 if any is missed. The probes were
written from the documents without the suite (see README.md); this file is the suite's side: which of its rules
each probe tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project's root

from sqs_conformance.adapters.base import TargetError  # noqa: E402
from sqs_conformance.conformance.matrix import Cell, load  # noqa: E402

RESULTS = Path(__file__).parent / "results"

# Probe id (or the prefix before "=" of a range probe) -> the rules that name its divergence. Where one fault
# can be named two ways (an emulator with no ceiling at all also "resets" it), both are given.
PROBE_RULES: dict[str, tuple[str, ...]] = {
    "1.hidden-then-back": ("RCV-HIDE", "RCV-REAPPEAR"),
    "2.change-extends-from-call": ("VIS-EXTEND-NONADDITIVE",),
    "2.change-shortens": ("VIS-SHORTEN",),
    "2.change-zero-releases": ("VIS-TERMINATE",),
    "2.change-not-sticky": ("VIS-NOT-STICKY",),
    "3.receive-override": ("RCV-OVERRIDE",),
    "3.receive-override-zero": ("RCV-OVERRIDE",),
    "4.cmv-VisibilityTimeout": ("VIS-RANGE",),
    "4.receive-VisibilityTimeout": ("VIS-RANGE",),
    "4.create-VisibilityTimeout": ("VIS-RANGE",),
    "4.set-VisibilityTimeout": ("VIS-RANGE",),
    "4.receive-WaitTimeSeconds": ("RCV-WAIT-RANGE",),
    "4.receive-MaxNumberOfMessages": ("RCV-MAX-MESSAGES",),
    "4.send-DelaySeconds": ("DELAY-HIDES",),
    "4.create-DelaySeconds": ("DELAY-HIDES",),
    "4.set-DelaySeconds": ("DELAY-HIDES",),
    "5.ceiling-43190-at-once": ("VIS-CEILING",),
    "5.ceiling-counted-from-receive": ("VIS-CEILING",),
    "5.ceiling-not-reset-by-extend": ("VIS-CEILING-NO-RESET", "VIS-CEILING"),
    "5.ceiling-wait-before-receive-free": ("VIS-CEILING-FROM-RECEIVE",),
    "6.delete-garbage-handle": ("HANDLE-MALFORMED",),
    "6.change-garbage-handle": ("HANDLE-MALFORMED",),
    "6.change-deleted-message": ("CMV-DELETED",),
    "6.delete-twice": ("DEL-IDEMPOTENT",),
    "6.change-expired-handle": ("CMV-EXPIRED",),
    "6.delete-expired-handle": ("DEL-EXPIRED",),
    "6.delete-stale-handle": ("DEL-STALE",),
    "6.change-stale-handle": ("CMV-STALE",),
    "6.new-handle-each-receive": ("RCV-NEW-HANDLE",),
    "7.receive-count-and-first-timestamp": ("RCV-COUNT", "RCV-FIRST-TIMESTAMP"),
    "8.long-poll-returns-on-arrival": ("RCV-LONG-POLL",),
    "9.batch-empty": ("BATCH-EMPTY",),
    "9.batch-eleven": ("BATCH-MAX-ENTRIES",),
    "9.send-batch-eleven": ("BATCH-MAX-ENTRIES",),
    "9.batch-duplicate-ids": ("BATCH-IDS-DISTINCT",),
    "9.batch-invalid-id": ("BATCH-ENTRY-ID",),
    "9.batch-partial-failure": ("BATCH-PARTIAL",),
    "10.purge-removes-in-flight": ("PURGE-ALL",),
    "11.delay-hides-until-due": ("DELAY-HIDES",),
    "12.fifo-group-lock": ("FIFO-GROUP-LOCK",),
    "12.fifo-order-after-timeout": ("FIFO-ORDER",),
    "12.fifo-delete-expired-handle": ("DEL-FIFO-EXPIRED",),
    "12.fifo-delete-in-extended-deadline": ("DEL-FIFO-EXPIRED",),
    "12.fifo-dedup": ("FIFO-DEDUP",),
    "13.redrive-max-receive-1": ("REDRIVE-DLQ",),
}


@dataclass(frozen=True)
class Row:
    emulator: str
    probe: str
    profile: str
    rules: tuple[str, ...]
    suite: dict[str, str]  # each of `rules` -> the cell's verdict ("—" without a cell)

    @property
    def reported(self) -> bool:
        return "diverges" in self.suite.values()


def rules_of(probe_id: str) -> tuple[str, ...]:
    key = probe_id.split("=", 1)[0]
    if key not in PROBE_RULES:
        raise KeyError(f"probe {probe_id} names no rule of the suite: add it to PROBE_RULES")
    return PROBE_RULES[key]


def profile_of(probe_id: str) -> str:
    return "sqs-fifo" if probe_id.startswith("12.") else "sqs-standard"


def compare(probed: dict, cells: list[Cell]) -> list[Row]:
    """One row per probe of `probed` (one emulator's results) that diverges."""
    by_profile = {c.profile: c for c in cells if c.emulator == probed["emulator"] and not c.error}
    rows = []
    for record in probed.get("probes", []):
        if record["verdict"] != "diverges":
            continue
        profile, rules = profile_of(record["id"]), rules_of(record["id"])
        cell = by_profile.get(profile)
        suite = {r: cell.verdicts.get(r, "not exercised") if cell else "—" for r in rules}
        rows.append(Row(probed["emulator"], record["id"], profile, rules, suite))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrices", nargs="+", type=Path, metavar="MATRIX.json")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the probes' results/*.json")
    args = parser.parse_args(argv)
    try:
        cells = load(args.matrices)
        probed = [json.loads(p.read_text()) for p in sorted(args.results.glob("*.json"))]
    except (OSError, ValueError, TargetError) as error:
        print(f"compare: error: {error}", file=sys.stderr)
        return 2
    missed = 0
    for emulator in probed:
        rows = compare(emulator, cells)
        if not any(c.emulator == emulator["emulator"] for c in cells):
            continue
        for row in rows:
            verdicts = ", ".join(f"{r} {v}" for r, v in row.suite.items())
            print(f"{'reported' if row.reported else 'MISSED  '}  {row.emulator:14} {row.probe:38} {verdicts}")
        reported = sum(r.reported for r in rows)
        missed += len(rows) - reported
        print(f"{emulator['emulator']} {emulator.get('version', '')}: {reported} of {len(rows)} probed divergences "
              f"reported by the suite")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
