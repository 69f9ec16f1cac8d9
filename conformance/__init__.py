"""The conformance engine: drives the model and a target with the same operations and judges the target."""
