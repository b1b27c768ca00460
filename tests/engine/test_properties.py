"""Random simulation with invariants checked at every step (OpenSpiel style), via hypothesis."""

import random

from helpers import check_invariants
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import GAME_OVER, GameState

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _hide_shuffle(s: GameState, viewer: int, rng: random.Random) -> GameState:
    """A copy where the cards the viewer cannot see (opponent hand + stock) are rearranged."""
    t = s.clone()
    opp = viewer ^ 1
    hidden = [c for c in range(48) if t.hands[opp] >> c & 1] + list(t.stock)
    rng.shuffle(hidden)
    n = t.hands[opp].bit_count()
    t.hands[opp] = sum(1 << c for c in hidden[:n])
    t.stock = hidden[n:]
    return t


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
            shuffled = _hide_shuffle(s, viewer, rng)
            assert shuffled.observation(viewer) == s.observation(viewer)
        legal = s.legal_actions()
        s.step(legal[rng.randrange(len(legal))])


def test_shuffle_does_change_what_the_opponent_sees():
    # Guards the test above: the shuffle really moves hidden cards.
    s = GameState(seed=3)
    t = _hide_shuffle(s, 0, random.Random(1))
    assert t.hands[1] != s.hands[1]
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
