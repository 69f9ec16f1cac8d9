"""Suite throughput, and how much of it the suite itself costs.

In one process: the suite's steps/s against the model alone and against moto (Hypothesis, the checker model and
the trace included), with where a step's time goes (in moto, in the session's own work, the rest); then two
baselines: the raw calls/s of a plain boto3 loop on moto making the same operation mix (the same operations in
the same order, read back from the suite's trace), and the suite's own requests replayed with plain boto3 (the
same parameters, the clock moved as it was). Each ratio suite ÷ baseline is the share of moto's speed the suite
keeps. The suite and its two baselines run one after the other, in `--rounds` rounds: on this machine moto's own
speed drifts by a third over minutes, so a baseline timed at another moment would make a ratio of the drift.
The replay is timed once more with other work between its calls (untimed): moto's calls are slower inside the
suite than back to back, and that shows how much of it any work between them costs (the memory it touches).

    python3 -m benchmarks.throughput [--examples N] [--profile sqs-standard] [--repeat N] [--model-only] [--rounds N]

The suite against the model is also timed in CPU seconds a step, the best of `--repeat` runs: on a busy machine
the steadier figure of the suite's own cost (the model as a target costs little), to compare two versions of the
code run alternately.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from botocore.exceptions import ClientError  # noqa: E402

from sqs_conformance.adapters.model_target import ModelTarget  # noqa: E402
from sqs_conformance.adapters.moto_target import MotoTarget  # noqa: E402
from sqs_conformance.conformance.collector import COLLECTION_THRESHOLD  # noqa: E402
from sqs_conformance.conformance.runner import RunOptions, run  # noqa: E402
from sqs_conformance.conformance.session import Session  # noqa: E402
from sqs_conformance.conformance.trace import read_trace  # noqa: E402
from sqs_conformance.model.rules import CATALOGUE  # noqa: E402


class Stopwatch:
    """Seconds spent inside a method, summed over every call."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, method):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed


