"""The report's pictures as inline SVG, built as element trees so that every attribute is quoted and every text
escaped (markup written by hand once broke a browser's parse and with it every picture after the first)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree as ET

VISIBLE, HIDDEN, EITHER, DIVERGING = "#6cc46c", "#aaaaaa", "#f2c14e", "#d00000"
STEP_WIDTH = 150  # px per step: room for its label
LABEL_CHARACTERS = 23  # longer labels are cut, whole in their tooltip
LANE = 24  # px per message
LEFT = 86  # px for the message names (the clients' in a concurrent case)
CLIENT_LANE = 60  # px per client in a concurrent case: a step's box and room around it
BOX_HEIGHT = 52  # px of a step's box: its label's three lines
ANSWERED_GAP = 8  # px between a step's answer and a later send: the box ends before the next one starts
LEGEND = (
    (VISIBLE, "the model expects the message receivable"),
    (HIDDEN, "the model expects it hidden (in flight, delayed or locked)"),
    (EITHER, "either: the model keeps several possible states"),
)

_SHORT = {"ChangeMessageVisibility": "Change", "ChangeMessageVisibilityBatch": "ChangeBatch",
          "DeleteMessageBatch": "DeleteBatch", "ReceiveMessage": "Receive", "SendMessage": "Send",
          "DeleteMessage": "Delete", "CreateQueue": "CreateQueue", "SetQueueAttributes": "SetAttributes",
          "GetQueueAttributes": "GetAttributes", "PurgeQueue": "Purge", "PeekMessage": "Peek"}


def _svg(width: float, height: float, label: str) -> ET.Element:
    return ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": _n(width), "height": _n(height),
                              "viewBox": f"0 0 {_n(width)} {_n(height)}", "role": "img", "aria-label": label})


def _add(parent: ET.Element, tag: str, text: str | None = None, **attributes: Any) -> ET.Element:
    element = ET.SubElement(parent, tag, {name.rstrip("_").replace("_", "-"): _n(value)
                                          for name, value in attributes.items()})
    if text is not None:
        element.text = text
    return element


def _n(value: Any) -> str:
    return f"{value:.1f}".removesuffix(".0") if isinstance(value, float) else str(value)


def _markup(svg: ET.Element) -> str:
    return ET.tostring(svg, encoding="unicode")


def step_label(step: dict[str, Any]) -> tuple[str, str]:
    """What a step did and what came back, in two short lines."""
    answer = step.get("error_code") or step.get("response_type") or "?"
    # A concurrent case's lines leave `returned` empty (docs/trace-format.md): what its receives returned is unknown
    if step.get("response_type") == "ReceiveOk" and step.get("client") is None:
        returned = step.get("returned") or []
        answer = f"{len(returned)} returned" if returned else "empty"
    if step.get("says"):  # schema 6: the operation with the values it was sent with
        return step["says"], f"→ {answer}"
    op = _SHORT.get(step.get("op_type") or "", step.get("op_type") or "?")
    queue = step.get("queue")
    return (f"{op}({queue})" if queue else op), f"→ {answer}"


def timeline(steps: list[dict[str, Any]], diverging_step: int) -> str:
    """A minimal case step by step: each step's label and time, each message's expected visibility right after it
    (the model's windows, drawn in proportion to the time until the next step), the messages each receive
    returned, the diverging step framed in red (`legend` says what each mark means, once a page)."""
    steps = sorted(steps, key=lambda s: s["step"])
    views = [json.loads(s["views"]) if s.get("views") else {} for s in steps]
    messages = list(dict.fromkeys(m for v in views for m in v)) or ["(no message)"]
    top = 64  # step labels above the lanes
    lanes_bottom = top + LANE * len(messages)
    width = max(LEFT + STEP_WIDTH * len(steps) + 10, 560)
    svg = _svg(width, lanes_bottom + 30, f"timeline of a {len(steps)}-step case")
    for i, s in enumerate(steps):
        x = LEFT + i * STEP_WIDTH
        diverges = s["step"] == diverging_step
        _label(svg, s, x, 0, diverges)
        start = s["invoke"]
        end = steps[i + 1]["invoke"] if i + 1 < len(steps) else s["complete"] + 1
        for lane, message in enumerate(messages):
            y = top + lane * LANE
            _window(svg, views[i].get(message), x, y, start, end)
            if message in (s.get("returned") or []):
                _add(svg, "circle", cx=x + 8, cy=y + 9, r=5, fill="#000000")
        if diverges:
            _frame(svg, x + 1, 2, STEP_WIDTH - 2, lanes_bottom + 2)
    for lane, message in enumerate(messages):
        _add(svg, "text", message, x=4, y=top + lane * LANE + 13, font_size=11)
    _add(svg, "line", x1=LEFT, x2=LEFT + STEP_WIDTH * len(steps), y1=lanes_bottom + 8, y2=lanes_bottom + 8,
         stroke="#666666")
    _add(svg, "text", "time: one column per step, windows in proportion within it", x=LEFT, y=lanes_bottom + 22,
         font_size=10, fill="#666666")
    return _markup(svg)


def client_timeline(steps: list[dict[str, Any]], diverging_step: int) -> str:
    """A concurrent case as one lane per client: each step a box on its client's lane from when it was sent to when
    it was answered, labelled as `timeline` labels its steps, the diverging step framed in red. Across, the order
    of every send and answer (`_positions`), not their durations: boxes that overlap were in flight at once, so
    either may have taken effect first; a box wholly left of another was answered before that one was sent."""
    steps = sorted(steps, key=lambda s: s["step"])
    clients = sorted({s["client"] for s in steps})
    at = _positions(steps)
    lanes_bottom = CLIENT_LANE * len(clients)
    right = max(at.values())
    svg = _svg(max(right + 10, 560), lanes_bottom + 30,
               f"timeline of a {len(steps)}-step case, one lane per client ({len(clients)})")
    for lane, client in enumerate(clients):
        _add(svg, "text", f"client {client}", x=4, y=lane * CLIENT_LANE + 30, font_size=11)
    for s in steps:
        x, y = at[s["step"], "invoke"], clients.index(s["client"]) * CLIENT_LANE + 4
        width = at[s["step"], "complete"] - x
        box = _add(svg, "rect", x=x, y=y, width=width, height=BOX_HEIGHT, fill="#eef2f8", stroke="#8899aa")
        _add(box, "title", f"step {s['step']}, client {s['client']}, round {s['round']}: sent at t = "
                           f"{s['invoke']:.3f} s, answered at t = {s['complete']:.3f} s")
        diverges = s["step"] == diverging_step
        _label(svg, s, x, y - 2, diverges)
        if diverges:
            _frame(svg, x - 1, y - 1, width + 2, BOX_HEIGHT + 2)
    _add(svg, "line", x1=LEFT, x2=right, y1=lanes_bottom + 8, y2=lanes_bottom + 8, stroke="#666666")
    _add(svg, "text", "sends and answers in order, not to scale: overlapping boxes were in flight at once", x=LEFT,
         y=lanes_bottom + 22, font_size=10, fill="#666666")
    return _markup(svg)


def sent_before_answered(step: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether a concurrent case's `step` was sent before `other` was answered: then it may have taken effect
    before `other` did."""
    return _when(step, "invoke") < _when(other, "complete")


def _positions(steps: list[dict[str, Any]]) -> dict[tuple[int, str], float]:
    """The x of each step's send ("invoke") and answer ("complete"), in the order they happened (`_when`): a send
    is followed by a step's width, so that every box has room for its label, an answer by ANSWERED_GAP only."""
    ends = sorted(((s, end) for s in steps for end in ("invoke", "complete")), key=lambda e: _when(*e))
    at, x = {}, float(LEFT)
    for s, end in ends:
        at[s["step"], end] = x
        x += STEP_WIDTH if end == "invoke" else ANSWERED_GAP
    return at


def _when(step: dict[str, Any], end: str) -> tuple:
    """When a step was sent ("invoke") or answered ("complete"), as a key that orders a concurrent case's sends and
    answers: the case's clock, then the wall clock (a virtual clock stands still within a round, where the steps'
    real windows still tell which overlapped), then the order sent; a step's send before its answer."""
    wall = step.get(f"{end}_wall")
    return step[end], wall if wall is not None else 0.0, step["step"], end == "complete"


def _label(svg: ET.Element, step: dict[str, Any], x: float, top: float, diverges: bool) -> None:
    """A step's label from (x, top) down: its number and operation, its answer (both red where it diverged, cut to a
    step's width, whole in their tooltip) and the time it was sent."""
    what, answer = step_label(step)
    colour = DIVERGING if diverges else "#222222"
    for line, y in ((f"{step['step']}. {what}", 16), (answer, 30)):
        text = _add(svg, "text", _cut(line), x=x + 4, y=top + y, font_size=11, fill=colour)
        if len(line) > LABEL_CHARACTERS:
            _add(text, "title", line)
    _add(svg, "text", f"t = {step['invoke']:.3f} s", x=x + 4, y=top + 44, font_size=10, fill="#666666")


def _frame(svg: ET.Element, x: float, y: float, width: float, height: float) -> None:
    """The red frame of the step whose answer the model does not permit (as `legend` shows it)."""
    _add(svg, "rect", x=x, y=y, width=width, height=height, fill="none", stroke=DIVERGING, stroke_width=2)


def legend() -> str:
    """What the timelines' colours and marks mean: drawn once, above them."""
    svg = _svg(560, 18 * (len(LEGEND) + 2) + 4, "what the timelines' colours and marks mean")
    legend_top = 2
    for row, (colour, meaning) in enumerate(LEGEND):
        y = legend_top + 18 * row
        _add(svg, "rect", x=4, y=y, width=22, height=12, fill=colour)
        _add(svg, "text", meaning, x=32, y=y + 10, font_size=11)
    y = legend_top + 18 * len(LEGEND)
    _add(svg, "circle", cx=15, cy=y + 6, r=5, fill="#000000")
    _add(svg, "text", "the target returned the message in that step", x=32, y=y + 10, font_size=11)
    _frame(svg, 4, y + 18, 22, 12)
    _add(svg, "text", "the step whose answer the model does not permit", x=32, y=y + 28, font_size=11)
    return _markup(svg)


def _cut(line: str) -> str:
    return line if len(line) <= LABEL_CHARACTERS else line[:LABEL_CHARACTERS - 1] + "…"


def _window(svg: ET.Element, states: list | None, x: float, y: float, start: float, end: float) -> None:
    """One message's expected visibility during one step's column."""
    if not states:
        return
    inner = STEP_WIDTH - 4
    if len(states) > 1:
        _add(svg, "rect", x=x + 2, y=y, width=inner, height=18, fill=EITHER)
        return
    hidden, visible_at = states[0]
    if hidden == "none" or visible_at <= start:
        _add(svg, "rect", x=x + 2, y=y, width=inner, height=18, fill=VISIBLE)
    elif visible_at >= end:
        _add(svg, "rect", x=x + 2, y=y, width=inner, height=18, fill=HIDDEN)
    else:
        split = inner * (visible_at - start) / (end - start)
        _add(svg, "rect", x=x + 2, y=y, width=split, height=18, fill=HIDDEN)
        _add(svg, "rect", x=x + 2 + split, y=y, width=inner - split, height=18, fill=VISIBLE)


def histogram(bars: dict[int, int], label: Callable[[int], str]) -> str:
    """Counts per bar, each bar labelled."""
    low, high = min(bars), max(bars)
    top = max(bars.values())
    width, height, left = 22, 120, 50
    svg = _svg(left + width * (high - low + 1) + 30, height + 70, "histogram")
    for bar in range(low, high + 1):
        count = bars.get(bar, 0)
        h = height * count / top
        x = left + (bar - low) * width
        rect = _add(svg, "rect", x=x, y=height - h + 10, width=width - 3, height=h, fill="#4a7fc1")
        _add(rect, "title", f"{label(bar)}: {count:,}")
        _add(svg, "text", label(bar), x=x, y=height + 24, font_size=9, transform=f"rotate(45 {x} {height + 24})")
    _add(svg, "text", f"{top:,}", x=2, y=20, font_size=10)
    return _markup(svg)
