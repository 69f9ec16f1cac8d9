"""The executable reference model of visibility-timeout semantics. Pure: no I/O, time is a parameter."""

# ruff: noqa: E402 - the model's modules are imported after run_from_source has chosen source or build for each

from sqs_conformance.model.compiled import run_from_source

run_from_source()  # model/compiled.py: a module edited since it was compiled runs from its source

from sqs_conformance.model.core import Model, ModelUsageError, ReceiptView
from sqs_conformance.model.outcomes import Divergence, Expectation, Outcome, Verdict
from sqs_conformance.model.profiles import PROFILES, Profile, get_profile
from sqs_conformance.model.rules import CATALOGUE, RULES, Rule, rule

__all__ = [
    "CATALOGUE", "Divergence", "Expectation", "Model", "ModelUsageError", "Outcome", "PROFILES", "Profile",
    "RULES", "ReceiptView", "Rule", "Verdict", "get_profile", "rule",
]
