import pytest

from sqs_conformance.adapters.model_target import ModelTarget
from sqs_conformance.conformance.concurrent.clients import clients_of, close_shared, threads
from sqs_conformance.conformance.concurrent.workload import VIRTUAL, RandomDraw, draw_workload


@pytest.fixture(scope="module", params=["sqs-standard", "sqs-fifo"])
def model_history(request):
    """A history of 8 clients on the model as a queue (it conforms: the model is the reference)."""
    profile = request.param
    target = ModelTarget(profile)
    connections = clients_of(target, 8)
    try:
        return threads(connections, profile, draw_workload(RandomDraw(5), 8, 6, profile == "sqs-fifo", VIRTUAL))
    finally:
        close_shared(connections)
