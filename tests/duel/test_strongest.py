"""The strongest agent respects the ratings' intervals: one rule (``duel.strongest``) for the duels stage's
searcher, the play page's searcher and its default opponent."""

from __future__ import annotations

import pytest

from pipeline.duel.strongest import strongest
from pipeline.duel.tournament import strongest_model


def r(elo: float, half: float) -> dict[str, float]:
    return {"elo": elo, "elo_lo": elo - half, "elo_hi": elo + half}


def test_overlapping_intervals_keep_the_order_of_preference():
    # the run that flipped: RL-Point 691.0 vs RL-WP 689.8, each +-120
    ratings = {"a": r(689.8, 120), "b": r(691.0, 120)}
    assert strongest(["a", "b"], ratings) == "a"
    assert strongest(["a", "b"], {"a": r(691.0, 120), "b": r(689.8, 120)}) == "a"  # the next run: the same pick
    assert strongest(["b", "a"], ratings) == "b"  # the order decides among agents the duels cannot tell apart


def test_a_separated_agent_wins_whatever_the_order():
    assert strongest(["a", "b"], {"a": r(500, 50), "b": r(700, 50)}) == "b"
    # the first whose interval reaches the best's lower bound, not the best itself
    assert strongest(["a", "b", "c"], {"a": r(100, 10), "b": r(590, 20), "c": r(640, 50)}) == "b"
    assert strongest(["a", "b"], {"a": r(0, 0), "b": r(0.5, 0)}) == "b"  # exact ratings: the higher


def test_unrated_candidates_come_last_unless_none_is_rated():
    assert strongest(["a", "b"], {"b": r(-300, 10)}) == "b"
    assert strongest(["a", "b"], {}) == "a"
    with pytest.raises(ValueError):
        strongest([], {})


def test_the_duels_stage_uses_it():
    ratings = {"rl_wp": r(689.8, 120), "rl_point": r(691.0, 120), "sl": r(300, 100), "random": r(0, 0)}
    agents = ["models/rl/wp", "models/rl/point", "models/sl", "heuristic", "random"]
    assert strongest_model(agents, ratings) == "models/rl/wp"
    ratings["rl_point"] = r(900, 50)
    assert strongest_model(agents, ratings) == "models/rl/point"
