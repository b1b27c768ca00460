"""Supervised learning from human game records (paper section IV-B)."""

from ..engine import DECISION_NAMES  # ("discard", "pick", "koikoi"): index == decision type

__all__ = ["DECISION_NAMES"]
