"""Evaluation duels: duplicate-deal games, their intervals, Bradley-Terry ratings, the Table II report."""
# No imports here: the params layer and RL evaluation import ``report``/``stats`` without the game loop.
