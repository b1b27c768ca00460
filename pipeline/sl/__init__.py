"""Supervised learning from human game records (paper section IV-B).

``dataset`` replays records into samples, ``packing`` packs them compactly, ``datamodule`` is the
Lightning data module, ``module`` the Lightning module, ``train`` the training entry point
(``train_sl``) and ``evaluate`` the top-1 agreement with recorded human choices.
"""

from ..engine import DECISION_NAMES  # ("discard", "pick", "koikoi"): index == decision type

__all__ = ["DECISION_NAMES"]
