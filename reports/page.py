"""The conformance report as one static HTML file: no scripts, no fonts, no network; pictures are inline SVG."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from sqs_conformance.model.verdicts import RuleVerdict, rule_verdict
from sqs_conformance.model.rules import CATALOGUE
from sqs_conformance.reports import pictures
from sqs_conformance.reports.tables import LATENESS_BIN

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td.rule,th.rule{text-align:left;font-family:monospace}
td.conforms{background:#c8ecc8}td.diverges{background:#f4b4b4;font-weight:bold}
td.none,td.undecided{background:#eee;color:#999}
code,pre{background:#f6f6f6;padding:1px 4px}pre{padding:8px;overflow:auto}
section.rule{border-top:1px solid #ddd;margin-top:1.5em}.muted{color:#777}svg{background:#fff}
ol.steps li.diverging code{color:#d00000;font-weight:bold}
"""
# Where `run --clients N` writes a concurrent finding: <out>/concurrent/<RULE>/, beside its trace (docs/guide/
# concurrency.md). Its history.jsonl is a trace too, and a report of <out> reads it: its case is the rule's shortest
# (its steps, copies of the run's, are not counted again: tables.tallied).
CONCURRENT_FINDINGS = "concurrent"
FINDING_HISTORY = "history.jsonl"


@dataclass
class ReportData:
    """What the report shows, collected from the tables (small: one row per target and rule, at most)."""

    generated: str
    files: int
    steps: int
    runs: int
    matrix: list[dict[str, Any]]
    divergences: list[dict[str, Any]]
    timing: list[dict[str, Any]]
    lateness_bars: list[dict[str, Any]]
    latency_bars: list[dict[str, Any]]
    quarantined: int
    quarantine_sample: list[dict[str, Any]]
    cases: dict[tuple, list[dict[str, Any]]] = field(default_factory=dict)  # minimal case -> its steps


def column(row: dict[str, Any]) -> str:
    return f"{row['target']} {row['target_version']} ({row['profile']})".replace(" ()", "")


def verdict(cell: dict[str, Any] | None) -> RuleVerdict:
    """A matrix cell's verdict, in the run's words (model/verdicts.py)."""
    if cell is None:
        return RuleVerdict.NOT_EXERCISED
    return rule_verdict(cell["exercised"], cell.get("decisive", 0), cell["diverging"])


# The matrix's cell classes (its colours): "none" for a rule no step exercised
CELL_CLASS = {RuleVerdict.DIVERGES: "diverges", RuleVerdict.CONFORMS: "conforms", RuleVerdict.UNDECIDED: "undecided",
              RuleVerdict.NOT_EXERCISED: "none"}


def render(data: ReportData, report_dir: str | None = None) -> str:
    """The page; `report_dir`, where it is written, makes its links to local findings relative (they then still
    lead there from a copy of the whole folder, such as a CI artefact)."""
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>SQS visibility conformance</title>"
             f"<style>{CSS}</style></head><body>",
             "<h1>SQS visibility-timeout conformance</h1>",
             f"<p>{data.steps:,} steps of {data.runs:,} runs from {data.files:,} trace files; "
             f"generated {escape(data.generated)}.</p>",
             _quarantine(data), _matrix(data), _divergences(data, report_dir), _timing(data), _rules(data),
             "</body></html>"]
    return "\n".join(p for p in parts if p)


def _quarantine(data: ReportData) -> str:
    if not data.quarantined:
        return "<p>Malformed lines: none.</p>"
    rows = "".join(f"<tr><td class=rule>{escape(q['file'])}</td><td class=rule>{escape(q['problem'])}</td>"
                   f"<td class=rule><code>{escape(q['line'][:160])}</code></td></tr>" for q in data.quarantine_sample)
    return (f"<h2 id=quarantine>Malformed lines: {data.quarantined:,} quarantined</h2>"
            f"<p>They are kept in the <code>quarantine</code> table and left out of everything else.</p>"
            f"<table><tr><th class=rule>file</th><th class=rule>problem</th><th class=rule>line</th></tr>{rows}"
            f"</table>")


