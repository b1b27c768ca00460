"""Random simulation with invariants checked at every step (OpenSpiel style), via hypothesis."""

import random

import numpy as np
from helpers import check_invariants
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import GAME_OVER, GameState, hidden_cards, resample_hidden

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@settings(max_examples=60, deadline=None)
@given(seed=seeds, policy_seed=seeds, rounds=st.integers(1, 8), points=st.integers(1, 40))
def test_invariants_hold_at_every_step(seed, policy_seed, rounds, points):
    s = GameState(seed=seed, num_rounds=rounds, init_points=points)
    rng = random.Random(policy_seed)
    steps = 0
    while s.phase != GAME_OVER:
        check_invariants(s)  # 48 cards once each, zero-sum points, a legal action exists
        legal = s.legal_actions()
        assert legal == sorted(set(legal))
        assert s.legal_mask() == sum(1 << a for a in legal)
        s.step(legal[rng.randrange(len(legal))])
        steps += 1
        assert steps < rounds * 16 * 4 + 1, "every game ends"
    check_invariants(s)
    assert len(s.results) <= rounds
    assert sum(s.points) == 2 * points
    for r in s.results:
        assert r.points[0] + r.points[1] == 0


@settings(max_examples=40, deadline=None)
@given(seed=seeds, policy_seed=seeds)
def test_observation_hides_opponent_hand_and_stock(seed, policy_seed):
    s = GameState(seed=seed)
    rng = random.Random(policy_seed)
    while s.phase != GAME_OVER:
        for viewer in (0, 1):
            shuffled = resample_hidden(s, viewer, np.random.default_rng(rng.randrange(2**32)))
            assert shuffled.observation(viewer) == s.observation(viewer)
            assert hidden_cards(shuffled, viewer) == hidden_cards(s, viewer)
            check_invariants(shuffled)  # the redealt copy is a legal game that plays on
        legal = s.legal_actions()
        s.step(legal[rng.randrange(len(legal))])


def test_shuffle_does_change_what_the_opponent_sees():
    # Guards the test above: the shuffle really moves hidden cards.
    s = GameState(seed=3)
    t = resample_hidden(s, 0, np.random.default_rng(1))
    assert t.hands[1] != s.hands[1] and t.stock != s.stock
    assert t.observation(1) != s.observation(1)


@settings(max_examples=30, deadline=None)
@given(seed=seeds, policy_seed=seeds)
def test_observation_history_holds_each_turn_once(seed, policy_seed):
    from pipeline.engine import DISCARD

    s = GameState(seed=seed)
    rng = random.Random(policy_seed)
    while s.phase != GAME_OVER:
        obs = s.observation(s.player)
        played = s.turn - 1 if s.phase == DISCARD else s.turn  # the turn in progress counts once started
        assert len(obs.turns) == played
        assert [t.player for t in obs.turns] == [(s.dealer + i) % 2 for i in range(played)]
        assert all(t.discard >= 0 for t in obs.turns)
        legal = s.legal_actions()
        s.step(legal[rng.randrange(len(legal))])