class CollectorTime:
    """Seconds the cycle collector ran while in use (whichever part of a step it interrupted), and how often."""

    def __init__(self) -> None:
        self.seconds, self.collections, self._started = 0.0, 0, 0.0

    def _note(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.collections += 1

    def __enter__(self) -> CollectorTime:
        gc.callbacks.append(self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._note)


@dataclass
class Request:
    """One request the suite sent, as botocore got it, with the target's clock when it was sent and its answer."""

    operation: str
    params: dict[str, Any]
    at: float
    reply: Any


def recording(target, requests: list[Request], overhead: Stopwatch) -> None:
    """Keep every request `target`'s client sends, in order; the time that takes is added to `overhead`."""
    send = target.client._make_api_call

    def recorded(operation: str, params: dict[str, Any]):
        start = time.perf_counter()
        request = Request(operation, copy.deepcopy(params), target.clock.now(), None)
        requests.append(request)
        overhead.seconds += time.perf_counter() - start
        request.reply = send(operation, params)  # an error reply raises: its reply stays None
        return request.reply

    target.client._make_api_call = recorded


def suite(target, profile: str, examples: int, out: Path, requests: list[Request] | None = None
          ) -> tuple[float, int, int, dict[str, float]]:
    """Seconds, steps and cases of a run, and where its time went: in the target, in the session's own work around
    each call (the model judging the answer, the trace), and everything else (Hypothesis drawing each step and
    running its engine, the machine choosing arguments, setting up each case); with the CPU seconds, and the
    seconds and collections of the cycle collector, which interrupts any of the three."""
    in_target, in_session, recorder = Stopwatch(), Stopwatch(), Stopwatch()
    cpu = time.process_time()
    if requests is not None:
        recording(target, requests, recorder)  # the benchmark's own work: not counted as the suite's
    target.execute = in_target.wrap(target.execute)
    original = Session.execute
    Session.execute = in_session.wrap(original)  # type: ignore[method-assign]
    start = time.perf_counter()
    try:
        # Every rule tolerated: no case stops at a divergence, so this times generation, not shrinking (nor the
        # witnesses' replay).
        with CollectorTime() as collector:
            result = run(target, profile, RunOptions(examples=examples, seed=1, out_dir=out, max_rounds=1,
                                                     coverage_rounds=0, shrink=False,
                                                     tolerate=frozenset(r.id for r in CATALOGUE), witnesses=False))
    finally:
        Session.execute = original  # type: ignore[method-assign]
        target.close()
    seconds = time.perf_counter() - start - recorder.seconds
    return seconds, result.steps, result.cases, {"target": in_target.seconds - recorder.seconds,
                                   "session": in_session.seconds - in_target.seconds,
                                   "rest": seconds + recorder.seconds - in_session.seconds,
                                   "cpu": time.process_time() - cpu - recorder.seconds,
                                   "collector": collector.seconds, "collections": collector.collections}


def engine_floor(rules: int, steps_per_case: int, cases: int) -> float:
    """Seconds a step of Hypothesis' stateful engine alone: a machine of `rules` rules that each take `st.data()`
    and do nothing, run for `cases` cases of `steps_per_case` steps (the suite's own shape), no shrinking. What
    any machine run by that engine pays before it draws, judges or sends anything."""
    from hypothesis import HealthCheck, Phase, settings, strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

    steps = [0]

    def rule_named(name: str):
        def nothing(self, data) -> None:
            steps[0] += 1
        nothing.__name__ = nothing.__qualname__ = name  # Hypothesis tells rules apart by name
        return rule(data=st.data())(nothing)

    body = {f"rule_{i}": rule_named(f"rule_{i}") for i in range(rules)}
    machine = type("EmptyMachine", (RuleBasedStateMachine,), body)
    start = time.perf_counter()
    run_state_machine_as_test(machine, settings=settings(
        max_examples=cases, stateful_step_count=steps_per_case, deadline=None, database=None,
        suppress_health_check=list(HealthCheck), phases=[Phase.generate]))
    return (time.perf_counter() - start) / max(1, steps[0])


def own_loop_floor(rules: int, steps_per_case: int, cases: int) -> float:
    """Seconds a step of a loop of the suite's own under `@given(st.data())`, in the same shape, instead of the
    stateful engine: each step draws which of `rules` it is and whether the case goes on (as the machine's rules
    draw, conformance/hypothesis_hooks.py) and does nothing. What driving its own steps would cost the suite."""
    from hypothesis import HealthCheck, Phase, given, settings, strategies as st

    from sqs_conformance.conformance.hypothesis_hooks import QuickDraws

    which, going_on = st.integers(0, rules - 1), st.booleans()
    steps = [0]

    @settings(max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate])
    @given(st.data())
    def one_case(data) -> None:
        draws = QuickDraws(data)
        for _ in range(steps_per_case):
            draws.draw(which)
            draws.draw(going_on)
            steps[0] += 1

    start = time.perf_counter()
    one_case()
    return (time.perf_counter() - start) / max(1, steps[0])


def draw_costs(cases: int = 300, draws: int = 4) -> tuple[float, float]:
    """Seconds a draw of a small integer takes through `data.draw` and through `QuickDraws` (the machine's way,
    conformance/hypothesis_hooks.py), the two alternating within each case of one test."""
    from hypothesis import HealthCheck, Phase, given, settings, strategies as st

    from sqs_conformance.conformance.hypothesis_hooks import QuickDraws

    small = st.integers(0, 9)
    spent = [0.0, 0.0]

    @settings(max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate])
    @given(st.data())
    def one_case(data) -> None:
        for index, draws_from in enumerate((data, QuickDraws(data))):
            start = time.perf_counter()
            for _ in range(draws):
                draws_from.draw(small, label="n")
            spent[index] += time.perf_counter() - start

    one_case()
    return spent[0] / (cases * draws), spent[1] / (cases * draws)


def draws_a_step(profile: str, examples: int, out: Path) -> tuple[Counter, int]:
    """The choices Hypothesis makes in a run of the suite against the model, by what they decide, and the steps
    run: counted through the engine's one private method every choice goes through (none are counted, should a
    release rename it)."""
    from hypothesis.internal.conjecture import data as conjecture

    counts: Counter = Counter()
    original = getattr(conjecture.ConjectureData, "_draw", None)
    if original is None:
        return counts, 1

    def counted(self, *args, **kwargs):
        counts[_drawn_by(sys._getframe(1))] += 1
        return original(self, *args, **kwargs)

    conjecture.ConjectureData._draw = counted  # type: ignore[method-assign]
    try:
        _, steps, _, _ = suite(ModelTarget(profile), profile, examples, out)
    finally:
        conjecture.ConjectureData._draw = original  # type: ignore[method-assign]
    return counts, steps