def _rule_ids(data: ReportData) -> list[str]:
    """Every rule of the profiles the traces are of, as `run` lists them, whether a step exercised it or not."""
    profiles = {m["profile"] for m in data.matrix}
    seen = {m["rule"] for m in data.matrix}
    known = [r.id for r in CATALOGUE if r.id in seen or r.profiles & profiles]
    return known + sorted(seen - set(known))


def _matrix(data: ReportData) -> str:
    columns = sorted({column(m) for m in data.matrix})
    profile_of = {column(m): m["profile"] for m in data.matrix}
    profiles_of_rule = {r.id: r.profiles for r in CATALOGUE}
    cells = {(m["rule"], column(m)): m for m in data.matrix}
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    rows = []
    for rule_id in _rule_ids(data):
        tds = []
        for c in columns:
            cell = cells.get((rule_id, c))
            if cell is None and profile_of[c] not in profiles_of_rule.get(rule_id, {profile_of[c]}):
                tds.append("<td class=none title='not a rule of this profile'>n/a</td>")
                continue
            kind = verdict(cell)
            text = "—" if cell is None or kind is RuleVerdict.NOT_EXERCISED else (
                f"{cell['diverging']:,} of {cell['exercised']:,}" if kind is RuleVerdict.DIVERGES else
                f"{cell.get('decisive', 0):,} / {cell['exercised']:,}"
                + (f" +{cell['uncertain']:,}?" if cell["uncertain"] else ""))
            tds.append(f"<td class={CELL_CLASS[kind]} title='{kind.value}'>{text}</td>")
        rows.append(f"<tr><td class=rule><a href='#rule-{escape(rule_id)}'>{escape(rule_id)}</a></td>"
                    + "".join(tds) + "</tr>")
    return (f"<h2 id=matrix>Matrix</h2><p class=muted>Steps that exercised each rule: green conforming, shown "
            f"as decisive / all (decisive: a queue breaking the rule would have given an answer the model does "
            f"not permit there; +N? the steps whose answer never came), red diverging (diverging of exercised), "
            f"grey undecided (exercised only where any answer was permitted, or no answer came: no verdict, it "
            f"could not have failed) or not exercised; each cell's title is the run's word for it."
            f"</p><table id=matrix-table><tr><th class=rule>rule</th>{head}</tr>{''.join(rows)}"
            f"{_summary_rows(columns, cells)}</table>")


def _summary_rows(columns: list[str], cells: dict[tuple[str, str], dict[str, Any]]) -> str:
    """Per column, the rules diverging, conforming (decided) and without a verdict: the matrix in one line."""
    counts = {c: {kind: 0 for kind in RuleVerdict} for c in columns}
    for (_, c), cell in cells.items():
        counts[c][verdict(cell)] += 1
    labels = ((RuleVerdict.DIVERGES, "rules diverging"), (RuleVerdict.CONFORMS, "rules conforming (decided)"),
              (RuleVerdict.UNDECIDED, "rules without a verdict"))
    return "".join(f"<tr class=summary><th class=rule>{label}</th>"
                   + "".join(f"<th>{counts[c][kind]}</th>" for c in columns) + "</tr>" for kind, label in labels)


def _divergences(data: ReportData, report_dir: str | None) -> str:
    if not data.divergences:
        return "<h2 id=divergences>Divergences</h2><p>None: every target conformed on every step.</p>"
    out = [f"<h2 id=divergences>Divergences ({len(data.divergences)})</h2>",
           f"<p class=muted>Each minimal case as a timeline; what its marks mean:</p>{pictures.legend()}"]
    for d in sorted(data.divergences, key=lambda d: (column(d), d["rule"])):
        case = d["minimal_case"]
        steps = data.cases.get((case["file"], case["run_id"], case["case"]), [])
        out.append(
            f"<section class=divergence id='div-{escape(d['target'])}-{escape(d['rule'])}'>"
            f"<h3><a href='#rule-{escape(d['rule'])}'>{escape(d['rule'])}</a> on {escape(column(d))}</h3>"
            f"<p>First seen {escape(str(d['first_seen']))}, last seen {escape(str(d['last_seen']))}, in "
            f"{d['runs']} run(s), {d['occurrences']} step(s).<br>{_minimal_case(case)}"
            f"<br>{_finding_links(case, d['rule'], report_dir)}"
            f"</p><p>expected: <code>{escape(str(d['expected']))}</code><br>observed: "
            f"<code>{escape(str(d['observed']))}</code></p>{_timeline(steps, case['step'])}</section>")
    return "\n".join(out)


