"""The model asked something outside its language: a bug of the caller, never a verdict on a target."""

from __future__ import annotations


class ModelUsageError(ValueError):
    """The caller asked the model something outside its language (unknown queue, an operation the profile
    lacks). Not a verdict on any target."""
