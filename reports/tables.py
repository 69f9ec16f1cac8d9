"""The report's tables, derived from `steps` (all of it, every run): `matrix`, `divergences`, `timing`; and what the
report reads beside them (the histograms, how many steps, runs and files), aggregated with `timing`.

A divergence is counted against its first rule, the most specific one, as the runner reports it.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sqs_conformance.model.verdicts import StepVerdict
from sqs_conformance.model.trace_format import FINDING_RUN_ID, MINIMAL_CASE_ORDER

TARGET = ["target", "target_version", "profile"]
# Where a concurrent case (`run --clients N`) diverged: the client that sent the step and its round; null in a single
# client's case. The divergences' pointer keeps them: the report links a concurrent finding where `run` wrote it.
CONCURRENT = ["client", "round"]
# What the tables below read of `steps`: without the bulky per-step views.
COLUMNS = ["source", "run_id", "case", "step", "final", "invoke", "invoke_wall", *TARGET, "clock", "verdict", "rules",
           "decisive", "divergences", "exact_timing_only", "latency", "reappeared", *CONCURRENT]
PERCENTILES = [0.5, 0.95, 0.99]
LATENESS_BIN = 0.25  # seconds per bar of the lateness histogram
LATENESS_LAST_BIN = 20  # later than 5 s all goes in the last bar
LATENCY_LAST_BIN = 24  # latency bars are powers of two of a millisecond: from 2^23 ms (2.3 hours) on, the last bar
CLOCK = ["target", "target_version", "clock"]


def tallied(steps: DataFrame) -> Column:
    """Which steps the tallies count: all but a concurrent finding's copy of steps its run's trace already holds,
    unless the copies are all there is (a report of findings alone)."""
    not_a_copy = F.col("run_id") != FINDING_RUN_ID
    return not_a_copy if not steps.where(not_a_copy).isEmpty() else F.lit(True)


def matrix(steps: DataFrame, counts: Column) -> DataFrame:
    """Target × rule: steps that exercised the rule, how many could have caught it broken (decisive: diverging
    ones included), and how many conformed, diverged, or were uncertain (no answer came, so the model kept both
    possibilities)."""
    # Steps alike in all the matrix reads are counted together first: few kinds, each exploded into its rules once.
    # Each kind's diverging rules are the first of each of its divergences', picked once a kind, not once a step
    # (a lambda, evaluated without generated code: 1e6 steps on local[2], 0.91 -> 0.82 s, medians of ten).
    kinds = (steps.where(counts)
             .select(*TARGET, "verdict", F.col("divergences.rules").alias("divergences_rules"), "rules", "decisive")
             .groupBy(*TARGET, "verdict", "divergences_rules", "rules", "decisive")
             .agg(F.count(F.lit(1)).alias("steps"))
             .withColumn("diverged", F.transform("divergences_rules", lambda rules: F.element_at(rules, 1))))
    per_rule = (kinds.select(*TARGET, "verdict", "diverged", "decisive", "steps",
                             F.explode(F.array_distinct(F.array_union("rules", "diverged"))).alias("rule"))
                .withColumn("diverging", F.array_contains("diverged", F.col("rule")))
                .withColumn("decided", F.col("diverging") | (F.array_contains("decisive", F.col("rule"))
                                                              & (F.col("verdict") != StepVerdict.UNKNOWN.value)))
                .withColumn("uncertain", ~F.col("diverging") & (F.col("verdict") == StepVerdict.UNKNOWN.value))
                # behind another step's divergence: exercised, and nothing more (neither conforming nor diverging)
                .withColumn("conforming", ~F.col("diverging") & ~F.col("uncertain")
                            & (F.col("verdict") != StepVerdict.BEHIND.value)))

    def steps_where(flag: str):
        return F.sum(F.when(F.col(flag), F.col("steps")).otherwise(0))

    return (per_rule.groupBy(*TARGET, "rule")
            .agg(F.sum("steps").alias("exercised"), steps_where("decided").alias("decisive"),
                 steps_where("diverging").alias("diverging"), steps_where("uncertain").alias("uncertain"),
                 steps_where("conforming").alias("conforming")))


def divergences(steps: DataFrame, files: DataFrame, counts: Column) -> DataFrame:
    """One row per distinct divergence (target, version, profile, rule): when it was first and last seen, in
    how many runs, and a pointer to its minimal case: the one the run's finding holds, picked in the same order
    (`MINIMAL_CASE_ORDER`: one a real clock replays, the fewest steps, the least waiting, the first seen) among the
    steps that reported it (not those `behind` another divergence, which report nothing). `files` names the file of
    each `source`; in a concurrent case the pointer also names the client that sent the diverging step and its
    round (null in a single client's)."""
    case = ["source", "run_id", "case"]
    seen = (steps.where((F.size("divergences") > 0) & (F.col("verdict") != StepVerdict.BEHIND.value))
            .select(*TARGET, *case, *MINIMAL_CASE_ORDER, *CONCURRENT, F.explode("divergences").alias("d"))
            .select(*TARGET, *case, *MINIMAL_CASE_ORDER, *CONCURRENT, F.element_at("d.rules", 1).alias("rule"),
                    F.col("d.expected").alias("expected"), F.col("d.observed").alias("observed"))
            .join(F.broadcast(files), "source"))
    # Every case's length, not only the diverging ones': a join to pick those out cost more than counting them all
    # (1e6 steps of 50,000 cases on local[2]: 0.5 s against 0.2 s).
    lengths = steps.groupBy(*case).agg(F.count(F.lit(1)).alias("case_steps"))
    # The minimal case is the least of these, field by field: one aggregation picks it beside the totals.
    shortest_first = F.struct(*MINIMAL_CASE_ORDER, "file", "run_id", "case", "case_steps", "expected",
                              "observed", *CONCURRENT)
    return (seen.join(lengths, case).groupBy(*TARGET, "rule")
            .agg(F.timestamp_seconds(F.min("invoke_wall")).alias("first_seen"),
                 F.timestamp_seconds(F.max("invoke_wall")).alias("last_seen"),
                 F.size(F.collect_set(F.when(counts, F.col("run_id")))).alias("runs"),
                 F.count(F.when(counts, 1)).alias("occurrences"),
                 F.min(shortest_first).alias("minimal"))
            .select(*TARGET, "rule", "first_seen", "last_seen", "runs", "occurrences",
                    F.struct("minimal.file", "minimal.run_id", "minimal.case", "minimal.step", "minimal.case_steps",
                             *[f"minimal.{name}" for name in CONCURRENT]).alias("minimal_case"),
                    "minimal.expected", "minimal.observed"))


def latency_summary(steps: DataFrame, counts: Column) -> DataFrame:
    """Per target and clock, in one pass: the steps, their latency's p50/p95/p99 in seconds, how many fell in each
    bar of powers of two of a millisecond (`latency_bars`, an array from bar 0), and the runs and files (as sets:
    a report counts them across clocks)."""
    bar = F.least(F.greatest(F.ceil(F.log2(F.greatest(F.col("latency") * 1000, F.lit(1.0)))), F.lit(0)),
                  F.lit(LATENCY_LAST_BIN))
    return steps.where(counts).groupBy(*CLOCK).agg(
        F.count(F.lit(1)).alias("steps"),
        F.percentile_approx("latency", PERCENTILES).alias("latency"),
        _bar_counts(bar, LATENCY_LAST_BIN).alias("latency_bars"),
        F.collect_set("run_id").alias("run_ids"),
        F.collect_set("source").alias("sources"))


def lateness_summary(steps: DataFrame, counts: Column) -> DataFrame:
    """Per target and clock, in one pass: how many in-flight messages came back after their deadline, how late
    (an upper bound: measured to the start of the receive that returned them) as p50/p95/p99 in seconds, and how
    many fell in each bar of LATENESS_BIN seconds (`lateness_bars`; the last takes the rest)."""
    lateness = steps.where(counts).select(*CLOCK, F.explode("reappeared.lateness").alias("lateness"))
    bar = F.least(F.floor(F.greatest("lateness", F.lit(0.0)) / LATENESS_BIN), F.lit(LATENESS_LAST_BIN))
    return lateness.groupBy(*CLOCK).agg(
        F.count(F.lit(1)).alias("reappearances"),
        F.percentile_approx("lateness", PERCENTILES).alias("lateness"),
        _bar_counts(bar, LATENESS_LAST_BIN).alias("lateness_bars"))


def _bar_counts(bar, last: int):
    """How many rows fall in each bar from 0 to `last`, as an array: counted in the group's own aggregation."""
    return F.array(*[F.count(F.when(bar == i, True)) for i in range(last + 1)])


def timing(latency: DataFrame, lateness: DataFrame) -> DataFrame:
    """Per target and clock (`latency_summary`, `lateness_summary`): operation latency and how late in-flight
    messages came back after their deadline, as p50/p95/p99 in seconds."""
    return (latency.join(lateness, CLOCK, "left")
            .select(*CLOCK, "steps",
                    *[F.col("latency")[i].alias(f"latency_p{int(p * 100)}") for i, p in enumerate(PERCENTILES)],
                    F.coalesce("reappearances", F.lit(0)).alias("reappearances"),
                    *[F.col("lateness")[i].alias(f"lateness_p{int(p * 100)}") for i, p in enumerate(PERCENTILES)]))


def bars(summaries: list[dict], column: str) -> list[dict]:
    """The histogram rows (target, version, clock, bar, count) of the summaries' `column`, bars with none left out."""
    return [{**{k: s[k] for k in CLOCK}, "bar": bar, "count": count}
            for s in summaries for bar, count in enumerate(s[column] or []) if count]
