"""Determinization from an observation (``determinize``).

A searching player holds only its observation: ``determinize`` must rebuild a game it cannot tell from
the true one.
"""

import random

import numpy as np
from helpers import check_invariants
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import GAME_OVER, GameState, determinize, hidden_cards

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def walk(seed: int, policy_seed: int, rounds: int = 3):
    """Every decision state of a random game."""
    s = GameState(seed=seed, num_rounds=rounds)
    rng = random.Random(policy_seed)
    while s.phase != GAME_OVER:
        yield s
        legal = s.legal_actions()
        s.step(legal[rng.randrange(len(legal))])


@settings(max_examples=25, deadline=None)
@given(seed=seeds, policy_seed=seeds)
def test_determinize_is_indistinguishable_and_playable(seed, policy_seed):
    rng = np.random.default_rng(seed)
    for s in walk(seed, policy_seed):
        me = s.player
        obs = s.observation(me)
        d = determinize(obs, rng)
        assert d.observation(me) == obs  # the player cannot tell the copy from the true game
        assert hidden_cards(d, me) == hidden_cards(s, me)  # the same unseen cards, dealt anew
        check_invariants(d)
        play = random.Random(seed)
        rnd = d.round
        while d.phase != GAME_OVER and d.round == rnd:  # the copy plays on to the end of the round
            legal = d.legal_actions()
            d.step(legal[play.randrange(len(legal))])
        assert len(d.results) == rnd and d.results[rnd - 1].round == rnd

