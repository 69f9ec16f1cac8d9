"""The defaults of a run, shared by `sqs-conformance run`, the matrix and the pytest plugin (a light module: the
command line reads it before anything heavy is imported)."""

DEFAULT_EXAMPLES = 40  # generated cases per round
DEFAULT_STEPS = 40  # operations per case at most
DEFAULT_BUDGET = {"virtual": 40.0, "shifted": 180.0, "real": 180.0}  # seconds of search, per clock
