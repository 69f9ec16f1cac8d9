import pytest

from sqs_conformance.adapters.model_target import ModelTarget
from tests.concurrent.histories import eight_clients_on


@pytest.fixture(scope="module", params=["sqs-standard", "sqs-fifo"])
def model_history(request):
    """A history of 8 clients on the model as a queue (it conforms: the model is the reference)."""
    return eight_clients_on(ModelTarget(request.param), request.param, seed=5, rounds=6)
