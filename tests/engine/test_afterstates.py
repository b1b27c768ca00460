"""Afterstates (``GameState.after``) and determinization from an observation (``determinize``).

A searching player holds only its observation: ``determinize`` must rebuild a game it cannot tell from
the true one, and the afterstate of each action must not depend on the cards it cannot see.
"""

import random

import numpy as np
from helpers import check_invariants
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import CHANCE, GAME_OVER, GameState, determinize, hidden_cards

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


@settings(max_examples=25, deadline=None)
@given(seed=seeds, policy_seed=seeds)
def test_afterstates_depend_only_on_what_the_player_sees(seed, policy_seed):
    rng = np.random.default_rng(seed)
    for s in walk(seed, policy_seed):
        me, rnd = s.player, s.round
        d = determinize(s.observation(me), rng)  # other hidden cards
        before = s.observation(me)
        for a in s.legal_actions():
            true_after, copy_after = s.after(a), d.after(a)
            assert true_after.observation(me) == copy_after.observation(me)
            assert true_after.phase == copy_after.phase
            if len(true_after.results) >= rnd:  # the action ended the round: the same result
                t, c = true_after.results[rnd - 1], copy_after.results[rnd - 1]
                assert (t.points, t.winner, t.totals) == (c.points, c.winner, c.totals)
            else:
                assert true_after.phase in (CHANCE, *range(3))
        assert s.observation(me) == before  # taking afterstates leaves the game untouched


def test_an_afterstate_stops_before_the_stock_card_is_turned():
    s = GameState(seed=3)
    stock = list(s.stock)
    a = next(a for a in s.legal_actions() if s.after(a).phase == CHANCE)  # a discard that pairs 0, 1 or 3 cards
    after = s.after(a)
    assert after.stock == stock and after.cur[3] == -1  # nothing drawn
    assert not after.observation(s.player).to_act
    s.step(a)  # the real step draws
    assert len(s.stock) == len(stock) - 1