def _drawn_by(frame) -> str:
    """What a choice decides, from the nearest frame of the engine's or the suite's that asked for it."""
    while frame is not None:
        path, function = frame.f_code.co_filename, frame.f_code.co_name
        if path.endswith("featureflags.py"):
            return "whether a rule is enabled (swarm testing)"
        if path.endswith("datatree.py"):
            return "in the engine's tree of cases tried (no test run)"
        if "conformance" in Path(path).parts:
            return "the rules' own"
        if path.endswith("stateful.py"):
            return "whether the case goes on" if function == "run_state_machine" else "which rule"
        frame = frame.f_back
    return "elsewhere"


def raw_loop(operations: list[str], fifo: bool) -> float:
    """The same operations with plain boto3 calls on moto, each on live messages where it can be."""
    moto = MotoTarget()
    client = moto.client
    try:
        start = time.perf_counter()
        attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if fifo else {}
        url = client.create_queue(QueueName="raw" + (".fifo" if fifo else ""), Attributes=attributes)["QueueUrl"]
        handles: list[str] = ["not-a-receipt-handle"]
        group = {"MessageGroupId": "g"} if fifo else {}
        for i, name in enumerate(operations):
            if name == "SendMessage":
                client.send_message(QueueUrl=url, MessageBody=f"m{i}", **group)
            elif name == "ReceiveMessage":
                reply = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0,
                                               MessageSystemAttributeNames=["All"])
                handles += [m["ReceiptHandle"] for m in reply.get("Messages", [])]
            elif name == "ChangeMessageVisibility":
                _quietly(client.change_message_visibility, QueueUrl=url, ReceiptHandle=handles[-1],
                         VisibilityTimeout=30)
            elif name == "DeleteMessage":
                _quietly(client.delete_message, QueueUrl=url, ReceiptHandle=handles[-1])
            elif name == "ChangeMessageVisibilityBatch":
                _quietly(client.change_message_visibility_batch, QueueUrl=url, Entries=[
                    {"Id": "a", "ReceiptHandle": handles[-1], "VisibilityTimeout": 30}])
            elif name == "DeleteMessageBatch":
                _quietly(client.delete_message_batch, QueueUrl=url, Entries=[{"Id": "a", "ReceiptHandle": handles[-1]}])
            elif name == "GetQueueAttributes":
                client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
            elif name == "SetQueueAttributes":
                client.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "30"})
            elif name == "PurgeQueue":
                client.purge_queue(QueueUrl=url)
            elif name == "CreateQueue":
                client.create_queue(QueueName=f"raw{i}" + (".fifo" if fifo else ""), Attributes=attributes)
        return time.perf_counter() - start
    finally:
        moto.close()


def replay(requests: list[Request], between: Callable[[], object] | None = None) -> tuple[float, int]:
    """The suite's own requests again, with plain boto3 on a fresh moto, the clock moved as it was: the same work
    for moto, and none of the suite's. Receipt handles and message ids are moto's own each time: those the
    recording got are swapped for the ones the replay gets, in the order they come. Returns the seconds in moto's
    calls, and how many answers differed from the recording's (refused where it was not or the reverse, or
    another number of messages): none, if the replay did the same work. `between`, if given, runs before each
    call, untimed."""
    moto = MotoTarget()
    client, clock = moto.client, moto.clock
    ids: dict[str, str] = {}
    differed, seconds = 0, 0.0
    try:
        for request in requests:
            clock.advance_to(request.at)
            params = _swapped(request.params, ids)
            if between is not None:
                between()
            start = time.perf_counter()
            try:
                reply = client._make_api_call(request.operation, params)
            except ClientError:
                reply = None
            seconds += time.perf_counter() - start
            differed += _kind(reply) != _kind(request.reply)
            _learn(request.reply, reply, ids)
        return seconds, differed
    finally:
        moto.close()


# Work of the kind the suite does between two calls to moto (Hypothesis, the model, the trace), in size: some
# 0.7 MB of Python objects made, encoded and decoded. Moto's calls run after it as they do inside the suite.
_OTHER_WORK = [{"step": i, "fields": [f"value {j}" for j in range(40)]} for i in range(300)]


def other_work() -> None:
    json.loads(json.dumps(_OTHER_WORK))


