"""A redis-server of the suite's own: 127.0.0.1 only, nothing written to disk, stopped by its pid."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from sqs_conformance.adapters.base import TargetError
from sqs_conformance.adapters.servers import LocalServer, free_port


def start_redis() -> LocalServer:
    binary = shutil.which("redis-server")
    if binary is None:
        raise TargetError("redis-server is not installed (Debian: apt-get install redis-server); "
                          "or point SQS_CONFORMANCE_REDIS_URL at a Redis of yours")
    port = free_port()
    scratch = Path(tempfile.mkdtemp(prefix="sqs-conformance-redis-"))
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
               "--dir", str(scratch), "--protected-mode", "yes"]
    return LocalServer("redis-server", command, port, scratch=scratch, log=scratch / "server.log")
