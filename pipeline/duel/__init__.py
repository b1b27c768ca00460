"""Evaluation duels: duplicate-deal games, Wilson intervals, Bradley-Terry ratings, the Table II report.

``runner`` plays a duel, ``stats``/``ratings`` score it, ``tournament`` is the ``duels`` stage's
round-robin, ``report`` writes the table, ``plots`` and ``attention`` the figures.
"""
# No imports here: the params layer and RL evaluation import ``report``/``stats`` without the game loop.
