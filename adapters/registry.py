"""Turning a target spec from the command line into a target."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqs_conformance.adapters.base import Target, TargetError

from sqs_conformance.adapters.emulators import EMULATORS

TIME_TRAVEL = ":faketime"
AWS_NOT_MOVED = "--target aws takes no --faketime-file: AWS's clock cannot be moved"

SPECS = {
    "model": "the reference model itself (always conforms; tests the engine)",
    "moto": "moto in-process (mock_aws) on a virtual clock",
    **{name: f"{name}: installed and started on 127.0.0.1 by the suite, on a real clock (add {TIME_TRAVEL} to "
              f"move its clock under libfaketime instead of waiting)" for name in EMULATORS},
    "endpoint": "any SQS-compatible endpoint at --endpoint-url, on a real clock (with --faketime-file, a server you "
                "started under libfaketime reading that file: the suite moves its clock)",
    "aws": "real AWS (needs --allow-real-aws): the normal boto3 credential chain, or --aws-profile",
    "python:MODULE:CLASS": "an in-house queue's Python adapter (a subclass of adapters.base.Target)",
    "process:COMMAND": "an in-house queue behind a program speaking the suite's JSON-lines protocol",
}
IN_HOUSE = ("python:", "process:")


def is_known(spec: str) -> bool:
    time_travelled = spec.endswith(TIME_TRAVEL) and spec.removesuffix(TIME_TRAVEL) in EMULATORS
    return spec in SPECS or spec.startswith(IN_HOUSE) or time_travelled


def is_real_clock(spec: str, options: EndpointOptions | None = None) -> bool:
    """Waits are slept, and concurrent jobs can all be clients of one service."""
    moved = options is not None and options.faketime_file is not None
    return spec in EMULATORS or (spec in ("endpoint", "aws") and not moved)


@dataclass(frozen=True)
class EndpointOptions:
    """What real-clock targets take from the command line."""

    endpoint_url: str | None = None
    region: str | None = None
    aws_profile: str | None = None
    max_requests: int | None = None
    tolerance: float | None = None
    allow_real_aws: bool = False
    # --target endpoint: the libfaketime offset file its server was started to read; the suite moves its clock
    faketime_file: Path | None = None
    # more servers of the same kind, each under libfaketime reading a file of its own: (URL, file) each
    more_moved: tuple[tuple[str, Path], ...] = ()
    # --target EMULATOR:faketime: more servers started beside the first, while it is probed, for the connections a
    # run's witnesses open (each a server of its own on a moved clock)
    moved_spares: int = 0


def make_target(spec: str, profile: str, options: EndpointOptions = EndpointOptions(), say=lambda message: None
                ) -> Target:
    kind = spec.split(":", 1)[0]
    if options.faketime_file is not None and kind != "endpoint":
        raise TargetError(AWS_NOT_MOVED if kind == "aws" else
                          "--faketime-file is for --target endpoint (a server you started under libfaketime)"
                          + (f"; the suite moves {kind}'s clock itself: --target {kind}{TIME_TRAVEL}"
                             if kind in EMULATORS else ""))
    if kind == "model":
        from sqs_conformance.adapters.model_target import ModelTarget

        return ModelTarget(profile)
    if kind == "moto":
        from sqs_conformance.adapters.moto_target import MotoTarget

        return MotoTarget()
    if kind == "python":
        from sqs_conformance.adapters.inhouse import python_target

        return python_target(spec, profile)
    if kind == "process":
        from sqs_conformance.adapters.inhouse import ProcessTarget

        return ProcessTarget(spec.partition(":")[2], profile)
    if kind in EMULATORS:
        from sqs_conformance.adapters.endpoint import EmulatorTarget

        if not is_known(spec):
            raise TargetError(f"unknown target {spec!r}: {kind} or {kind}{TIME_TRAVEL}")
        from sqs_conformance.model.profiles import get_profile

        return EmulatorTarget(kind, max_requests=options.max_requests, tolerance=options.tolerance,
                              time_travel=spec.endswith(TIME_TRAVEL), fifo=get_profile(profile).fifo, say=say,
                              spares=options.moved_spares)
    if kind == "endpoint":
        from sqs_conformance.adapters.endpoint import EndpointTarget
        from sqs_conformance.adapters.servers import FakeTime, offset_in
        from sqs_conformance.model.profiles import get_profile

        if not options.endpoint_url:
            raise TargetError("--target endpoint needs --endpoint-url (e.g. http://127.0.0.1:4566)")
        for _, file in options.more_moved:  # each refused in one line before anything is written or sent
            offset_in(file)
        faketime = FakeTime.given(options.faketime_file) if options.faketime_file is not None else None
        return EndpointTarget(endpoint_url=options.endpoint_url, region=options.region,
                              aws_profile=options.aws_profile, max_requests=options.max_requests,
                              tolerance=options.tolerance, faketime=faketime, fifo=get_profile(profile).fifo,
                              say=say, more_moved=options.more_moved)
    if kind == "aws":
        from sqs_conformance.adapters.endpoint import EndpointTarget

        if not options.allow_real_aws:
            raise TargetError("--target aws creates and deletes queues in a real AWS account and costs money: "
                              "add --allow-real-aws to go ahead")
        if options.endpoint_url:
            raise TargetError("--target aws takes no --endpoint-url (use --target endpoint for an emulator)")
        return EndpointTarget(region=options.region, aws_profile=options.aws_profile,
                              max_requests=options.max_requests, tolerance=options.tolerance)
    known = ", ".join(SPECS)
    raise TargetError(f"unknown target {spec!r}; known targets: {known}")


def make_targets(spec: str, profile: str, options: EndpointOptions = EndpointOptions(), jobs: int = 1,
                 say=lambda message: None) -> list[Target]:
    """`jobs` independent connections to one service, for concurrent jobs: one moto server serves them all,
    and one request budget covers them all. Under libfaketime each job needs a server of its own, since moving
    one server's clock would move it for every job. `say` tells of slow preparations (an emulator's install)."""
    kind = spec.split(":", 1)[0]
    if jobs > 1 and kind == "moto":
        raise TargetError("moto in-process runs one job (mock_aws is process-wide); "
                          "use --target moto-server for --jobs")
    if jobs > 1 and kind == "endpoint" and options.faketime_file is not None:
        raise TargetError("--faketime-file moves the clock of one server for all its clients: it runs one job "
                          "(leave out --jobs)")
    first = make_target(spec, profile, options, say)
    targets = [first]
    try:
        while len(targets) < jobs:
            if is_real_clock(spec, options):
                another = first.another_connection()
                if another is None:
                    raise TargetError(f"{first.name} opens one connection only: run it without --jobs")
                targets.append(another)
            else:
                targets.append(make_target(spec, profile, options))
    except BaseException:
        close_all(targets)
        raise
    return targets


def close_all(targets: list[Target]) -> None:
    """Close in reverse, so that the target owning a server stops it last."""
    for target in reversed(targets):
        target.close()
