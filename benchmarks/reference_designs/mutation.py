"""How a design's mutants are made: one exact text edit of a method's source (or of a class constant), recompiled
in the design's own module, as a subclass of the design. An edit must apply exactly once, so that a mutant cannot
silently become the original when the design changes."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    target: type


def edit(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced by `new`; `old` must occur exactly once."""
    count = text.count(old)
    if count != 1:
        raise ValueError(f"mutant edit {old!r} applies {count} times, not once")
    return text.replace(old, new)


def method_edited(method: Callable[..., Any], old: str, new: str, module: ModuleType) -> dict[str, Any]:
    """The method, its source with one edit, compiled in `module`'s namespace (the design's own)."""
    source = edit(textwrap.dedent(inspect.getsource(method)), old, new)
    namespace: dict[str, Any] = {}
    code = compile(source, f"<mutant of {method.__qualname__}>", "exec")
    exec(code, dict(vars(module)), namespace)  # noqa: S102 -- the design's own source, edited in one known place
    return {method.__name__: namespace[method.__name__]}


def mutant(design: type, name: str, bug: str, overrides: dict[str, Any], module_name: str) -> Mutant:
    """A subclass of `design` with `overrides`, named after the mutant, defined in `module_name`."""
    class_name = "Mutant_" + name.replace("-", "_")
    return Mutant(name, bug, type(class_name, (design,), {"__module__": module_name, **overrides}))
