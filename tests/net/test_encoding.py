"""Observation encoding: layout, batch consistency, no hidden-information leak, legal masks."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import assert_blind
from tiny import random_states as random_games

from pipeline.engine import KOIKOI_DECISION, PICK, GameState
from pipeline.engine.cards import CATEGORIES, MONTH_MASK, YAKU_SETS
from pipeline.net.encoding import (
    ATTRIBUTES,
    HISTORY_KINDS,
    K0,
    K1,
    NUM_FEATURES,
    NUM_TOKENS,
    POSITIONS,
    ROWS,
    decisions,
    encode,
    legal_masks,
    row_names,
)

POS = {p: ROWS["position"] + i for i, p in enumerate(POSITIONS)}


def random_states(games: int = 6, seed: int = 0):
    """(state, observation of the player to act) at every decision of seeded uniform-random games."""
    return random_games(games, seed, first_deal=1000)


@pytest.fixture(scope="module")
def samples():
    return random_states()


def bits(mask: int) -> np.ndarray:
    return np.array([(mask >> t) & 1 for t in range(NUM_TOKENS)], dtype=np.float32)


def test_shape_dtype_and_names(samples):
    obs = [o for _, o in samples[:7]]
    x = encode(obs)
    assert x.shape == (7, NUM_FEATURES, NUM_TOKENS) and x.dtype == np.float32
    assert 200 <= NUM_FEATURES <= 350
    assert len(row_names()) == NUM_FEATURES
    assert encode([]).shape == (0, NUM_FEATURES, NUM_TOKENS)
    assert np.isfinite(x).all()


def test_batch_equals_stack_of_singles(samples):
    obs = [o for _, o in samples[::5]]
    batch = encode(obs)
    singles = np.concatenate([encode([o]) for o in obs])
    np.testing.assert_array_equal(batch, singles)


def test_positions_partition_the_deck_and_match_the_state(samples):
    for s, o in samples[::7]:
        x = encode([o])[0]
        me, opp = o.player, o.player ^ 1
        np.testing.assert_array_equal(x[POS["hand"]], bits(s.hands[me]))
        np.testing.assert_array_equal(x[POS["field"]], bits(s.field))
        np.testing.assert_array_equal(x[POS["my_pile"]], bits(s.piles[me]))
        np.testing.assert_array_equal(x[POS["opp_pile"]], bits(s.piles[opp]))
        pos = x[ROWS["position"]:ROWS["position"] + len(POSITIONS), :48]
        np.testing.assert_array_equal(pos.sum(0), np.ones(48))  # every card in exactly one position
        assert not x[ROWS["position"]:ROWS["position"] + len(POSITIONS), 48:].any()


def test_opponent_pile_rows_differ_from_my_pile_rows(samples):
    """The reference code wrote the player's own pile into the opponent's rows; ours must not."""
    differing = 0
    for s, o in samples:
        if s.piles[0] or s.piles[1]:
            x = encode([o])[0]
            assert not (x[POS["my_pile"]] * x[POS["opp_pile"]]).any()
            differing += not np.array_equal(x[POS["my_pile"]], x[POS["opp_pile"]])
            np.testing.assert_array_equal(x[POS["opp_pile"]], bits(s.piles[o.player ^ 1]))
    assert differing > 100


def test_hidden_information_does_not_leak():
    """Dealing the opponent's hand and the stock again (same counts) leaves the encoding unchanged."""
    rng = np.random.default_rng(7)
    checked = moved = 0
    for s, o in random_states(games=4, seed=3):
        if checked > 200 and rng.random() < 0.7:
            continue
        moved += assert_blind(lambda st: encode([st.observation(st.player)]), s, o.player, rng)[1]
        checked += 1
    assert checked > 100 and moved > 0.9 * checked