@dataclass
class Round:
    """The suite against moto, then the raw loop of the same mix, then its requests replayed: one after the other,
    so that the three see the same machine (its speed drifts by a third over minutes)."""

    seconds: float
    steps: int
    cases: int
    spent: dict[str, float]
    mix: Counter
    raw_rate: float
    replay_rate: float
    differed: int
    disturbed_rate: float  # the replay with other work between its calls

    @property
    def suite_rate(self) -> float:
        return self.steps / self.seconds

    @property
    def in_moto(self) -> float:
        """Seconds a step spent in moto's calls inside the suite."""
        return self.spent["target"] / self.steps

    def summary(self) -> str:
        return (f"suite {self.suite_rate:,.0f} steps/s ({self.steps:,} steps, {self.seconds:.1f} s); plain boto3, "
                f"same mix {self.raw_rate:,.0f} calls/s ({self.suite_rate / self.raw_rate:.2f}); its requests "
                f"replayed {self.replay_rate:,.0f} calls/s ({self.suite_rate / self.replay_rate:.2f}, {self.differed} "
                f"answers differed); moto's calls {1000 * self.in_moto:.2f} ms a step inside the suite, "
                f"{1000 / self.replay_rate:.2f} ms replayed, {1000 / self.disturbed_rate:.2f} ms replayed with "
                f"other work between calls")


def against_moto(profile: str, examples: int, out: Path) -> Round:
    requests: list[Request] = []
    seconds, steps, cases, spent = suite(MotoTarget(), profile, examples, out, requests)
    operations = [record["operation"].__class__.__name__ for record in read_trace(out / "trace.jsonl")]
    raw_seconds = raw_loop(operations, profile == "sqs-fifo")
    replay_seconds, differed = replay(requests)
    disturbed_seconds, _ = replay(requests, between=other_work)
    return Round(seconds, steps, cases, spent, Counter(operations), len(operations) / raw_seconds,
                 len(requests) / replay_seconds, differed, len(requests) / disturbed_seconds)


def _kind(reply: Any) -> tuple[bool, int]:
    return reply is None, len(reply.get("Messages", [])) if reply else 0


_IDS = ("ReceiptHandle", "MessageId")


