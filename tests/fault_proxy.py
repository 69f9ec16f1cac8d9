"""A fault-injecting HTTP proxy on 127.0.0.1, between the suite and an SQS endpoint (moto's server).

For a share of the requests it does one fault of a kind: drops the connection before forwarding (nothing
happened), drops it after forwarding (it happened, nobody heard), answers 500 after forwarding, answers slowly,
or throttles (refuses without forwarding, as AWS does under load), or stalls (holds the request unanswered until
the proxy closes, as a dead connection does; only where asked: `stalled`, the actions it may hold). Faults are
drawn from a seeded generator, and the first `spare` requests are left alone (the endpoint's first probe), so a run
is reproducible up to timing.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

FAULTS = ("drop-before", "drop-after", "error-after", "slow", "throttle")
STALL = "stall"  # asked for by name, with the actions it may hold: a run through it waits on dead requests
SLOW_SECONDS = 1.5  # well inside the client's read timeout: the answer comes, late
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class FaultProxy:
    def __init__(self, upstream: str, faults: tuple[str, ...] = FAULTS, rate: float = 0.05, seed: int = 0,
                 spare: int = 1, stalled: tuple[str, ...] = ()) -> None:
        unknown = set(faults) - {*FAULTS, STALL}
        if unknown:
            raise ValueError(f"no such fault: {sorted(unknown)}")
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.faults, self.rate, self.spare = faults, rate, spare
        self.stalled = stalled  # the actions (X-Amz-Target's operation) a stall may hold
        self._closing = threading.Event()
        self.done: Counter[str] = Counter()  # faults done, by kind
        self.requests = 0
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
                try:
                    proxy._handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on it (a stopped run abandons its requests)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def _draw(self, action: str) -> str | None:
        with self._lock:
            self.requests += 1
            if self.requests <= self.spare or self._random.random() >= self.rate:
                return None
            fault = self._random.choice(self.faults)
            if fault == STALL and action not in self.stalled:
                return None
            self.done[fault] += 1
            return fault

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        body = request.rfile.read(int(request.headers.get("Content-Length", 0)))
        fault = self._draw(request.headers.get("X-Amz-Target", "").rpartition(".")[2])
        if fault == STALL:
            self._closing.wait()
            return _drop(request)
        if fault == "drop-before":
            return _drop(request)
        if fault == "throttle":
            return _reply(request, 400, {"x-amzn-query-error": "RequestThrottled;Sender"},
                          {"__type": "com.amazonaws.sqs#RequestThrottled", "message": "Rate exceeded"})
        status, headers, answer = self._forward(request, body)
        if fault == "drop-after":
            return _drop(request)
        if fault == "error-after":
            return _reply(request, 500, {}, {"__type": "com.amazonaws.sqs#InternalError",
                                             "message": "We encountered an internal error. Please try again."})
        if fault == "slow":
            time.sleep(SLOW_SECONDS)
        request.send_response(status)
        for name, value in headers:
            if name.lower() not in _HOP_BY_HOP:
                request.send_header(name, value)
        request.send_header("Content-Length", str(len(answer)))
        request.end_headers()
        request.wfile.write(answer)

    def _forward(self, request: BaseHTTPRequestHandler, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
            connection.request("POST", request.path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()


def _drop(request: BaseHTTPRequestHandler) -> None:
    """Close the connection with no answer at all."""
    request.close_connection = True
    try:
        request.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _reply(request: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: dict[str, str]) -> None:
    data = json.dumps(body).encode()
    request.send_response(status)
    for name, value in {"Content-Type": "application/x-amz-json-1.0", **headers}.items():
        request.send_header(name, value)
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)