def test_static_attributes_and_special_tokens(samples):
    x = encode([samples[3][1]])[0]
    attr = x[ROWS["month"]:ROWS["points"]]
    np.testing.assert_array_equal(attr, ATTRIBUTES)
    for m in range(12):
        np.testing.assert_array_equal(x[ROWS["month"] + m], bits(MONTH_MASK[m]))
    for i, c in enumerate(CATEGORIES):
        np.testing.assert_array_equal(x[ROWS["category"] + i], bits(CATEGORIES[c]))
    for i, y in enumerate(YAKU_SETS):
        np.testing.assert_array_equal(x[ROWS["yaku_set"] + i], bits(YAKU_SETS[y]))
    special = x[ROWS["special"]:ROWS["special"] + 2]
    np.testing.assert_array_equal(special, np.stack([bits(1 << K0), bits(1 << K1)]))
    # each special token is distinguished only by its own one-hot; no card attribute is set on it
    assert attr[:, K0].sum() == 1 and attr[:, K1].sum() == 1
    assert (attr[:, :48].sum(0) >= 3).all()  # month + category + at least one yaku set


def test_game_progress_is_the_same_in_every_column(samples):
    x = encode([o for _, o in samples[::11]])
    prog = x[:, ROWS["points"]:, :]
    np.testing.assert_array_equal(prog, np.repeat(prog[:, :, :1], NUM_TOKENS, axis=2))
    for (_, o), xi in zip(samples[::11], x, strict=True):
        assert xi[ROWS["turn"] + o.turn - 1, 0] == 1 and xi[ROWS["turn"]:ROWS["turn"] + 16, 0].sum() == 1
        assert xi[ROWS["round"] + o.round - 1, 0] == 1
        assert xi[ROWS["decision"] + o.decision, 0] == 1
        assert xi[ROWS["dealer"], 0] == float(o.is_dealer)
        assert xi[ROWS["points"], 0] == pytest.approx((o.my_points - o.opp_points) / 30)


def test_history_rows_replay_the_turns(samples):
    for _s, o in samples[::13]:
        x = encode([o])[0]
        hist = x[ROWS["history"]:ROWS["history"] + 16 * len(HISTORY_KINDS)].reshape(16, len(HISTORY_KINDS), -1)
        assert not hist[o.turn:].any()  # blocks count back from the current turn
        for t, turn in enumerate(o.turns):
            block = o.turn - 1 - t
            assert (block % 2 == 0) == (turn.player == o.player)  # even blocks: my turns
            k = dict(zip(HISTORY_KINDS, hist[block], strict=True))
            if turn.captured:
                assert k["discard_paired"][turn.discard] == 1
                np.testing.assert_array_equal(k["taken_by_discard"], bits(turn.captured))
            elif turn.discard != o.pick_card:
                assert k["discard_unpaired"][turn.discard] == 1
            if turn.draw >= 0 and turn.draw != o.pick_card:
                kind = "draw_paired" if turn.captured2 else "draw_unpaired"
                assert k[kind][turn.draw] == 1
        # every card played or drawn this round and not pending shows up exactly once
        shown = hist[:, [0, 1, 3, 4]].sum((0, 1))
        assert set(np.flatnonzero(shown)) == {
            c for tr in o.turns for c in (tr.discard, tr.draw) if c >= 0 and c != o.pick_card}


def test_pick_pending_and_koikoi_claims():
    saw_pick = saw_claim = 0
    for s, o in random_states(games=10, seed=5):
        x = encode([o])[0]
        if o.decision == PICK:
            saw_pick += 1
            np.testing.assert_array_equal(x[POS["pending"]], bits(1 << s.pick_card))
            assert x[ROWS["legal"]].sum() == 2
        else:
            assert not x[POS["pending"]].any()
        claims = [(t, tr.player == o.player) for t, tr in enumerate(o.turns) if tr.koikoi]
        got = x[ROWS["koikoi_claims"]:ROWS["koikoi_claims"] + 32, 0]
        want = np.zeros(32)
        for t, mine in claims:
            want[t + (0 if mine else 16)] = 1
        np.testing.assert_array_equal(got, want)
        saw_claim += bool(claims)
    assert saw_pick > 5 and saw_claim > 5


