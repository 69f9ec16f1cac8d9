"""The witnesses on a moved clock against the same on a real clock: wall time, CPU and rules decided, per number of
servers the witnesses are shared out between.

Runs `run --witnesses-only` as the command does, in this process: each EMULATOR (default moto-server) against each
PROFILE on a real clock (its default 8 jobs, each witness connection a client of one server), then EMULATOR:faketime
with the witnesses on 1, 4, 8... servers of their own (runner.MOVED_CLOCK_SERVERS; 1 is how it ran before each
moved-clock connection got a server of its own), those beyond the first started while it is probed, as `run` does.
Wall time counts from the first server's start to the last one's stop; CPU is the suite's and its servers' (reaped
children). Each configuration `--repeat` times, interleaved, since the machine is shared: the median is printed,
and with several emulators or profiles each one's ratios at the end. Nothing is asserted: the figures are
printed.

    python3 -m benchmarks.moved_clock [--emulator moto-server ...] [--profile sqs-standard ...]
                                      [--servers 1,4,8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqs_conformance.adapters.registry import TIME_TRAVEL, EndpointOptions, close_all, make_targets  # noqa: E402
from sqs_conformance.conformance import runner  # noqa: E402
from sqs_conformance.conformance.machine import unreachable  # noqa: E402
from sqs_conformance.model.rules import rules_for  # noqa: E402

REAL_CLOCK_JOBS = 8  # `run`'s default on a real clock


def cpu_seconds() -> tuple[float, float]:
    """The suite's CPU seconds and its servers' (children, counted once stopped)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def once(spec: str, profile: str, jobs: int, out: Path) -> dict[str, float]:
    started, cpu = time.monotonic(), cpu_seconds()
    # as `run` opens them: a moved clock's servers for the witnesses started while the first is probed
    spares = EndpointOptions(moved_spares=runner.MOVED_CLOCK_SERVERS - 1)
    targets = make_targets(spec, profile, spares, jobs=jobs)
    try:
        result = runner.run(targets, profile, runner.RunOptions(seed=1, out_dir=out, search=False, shrink=False))
    finally:
        close_all(targets)
    reachable = [r.id for r in rules_for(profile) if r.id not in unreachable(profile)]
    decided = result.tallies.decided() | set(result.findings)
    (suite, servers), (suite_before, servers_before) = cpu_seconds(), cpu
    return {"wall": time.monotonic() - started, "witnesses": result.spent.witnesses,
            "cpu": suite + servers - suite_before - servers_before, "servers_cpu": servers - servers_before,
            "played": result.spent.witnesses_played, "in_all": result.spent.witnesses_in_all,
            "decided": sum(rule_id in decided for rule_id in reachable), "reachable": len(reachable),
            "diverging": len(result.findings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emulator", action="append", help="repeatable [default: moto-server]")
    parser.add_argument("--profile", action="append", help="repeatable [default: sqs-standard]")
    parser.add_argument("--servers", default="1,4,8", help="numbers of servers the moved-clock witnesses are on")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    servers = [int(n) for n in args.servers.split(",")]
    ratios = [(emulator, profile, compared(emulator, profile, servers, args.repeat))
              for emulator in args.emulator or ["moto-server"] for profile in args.profile or ["sqs-standard"]]
    if len(ratios) > 1:
        print("each moved configuration's median wall time against the real clock's:")
        width = max(len(emulator) for emulator, _, _ in ratios)
        for emulator, profile, by_label in ratios:
            print(f"  {emulator:<{width}} {profile:<13} "
                  + ", ".join(f"{label}: {ratio:.1f}x" for label, ratio in by_label.items()))


def compared(emulator: str, profile: str, servers: list[int], repeat: int) -> dict[str, float]:
    """Each configuration of one emulator and profile, `repeat` times interleaved; printed, and the medians of its
    moved configurations' wall times against the real clock's returned."""
    runs: dict[str, list[dict[str, float]]] = {}
    print(f"{emulator} against {profile}, witnesses only; load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(repeat):
            configurations = [("real clock", emulator, REAL_CLOCK_JOBS, None)] + [
                (f"moved, {n} server{'s' * (n > 1)}", emulator + TIME_TRAVEL, 1, n) for n in servers]
            for label, spec, jobs, count in configurations:
                if count is not None:
                    runner.MOVED_CLOCK_SERVERS = count
                figures = once(spec, profile, jobs, Path(tmp) / f"{round_}-{label}")
                runs.setdefault(label, []).append(figures)
                print(f"  {label:<20} {figures['wall']:6.1f} s wall (witnesses {figures['witnesses']:5.1f} s), "
                      f"{figures['cpu']:5.1f} s CPU ({figures['servers_cpu']:.1f} s the servers'), "
                      f"{figures['played']:.0f}/{figures['in_all']:.0f} witnesses, "
                      f"{figures['decided']:.0f}/{figures['reachable']:.0f} rules decided, "
                      f"{figures['diverging']:.0f} diverging", flush=True)
    real = statistics.median(r["wall"] for r in runs["real clock"])
    print(f"medians of {repeat}:")
    ratios = {}
    for label, figures in runs.items():
        wall = statistics.median(r["wall"] for r in figures)
        print(f"  {label:<20} {wall:6.1f} s wall, {statistics.median(r['cpu'] for r in figures):5.1f} s CPU, "
              f"{wall / real:4.1f}x the real clock's")
        if label != "real clock":
            ratios[label] = wall / real
    return ratios


if __name__ == "__main__":
    from benchmarks.record import recorded  # its figures, also into docs/benchmarks.md

    with recorded("moved_clock", __doc__):
        main()
