"""Fixtures of the in-house tests."""

import os

import pytest
import redis

from benchmarks.reference_designs.redisq.server import start_redis
from benchmarks.reference_designs.redisq.target import URL_VARIABLE


@pytest.fixture(scope="module")
def shared_redis():
    """One redis-server for the module's targets, as a team would point the suite at theirs."""
    server = start_redis()
    url = f"redis://127.0.0.1:{server.port}/0"
    before = os.environ.get(URL_VARIABLE)
    os.environ[URL_VARIABLE] = url
    yield redis.Redis.from_url(url)
    if before is None:
        os.environ.pop(URL_VARIABLE)
    else:
        os.environ[URL_VARIABLE] = before
    server.stop()
    assert server.process.poll() is not None
