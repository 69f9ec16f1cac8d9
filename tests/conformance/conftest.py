"""Fixtures several conformance tests share."""

import pytest


@pytest.fixture(scope="module")
def moto_server():
    """moto's server on 127.0.0.1, one a test module, stopped by its process id."""
    from sqs_conformance.adapters.emulators import start_moto_server

    server = start_moto_server()
    yield server
    server.stop()
