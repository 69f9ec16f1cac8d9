"""Fixtures of the in-house tests."""

import os

import pytest
import redis

from benchmarks.reference_designs.pgq.server import BIN, start_postgres
from benchmarks.reference_designs.pgq.target import URL_VARIABLE as POSTGRES_URL
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


@pytest.fixture(scope="module")
def shared_postgres():
    """One PostgreSQL for the module's targets (each in its own schema), as a team would point the suite at theirs."""
    if not (BIN / "initdb").is_file():
        pytest.skip("PostgreSQL 15 is not installed (Debian: apt-get install postgresql-15)")
    server = start_postgres()
    before = os.environ.get(POSTGRES_URL)
    os.environ[POSTGRES_URL] = server.url
    yield server
    if before is None:
        os.environ.pop(POSTGRES_URL)
    else:
        os.environ[POSTGRES_URL] = before
    server.stop()
    assert server.process is not None and server.process.poll() is not None