def _concurrent(row: dict[str, Any]) -> bool:
    """Whether a step, or a divergence's pointer to its minimal case (which names the diverging step's client), is
    of a concurrent case: only those name a client."""
    return row.get("client") is not None


def _minimal_case(case: dict[str, Any]) -> str:
    """The minimal case in words: which case of which run, where. Of a concurrent one, not how many steps (those sent
    while the diverging step was in flight are shown too) but which step diverged, who sent it, in which round."""
    where = (f"case {case['case']} of run <code>{escape(case['run_id'])}</code> in "
             f"<code>{escape(case['file'])}</code>")
    if _concurrent(case):
        return (f"Minimal case: {where}, a concurrent one: it diverged at step {case['step']}, sent by client "
                f"{case['client']} in round {case['round']}.")
    return f"Minimal case: {case['step'] + 1} steps, {where}."


def _finding_links(case: dict[str, Any], rule_id: str, report_dir: str | None) -> str:
    """Where `run` wrote that run's finding of the rule, in the folder it wrote the trace to (`_run_folder`):
    findings/RUN/RULE.txt and .py (a run writes the finding for each rule it reports; a run that reported the rule
    under another case still has it), or a concurrent run's concurrent/RULE/TIMELINE.txt and RULE.py; relative to
    the report where both are on this machine."""
    out = _relative(_run_folder(case["file"]), report_dir)
    if _concurrent(case):
        folder = f"{out}/{CONCURRENT_FINDINGS}/{rule_id}"
        return (f"Its run's finding: <a href='{escape(folder)}/TIMELINE.txt'>TIMELINE.txt</a> (the history, one "
                f"column per client), <a href='{escape(folder)}/RULE.py'>RULE.py</a> (a replay with threads against "
                f"any endpoint).")
    folder = f"{out}/findings/{case['run_id']}/{rule_id}"
    return (f"Its run's finding: <a href='{escape(folder)}.txt'>{escape(rule_id)}.txt</a> (the divergence and its "
            f"timeline), <a href='{escape(folder)}.py'>{escape(rule_id)}.py</a> (a boto3 script that reproduces it).")


def _run_folder(trace_uri: str) -> str:
    """The folder `run` wrote a trace into (its --out): the trace's own, but for a concurrent finding's history
    (<out>/concurrent/<RULE>/history.jsonl), the folder above its finding's."""
    folder, name = trace_uri.rsplit("/", 1)
    parts = folder.split("/")
    if name == FINDING_HISTORY and len(parts) > 2 and parts[-2] == CONCURRENT_FINDINGS:
        return "/".join(parts[:-2])
    return folder


def _relative(uri: str, report_dir: str | None) -> str:
    """A local folder's URI as a path relative to the report's folder; any other URI as it is."""
    here = _local_path(report_dir) if report_dir is not None else None
    there = _local_path(uri)
    return uri if here is None or there is None else Path(os.path.relpath(there, here)).as_posix()


def _local_path(uri: str) -> str | None:
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return os.path.abspath(unquote(parts.path))
    return os.path.abspath(uri) if not parts.scheme else None


def _timeline(steps: list[dict[str, Any]], diverging_step: int) -> str:
    """The case up to the step that diverged, as its finding holds it: one column per step, or where its steps name
    their clients (a concurrent case) one lane per client."""
    concurrent = any(map(_concurrent, steps))
    shown = sorted(_up_to(steps, diverging_step, concurrent), key=lambda s: s["step"])
    if not shown:
        return "<p class=muted>(the steps of this case are not in the tables)</p>"
    # Each step in words too: a picture's labels are cut to its columns
    rows = "".join(f"<li{' class=diverging' if s['step'] == diverging_step else ''}><code>{_sender(s)}"
                   f"t={s['invoke']:.3f} {escape(' '.join(pictures.step_label(s)))}</code></li>" for s in shown)
    picture = (pictures.client_timeline if concurrent else pictures.timeline)(shown, diverging_step)
    return picture + f"<ol start=0 class=steps>{rows}</ol>"


