"""Evaluation duels: duplicate-deal games, Wilson intervals, Bradley-Terry ratings, the Table II report.

``runner`` plays a duel, ``stats``/``ratings`` score it, ``tournament`` is the ``duels`` stage's
round-robin, ``report`` writes the table, ``plots`` and ``attention`` the figures.
"""

from .runner import duel_seeds, play_duel
from .stats import DuelResult, wilson_interval

# ratings (scikit-learn) and the figures (matplotlib) are imported where used, to keep `koikoi duel` light.
__all__ = ["DuelResult", "duel_seeds", "play_duel", "wilson_interval"]
