"""Concurrent runs with 8 clients against race-prone queue designs: how long until each race is caught, and how
short the history shown is; the correct designs the same way, where any finding is a false alarm.

Scored in two groups, never mixed: the races of the Redis design, written beside the checker (our own mutants:
they measure tuning), and the designs written from the documents alone by someone who never saw the checker
(the PostgreSQL design's variants, the spool design's): they measure power.

    python3 -m benchmarks.races [--seeds 3] [--seconds 10] [--max-cases 200] [--group own|independent|correct]

Each race is run case by case (one case: 8 threads, 12 rounds) until a case shows a divergence, for at most
--seconds (issue 46's goal: a median of 10 s to catch; a case under way then is finished) and --max-cases, once
per seed; the time to catch is the median over the seeds that caught it, counting every case it took. A correct
design is run as long, each case a chance of a false alarm. A race a single client could see is none of these (each
design's single-client suite conforms on them); a rule a design breaks by its author's stated choice, which a
single client shows too, is left out of its score. A race whose every effect the evidence permits (the table says
why; a history of each conforms in tests/concurrent/test_history_checker.py) is shown, and left out
of the score unless caught.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass

from benchmarks.record import recorded
from sqs_conformance.adapters.base import Target, TargetError
from sqs_conformance.adapters.inhouse import Guarded
from sqs_conformance.conformance.concurrent.run import ConcurrentOptions, ConcurrentResult, run_concurrent


@dataclass(frozen=True)
class Design:
    group: str  # "own", "independent" or "correct"
    name: str
    profile: str
    make: type[Target]
    breaks: str = ""  # the rule its author said it breaks ("" for a correct design)
    # Rules the design diverges on by its author's choice, which a single client shows as well: not races
    single_client: frozenset[str] = frozenset()
    # Why all its race shows is permitted (a history of it conforms in tests/concurrent/test_history_checker.py):
    # not caught, it is no miss, and it is not scored
    permitted_by: str = ""


def designs() -> list[Design]:
    from benchmarks.reference_designs.pgq.target import PostgresQueue
    from benchmarks.reference_designs.pgq.variants import VARIANTS as PG_VARIANTS
    from benchmarks.reference_designs.redisq.races import RACES
    from benchmarks.reference_designs.redisq.target import RedisQueueTarget
    from benchmarks.reference_designs.spoolq.target import SpoolQueue
    from benchmarks.reference_designs.spoolq.variants import VARIANTS as SPOOL_VARIANTS

    found = [Design("own", f"redisq.{m.name}", m.profile, m.target, m.breaks) for m in RACES]
    # Of the PostgreSQL variants, three race into what a standard queue may do: a delete or a change through an
    # older handle may act on the message received again since, and a send overlapping a purge may come after it.
    permitted = {"DeleteStaleHandle": "evidence row `delete-stale`", "ChangeReadThenWrite": "evidence row `cmv-stale`",
                 "PurgeWithoutLock": "a send inside the purge's window may take effect after it"}
    found += [Design("independent", f"pgq.{v.__name__}", "sqs-standard", v,
                     permitted_by=permitted.get(v.__name__, "")) for v in PG_VARIANTS]
    spool_choices = frozenset({"PURGE-IN-PROGRESS"})  # its README: no 60-second purge limit
    found += [Design("independent", f"spoolq.{v.__name__}", "sqs-standard", v, single_client=spool_choices)
              for v in SPOOL_VARIANTS]
    found += [Design("correct", "redisq", p, RedisQueueTarget) for p in ("sqs-standard", "sqs-fifo")]
    found += [Design("correct", "pgq", "sqs-standard", PostgresQueue),
              Design("correct", "spoolq", "sqs-standard", SpoolQueue, single_client=spool_choices)]
    return found


@contextlib.contextmanager
def servers() -> Iterator[None]:
    """One Redis and one PostgreSQL for every design (on 127.0.0.1, stopped by their pids)."""
    from benchmarks.reference_designs.pgq.server import start_postgres
    from benchmarks.reference_designs.pgq.target import URL_VARIABLE as PG_URL
    from benchmarks.reference_designs.redisq.server import start_redis
    from benchmarks.reference_designs.redisq.target import URL_VARIABLE as REDIS_URL

    redis, postgres = start_redis(), start_postgres()
    os.environ[REDIS_URL] = f"redis://127.0.0.1:{redis.port}/0"
    os.environ[PG_URL] = postgres.url
    try:
        yield
    finally:
        os.environ.pop(REDIS_URL, None)
        os.environ.pop(PG_URL, None)
        redis.stop()
        postgres.stop()


@dataclass
class Caught:
    seconds: float
    cases: int
    result: ConcurrentResult | None  # the case that showed it; None: not caught (or the target failed)
    error: str | None = None  # the target raised instead of answering (a deadlock, say): the run stops there

    @property
    def caught(self) -> bool:
        return self.result is not None or self.error is not None


def until_caught(design: Design, seed: int, seconds: float, max_cases: int) -> Caught:
    target = Guarded(design.make(design.profile))  # as --target python: runs it: an exception is one line
    started = time.perf_counter()
    try:
        for case in range(max_cases):
            if time.perf_counter() - started >= seconds:
                return Caught(time.perf_counter() - started, case, None)
            try:
                result = run_concurrent(target, design.profile, ConcurrentOptions(
                    clients=8, cases=1, seed=seed * 1000 + case, mode="threads"))
            except TargetError as error:
                return Caught(time.perf_counter() - started, case + 1, None, str(error).split(" on ")[-1][:60])
            for rule_id in design.single_client:
                result.findings.pop(rule_id, None)
            if result.findings:
                return Caught(time.perf_counter() - started, case + 1, result)
        return Caught(time.perf_counter() - started, max_cases, None)
    finally:
        target.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--max-cases", type=int, default=200)
    parser.add_argument("--group", choices=["own", "independent", "correct"], action="append")
    args = parser.parse_args()
    groups = args.group or ["own", "independent", "correct"]
    with servers():
        for group in groups:
            print(f"\n### {group}: " + {"own": "races written beside the checker (tuning)",
                                        "independent": "designs written from the documents alone (power)",
                                        "correct": "correct designs (any finding is a false alarm)"}[group])
            print("\n| design | profile | its race breaks a rule | caught | median s to catch | median cases to catch "
                  "| rules shown | shortest history |")
            print("|---|---|---|---|---|---|---|---|")
            caught = total = permitted = 0
            for design in [d for d in designs() if d.group == group]:
                runs = [until_caught(design, seed, args.seconds, args.max_cases) for seed in range(args.seeds)]
                hits = [r for r in runs if r.caught]
                rules = sorted({rule for r in hits if r.result for rule in r.result.findings}
                               | {f"error ({r.error})" for r in hits if r.error})
                shortest = min((f.size for r in hits if r.result for f in r.result.findings.values()), default=None)
                # to catch: over the seeds that caught it (one that did not gave up at --seconds or --max-cases)
                median = f"{statistics.median(r.seconds for r in hits):.1f}" if hits else "-"
                cases = f"{statistics.median(r.cases for r in hits):.0f}" if hits else "-"
                breaks = "-" if group == "correct" else \
                    f"no: {design.permitted_by}" if design.permitted_by else "yes"
                if design.permitted_by and not hits:
                    permitted += 1  # no miss: nothing it shows is forbidden
                else:
                    total += 1
                    caught += bool(hits) if group != "correct" else not hits
                print(f"| {design.name} | {design.profile} | {breaks} | {len(hits)}/{len(runs)} | {median} | {cases} "
                      f"| {', '.join(rules) or '-'} | {shortest if shortest is not None else '-'} |")
            said = ("conform (no finding in any" if group == "correct" else "caught (in at least one")
            unscored = f"; {permitted} more whose race only shows what the evidence permits, not scored" \
                if permitted else ""
            print(f"\n{caught} of {total} {said} of {args.seeds} seeds, {args.seconds:g} s and {args.max_cases} "
                  f"cases at most each){unscored}")


if __name__ == "__main__":
    with recorded("races", __doc__):
        main()