def _swapped(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {k: _swapped(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_swapped(v, ids) for v in value]
    return value


def _learn(recorded: Any, replayed: Any, ids: dict[str, str]) -> None:
    """The ids of the replay's answer, by the same places in the recorded answer."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in _IDS:
            if isinstance(recorded.get(key), str) and isinstance(replayed.get(key), str):
                ids[recorded[key]] = replayed[key]
        for key, value in recorded.items():
            if key not in _IDS:
                _learn(value, replayed.get(key), ids)
    elif isinstance(recorded, list) and isinstance(replayed, list):
        for a, b in zip(recorded, replayed, strict=False):  # a shorter answer: its ids are what there is
            _learn(a, b, ids)


def _quietly(call, **kwargs) -> None:
    try:
        call(**kwargs)
    except ClientError:
        pass  # a stale handle is part of the mix: its error costs what it costs


GOAL = 0.85  # issue 16's share of moto's speed for the suite to keep


def kept(cost: float, calls_a_second: float) -> float:
    """The share of a baseline's rate a suite keeps whose step costs `cost` seconds besides the baseline's call."""
    return 1 / (1 + cost * calls_a_second)


def left_by(share: float, calls_a_second: float) -> float:
    """Seconds a step may cost besides the baseline's call for the suite to keep `share` of its rate (the inverse
    of `kept`)."""
    return (1 / share - 1) / calls_a_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60)  # fewer: too few steps for a steady figure
    parser.add_argument("--profile", default="sqs-standard")
    parser.add_argument("--repeat", type=int, default=1, help="runs against the model, the best CPU figure kept")
    parser.add_argument("--model-only", action="store_true", help="only the suite against the model")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds against moto: the suite, the raw loop and the replay, one after the other")
    args = parser.parse_args()
    if min(args.repeat, args.examples, args.rounds) < 1:
        parser.error("--repeat, --examples and --rounds must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [suite(ModelTarget(args.profile), args.profile, args.examples, Path(tmp) / f"model{i}")
                for i in range(args.repeat)]
        seconds, steps, _, _ = runs[0]
        cpu = min(spent["cpu"] for _, _, _, spent in runs) / steps
        print(f"suite against the model: {steps / seconds:9,.0f} steps/s  ({steps:,} steps in {seconds:.1f} s; "
              f"{1000 * cpu:.3f} ms of CPU a step, best of {args.repeat})")
        plain, quick = draw_costs()
        print(f"a draw: {1e6 * plain:.0f} us through data.draw, {1e6 * quick:.0f} us as the machine draws")
        counts, counted_steps = draws_a_step(args.profile, args.examples, Path(tmp) / "draws")
        print(f"choices a step ({sum(counts.values()) / counted_steps:.1f}, the suite against the model): "
              + ", ".join(f"{n / counted_steps:.1f} {what}" for what, n in counts.most_common())
              if counts else "choices a step: not counted (this Hypothesis has no ConjectureData._draw)")
        if args.model_only:
            return
        rounds = [against_moto(args.profile, args.examples, Path(tmp) / f"moto{i}") for i in range(args.rounds)]
        for number, measured in enumerate(rounds, 1):
            print(f"round {number}: " + measured.summary())
        first = rounds[0]
        print("  a step's time (round 1): " + ", ".join(
            f"{part} {1000 * t / first.steps:.2f} ms ({t / first.seconds:.0%})"
            for part, t in first.spent.items() if part in ("target", "session", "rest"))
              + "   (target: moto's calls; session: the model's verdict and the trace; rest: Hypothesis, the machine,"
                " each case's set-up)")
        print(f"  the cycle collector, within those: {1000 * first.spent['collector'] / first.steps:.2f} ms a step "
              f"({first.spent['collector'] / first.seconds:.0%}, {first.spent['collections']:.0f} collections; the "
              f"run's threshold for the youngest generation: {COLLECTION_THRESHOLD:,}, CPython's default 700)")
        print("  the mix: " + ", ".join(f"{k} {v}" for k, v in first.mix.most_common()))
        same_mix = statistics.median(r.suite_rate / r.raw_rate for r in rounds)
        replayed = statistics.median(r.suite_rate / r.replay_rate for r in rounds)
        print(f"suite steps/s / raw calls/s = {same_mix:.2f}, / replayed calls/s = {replayed:.2f}   (medians of "
              f"{len(rounds)} rounds)")
        # The most any change to the suite's own work could reach: a step that cost only its call to moto, as moto
        # answers inside the suite (the adapter included).
        print(f"ceiling, were the suite's own cost zero: "
              f"{statistics.median(1 / r.in_moto / r.raw_rate for r in rounds):.2f} of the same mix, "
              f"{statistics.median(1 / r.in_moto / r.replay_rate for r in rounds):.2f} of the replay")
        raw_rate = statistics.median(r.raw_rate for r in rounds)
        replay_rate = statistics.median(r.replay_rate for r in rounds)
        steps, cases = first.steps, first.cases
        # Hypothesis' stateful engine's own floor, in the suite's shape: what no work of the suite's can go below.
        from sqs_conformance.conformance.machine import Run, build_machine

        rules = len(build_machine(Run(ModelTarget(args.profile), args.profile, "floor")).setup_state().rules)
        floor = engine_floor(rules, max(1, round(steps / cases)), cases)
        print(f"Hypothesis' stateful engine alone ({rules} rules doing nothing, {steps / cases:.0f} steps a case, "
              f"{cases} cases): {1000 * floor:.2f} ms a step; a suite costing that and moto's calls, nothing else: "
              f"{kept(floor, raw_rate):.2f} of the same mix, {kept(floor, replay_rate):.2f} of the replay")
        own = own_loop_floor(rules, max(1, round(steps / cases)), cases)
        print(f"a loop of its own under @given instead (two draws a step, nothing else): {1000 * own:.2f} ms a step; "
              f"a suite costing that and moto's calls: {kept(own, raw_rate):.2f} of the same mix, "
              f"{kept(own, replay_rate):.2f} of the replay")
        # What a step must pay whichever loop drives it: the model's verdict and the trace (the session).
        session = statistics.median(r.spent["session"] / r.steps for r in rounds)
        print(f"with the session's work too ({1000 * session:.2f} ms a step), nothing of the machine's: "
              f"{kept(floor + session, raw_rate):.2f} of the same mix under the stateful engine, "
              f"{kept(own + session, raw_rate):.2f} under a loop of its own; at {GOAL} a step leaves the suite "
              f"{1000 * left_by(GOAL, raw_rate):.2f} ms beside moto's calls")


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("throughput", __doc__):
        main()