def _up_to(steps: list[dict[str, Any]], diverging_step: int, concurrent: bool) -> list[dict[str, Any]]:
    """The steps up to the one that diverged (later steps of a witness probe on). In a concurrent case also those
    sent while it was in flight: they may have taken effect before it, and its finding keeps them."""
    diverging = next((s for s in steps if s["step"] == diverging_step), None)
    return [s for s in steps if s["step"] <= diverging_step
            or (concurrent and diverging is not None and pictures.sent_before_answered(s, diverging))]


def _sender(step: dict[str, Any]) -> str:
    """Who sent a step, in a concurrent case: `c2 `; nothing in a single client's."""
    return f"c{step['client']} " if _concurrent(step) else ""


def _timing(data: ReportData) -> str:
    if not data.timing:
        return ""
    rows = []
    for t in sorted(data.timing, key=lambda t: (t["target"], t["clock"])):
        def ms(name, t=t):
            # Lateness on a virtual clock measures the suite's own waits (up to hours), not the target's
            virtual_lateness = name.startswith("lateness") and t["clock"] == "virtual"
            return "—" if t[name] is None or virtual_lateness else f"{t[name] * 1000:,.1f}"
        rows.append(f"<tr><td class=rule>{escape(t['target'])} {escape(t['target_version'])}</td>"
                    f"<td class=rule>{escape(t['clock'])}</td><td>{t['steps']:,}</td>"
                    f"<td>{ms('latency_p50')}</td><td>{ms('latency_p95')}</td><td>{ms('latency_p99')}</td>"
                    f"<td>{t['reappearances']:,}</td><td>{ms('lateness_p50')}</td><td>{ms('lateness_p95')}</td>"
                    f"<td>{ms('lateness_p99')}</td></tr>")
    charts = (_histograms([b for b in data.lateness_bars if b["clock"] != "virtual"], "how late messages came back",
                          lambda bar: f"{bar * LATENESS_BIN:.2f} s")
              + _histograms(data.latency_bars, "operation latency", lambda bar: f"≤{2 ** bar} ms"))
    return ("<h2 id=timing>Timing</h2><p class=muted>Latency: complete − invoke of each operation. Lateness: how "
            "long after its deadline an in-flight message came back, measured to the start of the receive that "
            "returned it (an upper bound; not shown for a virtual clock, where it would measure the suite's own "
            "waits).</p>"
            "<table><tr><th class=rule>target</th><th class=rule>clock</th><th>steps</th><th>latency p50 ms</th>"
            "<th>p95</th><th>p99</th><th>reappearances</th><th>lateness p50 ms</th><th>p95</th><th>p99</th></tr>"
            + "".join(rows) + "</table>" + "".join(charts))


def _histograms(bars: list[dict[str, Any]], title: str, label) -> list[str]:
    """One histogram per target, version and clock of `bars` (rows of bar number and count)."""
    by_target: dict[tuple, dict[int, int]] = {}
    for b in bars:
        by_target.setdefault((b["target"], b["target_version"], b["clock"]), {})[b["bar"]] = b["count"]
    return [f"<h4>{escape(' '.join(key))}: {title}</h4>" + pictures.histogram(counts, label)
            for key, counts in sorted(by_target.items()) if counts]


def _rules(data: ReportData) -> str:
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for m in data.matrix:
        by_rule.setdefault(m["rule"], []).append(m)
    out = ["<h2 id=rules>Rules</h2>"]
    for r in CATALOGUE:
        rows = "".join(f"<li>{escape(column(m))}: {verdict(m).value} ({m['exercised']:,} steps, "
                       f"{m.get('decisive', 0):,} decisive, {m['diverging']:,} diverging)</li>"
                       for m in sorted(by_rule.get(r.id, []), key=column))
        out.append(f"<section class=rule id='rule-{escape(r.id)}'><h3>{escape(r.id)}</h3>"
                   f"<p>{escape(r.statement)}</p><p class=muted>Evidence: {escape(r.source)} "
                   f"({escape(r.certainty.value)}); profiles: {escape(', '.join(sorted(r.profiles)))}.</p>"
                   + (f"<ul>{rows}</ul>" if rows else "<p class=muted>Not exercised by any trace.</p>")
                   + "</section>")
    return "\n".join(out)
