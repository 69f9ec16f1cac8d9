"""Turning a target spec from the command line into a target."""

from __future__ import annotations

from adapters.base import Target, TargetError

SPECS = {
    "model": "the reference model itself (always conforms; tests the engine)",
    "moto": "moto in-process (mock_aws) on a virtual clock",
}


def make_target(spec: str, profile: str) -> Target:
    kind = spec.split(":", 1)[0]
    if kind == "model":
        from adapters.model_target import ModelTarget

        return ModelTarget(profile)
    if kind == "moto":
        from adapters.moto_target import MotoTarget

        return MotoTarget()
    known = ", ".join(SPECS)
    raise TargetError(f"unknown target {spec!r}; known targets: {known}")