def test_legal_masks_and_decisions_match_the_engine(samples):
    obs = [o for _, o in samples]
    lm = legal_masks(obs)
    assert lm.dtype == bool and lm.shape == (len(obs), NUM_TOKENS)
    for (s, _o), row in zip(samples, lm, strict=True):
        assert list(np.flatnonzero(row)) == s.legal_actions()
    d = decisions(obs)
    assert d.dtype == np.int64 and list(d) == [s.phase for s, _ in samples]
    assert {0, 1, KOIKOI_DECISION} <= set(d.tolist())
    np.testing.assert_array_equal(encode(obs)[:, ROWS["legal"]], lm.astype(np.float32))


def test_decisions_rejects_a_non_acting_observation():
    s = GameState(seed=1)
    with pytest.raises(ValueError, match="player to act"):
        decisions([s.observation(s.player ^ 1)])


def test_dealt_rows_give_the_round_start(samples):
    """Rebuilt from the public history alone, the dealt rows match the deal itself."""
    for state, o in samples[::7]:
        x = encode([o])[0]
        hands, field = state.deal[:2], state.deal[2]
        np.testing.assert_array_equal(x[ROWS["dealt"]], bits(hands[o.player]))
        np.testing.assert_array_equal(x[ROWS["dealt"] + 1], bits(field))


def _relabel(o, perm):
    """``o`` with every card ``c`` renamed ``perm[c]``."""

    def m(mask: int) -> int:
        return sum(1 << int(perm[c]) for c in range(48) if mask >> c & 1)

    def c(card: int) -> int:
        return int(perm[card]) if card >= 0 else card

    turns = tuple(t._replace(discard=c(t.discard), captured=m(t.captured), draw=c(t.draw),
                           captured2=m(t.captured2)) for t in o.turns)
    legal = m(o.legal_mask & ((1 << 48) - 1)) | (o.legal_mask & ~((1 << 48) - 1))
    return o._replace(hand=m(o.hand), field=m(o.field), my_pile=m(o.my_pile), opp_pile=m(o.opp_pile),
                      legal_mask=legal, pick_card=c(o.pick_card), turns=turns)


def test_swapping_month_rows_is_renaming_the_months_cards(samples):
    """The SL augmentation: swapping the month rows of Wisteria and Iris (or of Peony and Maple)
    encodes the same game with those months' cards renamed, so the recorded choice carries over."""
    import torch

    from pipeline.engine.cards import MONTH_SWAPS
    from pipeline.net.model import swap_months

    obs = [o for _, o in samples[::17]]
    x = torch.from_numpy(encode(obs))
    variants = [x]  # x with the month rows of no pair, of the first, of the second, of both pairs swapped
    for a, b in MONTH_SWAPS:
        perm = np.arange(NUM_TOKENS)
        ia, ib = slice(4 * (a - 1), 4 * a), slice(4 * (b - 1), 4 * b)
        perm[ia], perm[ib] = perm[ib].copy(), perm[ia].copy()
        renamed = torch.from_numpy(encode([_relabel(o, perm) for o in obs]))[:, :, perm]
        rows = x.clone()
        ra, rb = ROWS["month"] + a - 1, ROWS["month"] + b - 1
        rows[:, [ra, rb]] = rows[:, [rb, ra]]
        assert torch.equal(rows, renamed), (a, b)
        variants.append(rows)
    both = variants[1].clone()
    (a, b), = MONTH_SWAPS[1:]
    both[:, [ROWS["month"] + a - 1, ROWS["month"] + b - 1]] = both[:, [ROWS["month"] + b - 1, ROWS["month"] + a - 1]]
    variants.append(both)
    torch.manual_seed(0)
    seen = set()
    for _ in range(8):
        out = swap_months(x)
        for i in range(len(obs)):
            k = [j for j, v in enumerate(variants) if torch.equal(out[i], v[i])]
            assert k, "each sample gets some of the pairs swapped, nothing else changes"
            seen.add(k[0])
    assert seen == {0, 1, 2, 3}

