"""The folders a command writes into: made where missing and checked before anything runs, so a bad path is one
line and nothing else; and left behind only where something was written into them."""

from __future__ import annotations

import os
from pathlib import Path


class NotWritable(Exception):
    """A folder a command cannot write into; the message is one line for the user."""


def writable(folder: Path, option: str) -> list[Path]:
    """Make `folder` (and its parents) if missing and check it takes a file; the folders it made, innermost first.
    Where it cannot, raises NotWritable, leaving none of them behind."""
    made = [f for f in [folder, *folder.parents] if not f.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".sqs-conformance-write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        remove_if_empty(made)
        raise NotWritable(f"{option} {folder}: cannot write there ({error.strerror or error})") from None
    return made


def remove_if_empty(folders: list[Path]) -> None:
    """Folders `writable` made, innermost first, each removed while nothing was written into it."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # something was written there, or it is gone already
            return
