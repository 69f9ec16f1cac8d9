"""The model's modules (model/*.py) compiled with Cython where a C compiler is at hand: the same source, the same
model, faster (benchmarks/model_ops.py measures by how much). Everything else is in pyproject.toml.

A compile that fails leaves the module it was for as plain Python (the install warns and goes on), and so does
SQS_CONFORMANCE_PLAIN_MODEL=1 at install. model/compiled.py runs the plain source of a module changed since it was
compiled, so an edit counts at once; `pip install -e .` compiles it again.

Cython turns a loop or a list comprehension into a C loop, but a generator expression (in tuple(), any(), sum()) into
a generator object made at every call: where every step runs one, the model builds a list instead (`tuple([...])`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# -O3: the model's steps faster than at -O1 once the interpreter's share of them had shrunk (measured when chosen:
# the commit that set it says by how much), for nearly twice the compile time (24 MB of generated C). No debug
# information: the tracebacks keep their lines all the same.
COMPILE_ARGS = ["-O3", "-g0"]
NEVER_COMPILED = ("__init__.py", "compiled.py")  # they choose, at import, between each module's source and build


def model_extensions() -> list[Extension]:
    if os.environ.get("SQS_CONFORMANCE_PLAIN_MODEL"):  # model/compiled.py's PLAIN_ENV (this file cannot import it)
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _warn("the model", "Cython is not installed")
        return []
    sources = sorted(p for p in Path("model").glob("*.py") if p.name not in NEVER_COMPILED)
    extensions = [Extension(f"sqs_conformance.model.{p.stem}", [str(p)], extra_compile_args=COMPILE_ARGS)
                  for p in sources]
    try:
        return cythonize(extensions, language_level=3, quiet=True, nthreads=os.cpu_count() or 1)
    except Exception as error:  # whatever Cython refuses, the model still runs as Python
        _warn("the model", f"Cython could not translate it ({error})")
        return []


class OptionalBuildExt(build_ext):
    """Builds on every core; a module that does not compile stays plain Python."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all, say
            _warn("the model", f"the build failed ({error})")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            _warn(ext.name, f"it did not compile ({error})")


def _warn(what: str, why: str) -> None:
    print(f"sqs-conformance: {what} runs as plain Python, slower: {why}", file=sys.stderr)


setup(ext_modules=model_extensions(), cmdclass={"build_ext": OptionalBuildExt})
