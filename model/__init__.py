"""The executable reference model of visibility-timeout semantics. Pure: no I/O, time is a parameter."""

from model.core import Model, ModelUsageError, ReceiptView
from model.outcomes import Divergence, Expectation, Outcome, Verdict
from model.profiles import PROFILES, Profile, get_profile
from model.rules import CATALOGUE, RULES, Rule, rule

__all__ = [
    "CATALOGUE", "Divergence", "Expectation", "Model", "ModelUsageError", "Outcome", "PROFILES", "Profile",
    "RULES", "ReceiptView", "Rule", "Verdict", "get_profile", "rule",
]
