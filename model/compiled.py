"""Which of the model's modules run compiled (setup.py builds them with Cython where it can), and the plain source
instead for each one whose source changed since it was compiled, or for all with SQS_CONFORMANCE_PLAIN_MODEL set:
the build of an older source never runs. This module and the package's __init__ are never compiled.

Compiled or not, a module is the same source: modules of both kinds import each other as Python modules do.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

PLAIN_ENV = "SQS_CONFORMANCE_PLAIN_MODEL"
_FOLDER = Path(__file__).parent
_PACKAGE = __name__.rpartition(".")[0]


def builds_not_to_run(folder: Path, plain_wanted: bool) -> set[str]:
    """The modules of `folder` built as extensions that must run from their source: all of them where plain Python
    is wanted, else those whose source is newer than the build (edited, or checked out since)."""
    names = set()
    for built in folder.iterdir():
        # the longest suffix first, as the import system tries them: ".so" alone would name "core.cpython-311-..."
        suffix = next((s for s in importlib.machinery.EXTENSION_SUFFIXES if built.name.endswith(s)), None)
        if suffix is None:
            continue
        source = built.with_name(built.name[: -len(suffix)] + ".py")
        if source.exists() and (plain_wanted or source.stat().st_mtime > built.stat().st_mtime):
            names.add(source.stem)
    return names


class _FromSource(importlib.abc.MetaPathFinder):
    """Finds the named modules of the package as their .py source, ahead of the build beside it."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        package, _, name = fullname.rpartition(".")
        if package != _PACKAGE or name not in self.names:
            return None
        return importlib.util.spec_from_file_location(fullname, _FOLDER / f"{name}.py")


def run_from_source() -> None:
    """Before the package imports its modules: the source, not the build, for every build not to run."""
    names = builds_not_to_run(_FOLDER, bool(os.environ.get(PLAIN_ENV)))
    if names:
        sys.meta_path.insert(0, _FromSource(names))


def compiled_modules() -> list[str]:
    """The model's modules imported so far that run compiled."""
    return sorted(name for name, module in list(sys.modules.items())
                  if name.startswith(_PACKAGE + ".") and str(getattr(module, "__file__", "")).endswith(
                      tuple(importlib.machinery.EXTENSION_SUFFIXES)))
