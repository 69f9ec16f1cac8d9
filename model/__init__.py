"""The executable reference model of visibility-timeout semantics. Pure: no I/O, time is a parameter."""

from sqs_conformance.model.core import Model, ModelUsageError, ReceiptView
from sqs_conformance.model.outcomes import Divergence, Expectation, Outcome, Verdict
from sqs_conformance.model.profiles import PROFILES, Profile, get_profile
from sqs_conformance.model.rules import CATALOGUE, RULES, Rule, rule

__all__ = [
    "CATALOGUE", "Divergence", "Expectation", "Model", "ModelUsageError", "Outcome", "PROFILES", "Profile",
    "RULES", "ReceiptView", "Rule", "Verdict", "get_profile", "rule",
]
