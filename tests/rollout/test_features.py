"""The rollout features: only the observation (no hidden card), only the legal tokens, each row what it says."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import assert_blind
from tiny import random_states as random_games

from pipeline.engine.cards import MONTH_MASK, YAKU_SETS
from pipeline.net.encoding import ATTRIBUTES, legal_masks
from pipeline.rollout.features import (
    MAX_LEGAL,
    NUM_GLOBAL_FEATURES,
    NUM_TOKEN_FEATURES,
    POSITIONS,
    featurize,
    scatter,
)

ATTR = len(POSITIONS)  # first attribute column of a token row
MONTHS = ATTR + ATTRIBUTES.shape[0]  # first month-count column
PROGRESS = MONTHS + 5  # first yaku-progress column (my pile's)


def random_states(games: int = 4, seed: int = 0):
    """(state, observation of the player to act) at every decision of seeded uniform-random games."""
    return random_games(games, seed, first_deal=500)


@pytest.fixture(scope="module")
def samples():
    return random_states()


def test_the_tokens_are_the_legal_actions_and_the_batch_is_its_singles(samples):
    obs = [o for _, o in samples]
    f = featurize(obs)
    assert f.x.shape == (len(obs), f.tokens.shape[1], NUM_TOKEN_FEATURES) and f.g.shape == (len(obs),
                                                                                            NUM_GLOBAL_FEATURES)
    assert f.tokens.shape[1] <= MAX_LEGAL and f.x.dtype == np.float32 and np.isfinite(f.x).all()
    np.testing.assert_array_equal(np.isfinite(scatter(np.zeros(f.tokens.shape, np.float32), f)), legal_masks(obs))
    for i in range(0, len(obs), 17):  # one observation alone, padded to the training width: the same rows
        one = featurize([obs[i]], MAX_LEGAL)
        n = int(one.valid.sum())
        np.testing.assert_array_equal(one.x[0, :n], f.x[i, :n])
        np.testing.assert_array_equal(one.g[0], f.g[i])
        np.testing.assert_array_equal(one.tokens[0, :n], f.tokens[i, :n])


def test_rows_match_the_state(samples):
    checked = 0
    for s, o in samples[::3]:
        f = featurize([o])
        me = o.player
        unseen = ((1 << 48) - 1) & ~(s.hands[me] | s.field | s.piles[0] | s.piles[1]
                                    | (1 << o.pick_card if o.pick_card >= 0 else 0))
        for j, t in enumerate(f.tokens[0][f.valid[0]]):
            row = f.x[0, j]
            if t >= 48:  # [K0] / [K1]: no position, no month
                assert not row[:ATTR].any() and not row[MONTHS:PROGRESS].any()
                continue
            places = (s.hands[me], s.field, s.piles[me], s.piles[me ^ 1])
            assert [bool(m >> t & 1) for m in places] == [bool(v) for v in row[:4]]
            np.testing.assert_array_equal(row[ATTR:MONTHS], ATTRIBUTES[:, t])
            month = MONTH_MASK[t // 4]
            want = [(m & month).bit_count() / 4 for m in (s.field, s.hands[me], unseen, s.piles[me], s.piles[me ^ 1])]
            np.testing.assert_allclose(row[MONTHS:PROGRESS], want)
            mine = [(s.piles[me] & y).bit_count() / y.bit_count() if y >> t & 1 else 0.0 for y in YAKU_SETS.values()]
            np.testing.assert_allclose(row[PROGRESS:PROGRESS + len(YAKU_SETS)], mine, rtol=1e-6)
            checked += 1
    assert checked > 100


def test_no_hidden_card_reaches_the_features():
    """Dealing the opponent's hand and the stock again leaves every feature of the observation as it was."""
    rng = np.random.default_rng(5)
    checked = moved = 0
    for s, o in random_states(games=3, seed=9)[::2]:
        moved += assert_blind(lambda st: tuple(featurize([st.observation(st.player)])), s, o.player, rng)[1]
        checked += 1
    assert checked > 100 and moved > 0.9 * checked


def test_an_observation_without_a_decision_is_refused(samples):
    s, _ = samples[0]
    with pytest.raises(ValueError, match="player to act"):
        featurize([s.observation(s.player ^ 1)])
