"""The spool on disk: one directory per queue, one file per message, striped lock files beside them, and the
signed receipt handles that name a message's file.

Layout under the spool's root::

    queues/<name>/attributes.json   the queue's configuration, replaced whole by rename
    queues/<name>/msgs/<stem>.msg   one message, a JSON record, replaced whole by rename
    queues/<name>/tmp/              where a record is written before it is renamed into msgs/
    queues/<name>/locks/NN.lock     64 lock stripes, never deleted: a message's lock is stripe crc32(stem) % 64
    queues/<name>/queue.lock        taken around a read-modify-write of attributes.json
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import shutil
import tempfile
import threading
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sqs_conformance.adapters.base import VirtualClock

# A lock file per message would have to be deleted with the message, and a lock taken on a file another thread has
# just unlinked protects nothing. Stripes are never deleted, so a lock on one always means what it says.
LOCK_STRIPES = 64
SUFFIX = ".msg"


@dataclass
class Record:
    """One message's file. Times are seconds on the suite's virtual clock."""

    message_id: str
    body: str
    sent_at: float
    visible_at: float
    receive_count: int = 0
    first_receive_at: float | None = None
    received_at: float | None = None  # the latest receive: the 12-hour ceiling counts from it
    receipt_handle: str | None = None  # the latest receive's handle
    attributes: dict[str, str] = field(default_factory=dict)

    def dumps(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def loads(cls, raw: bytes) -> Record:
        return cls(**json.loads(raw))


@dataclass(frozen=True)
class QueueDir:
    """Where one queue lives."""

    name: str
    path: Path

    @property
    def msgs(self) -> Path:
        return self.path / "msgs"

    @property
    def tmp(self) -> Path:
        return self.path / "tmp"

    @property
    def attributes_file(self) -> Path:
        return self.path / "attributes.json"

    @property
    def queue_lock(self) -> Path:
        return self.path / "queue.lock"

    def message_path(self, stem: str) -> Path:
        return self.msgs / f"{stem}{SUFFIX}"

    def lock_path(self, stem: str) -> Path:
        return self.path / "locks" / f"{zlib.crc32(stem.encode()) % LOCK_STRIPES:02d}.lock"

    def listing(self) -> list[str]:
        """Message stems, oldest first (a stem starts with its send's wall-clock nanoseconds)."""
        try:
            names = os.listdir(self.msgs)
        except FileNotFoundError:  # the queue was reset away under us
            return []
        return sorted(name[:-len(SUFFIX)] for name in names if name.endswith(SUFFIX))


def write_atomic(path: Path, data: bytes, tmp_dir: Path) -> None:
    """Write `data` to `path` so that no reader ever sees half of it: a new file, then one rename over the old."""
    tmp = tmp_dir / uuid.uuid4().hex
    with open(tmp, "wb") as f:
        f.write(data)
    # CHOICE: no fsync. The suite checks semantics, not power loss; a team's production build would fsync the file
    # and the directory here.
    os.replace(tmp, path)


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def make_queue_dir(root: Path, name: str, attributes: dict[str, str]) -> bool:
    """Build a queue in a private directory and rename it into place: True if it is new, False if a queue of that
    name was there first (two clients creating one queue at once both see one queue)."""
    building = root / "building" / uuid.uuid4().hex
    for sub in ("msgs", "tmp", "locks"):
        (building / sub).mkdir(parents=True)
    for stripe in range(LOCK_STRIPES):
        (building / "locks" / f"{stripe:02d}.lock").touch()
    (building / "queue.lock").touch()
    (building / "attributes.json").write_text(json.dumps(attributes))
    try:
        os.rename(building, root / "queues" / name)  # atomic; fails if the target directory exists and is not empty
    except OSError:
        shutil.rmtree(building, ignore_errors=True)
        return False
    return True


@dataclass(frozen=True)
class Receipt:
    """What a receipt handle names."""

    queue: str
    stem: str
    serial: int  # the message's receive count this receive produced
    received_at: float


class Handles:
    """Receipt handles: the receipt, base64-encoded, and an HMAC of it, so that a handle we issued can be told from
    a forged or mangled one even after its message is gone (a deleted message's handle still deletes: no error)."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def issue(self, queue: str, stem: str, serial: int, at: float) -> str:
        payload = json.dumps([queue, stem, serial, at, uuid.uuid4().hex[:8]], separators=(",", ":")).encode()
        body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{body}.{self._sign(body)}"

    def parse(self, handle: object) -> Receipt | None:
        if not isinstance(handle, str) or handle.count(".") != 1:
            return None
        body, signature = handle.split(".")
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            queue, stem, serial, at, _nonce = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (ValueError, binascii.Error):
            return None
        return Receipt(queue, stem, serial, at)

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:32]


class Spool:
    """What every connection over one spool shares: the directory, the clock, the lock that keeps our own moves of
    the clock in order, and the key that signs handles."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="spoolq-"))
        (self.root / "queues").mkdir()
        (self.root / "building").mkdir()
        self.clock = VirtualClock()
        # VirtualClock.advance_to reads, compares and writes: two threads advancing it at once could write the
        # smaller time last. Every advance this design makes holds this lock.
        self.clock_lock = threading.Lock()
        self.handles = Handles(os.urandom(32))

    def queue(self, name: str) -> QueueDir:
        return QueueDir(name, self.root / "queues" / name)

    def forget_queues(self) -> None:
        shutil.rmtree(self.root / "queues", ignore_errors=True)
        (self.root / "queues").mkdir()

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
