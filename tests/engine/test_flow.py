"""Turn and round flow on hand-built deals, and round/game rules over many seeded games."""

import random

import numpy as np
import pytest
from helpers import check_invariants, game_with, ids, make_deal

from pipeline.engine import (
    DISCARD,
    GAME_OVER,
    KOIKOI,
    KOIKOI_DECISION,
    PICK,
    STOP,
    GameState,
    IllegalActionError,
    card_id,
    score_mask,
)
from pipeline.engine.deal import deal_is_valid

FIELD = ids((1, 3), (1, 4), (2, 3), (3, 3), (4, 3), (5, 3), (6, 3), (7, 3))


def test_two_matches_ask_for_a_pick_then_draw():
    s = game_with(make_deal(hand0=ids((1, 1)), field=FIELD, draws=ids((12, 2))))
    s.step(card_id(1, 1))
    assert s.phase == PICK and s.player == 0
    assert s.legal_actions() == ids((1, 3), (1, 4))
    s.step(card_id(1, 4))
    assert s.piles[0] == (1 << card_id(1, 1)) | (1 << card_id(1, 4))
    assert s.field >> card_id(1, 3) & 1 and s.field >> card_id(12, 2) & 1  # drawn card laid down
    assert s.phase == DISCARD and s.player == 1 and s.turn == 2


def test_three_matches_are_all_taken_without_a_decision():
    field = ids((1, 2), (1, 3), (1, 4), (3, 3), (4, 3), (5, 3), (6, 3), (7, 3))
    s = game_with(make_deal(hand0=ids((1, 1)), field=field, draws=ids((12, 2))))
    s.step(card_id(1, 1))
    assert s.piles[0] == sum(1 << c for c in ids((1, 1), (1, 2), (1, 3), (1, 4)))
    assert s.phase == DISCARD and s.player == 1


def test_no_match_leaves_the_card_on_the_field():
    s = game_with(make_deal(hand0=ids((12, 1)), field=FIELD, draws=ids((11, 4))))
    s.step(card_id(12, 1))
    assert s.piles[0] == 0
    assert s.field >> card_id(12, 1) & 1 and s.field >> card_id(11, 4) & 1


def test_drawn_card_with_two_matches_asks_for_a_pick():
    s = game_with(make_deal(hand0=ids((12, 1)), field=FIELD, draws=ids((1, 1))))
    s.step(card_id(12, 1))
    assert s.phase == PICK and s.pick_from_draw and s.pick_card == card_id(1, 1)
    s.step(card_id(1, 3))
    assert s.piles[0] == (1 << card_id(1, 1)) | (1 << card_id(1, 3))
    assert s.turns[-1].draw == card_id(1, 1) and s.turns[-1].captured2 == 1 << card_id(1, 3)


def test_drawn_card_matches_the_card_just_played():
    s = game_with(make_deal(hand0=ids((12, 1)), field=FIELD, draws=ids((12, 2))))
    s.step(card_id(12, 1))
    assert s.piles[0] == (1 << card_id(12, 1)) | (1 << card_id(12, 2))


def test_new_yaku_asks_koikoi_and_stop_wins_the_round():
    # Player 0 takes the Moon on turn 1 and the Sake Cup on turn 3: Moon Viewing Sake (1).
    field = ids((8, 3), (9, 3), (2, 3), (3, 3), (4, 3), (5, 3), (6, 3), (7, 3))
    deal = make_deal(hand0=ids((8, 1), (9, 1)), hand1=ids((10, 1)), field=field,
                     draws=ids((10, 3), (11, 4), (12, 2)))
    s = game_with(deal, make_deal(), first_dealer=0)
    s.step(card_id(8, 1))
    assert s.phase == DISCARD and s.player == 1
    s.step(card_id(10, 1))  # takes the drawn (10, 3): no yaku
    assert s.phase == DISCARD and s.player == 0
    s.step(card_id(9, 1))
    assert s.phase == KOIKOI_DECISION and s.legal_actions() == [STOP, KOIKOI]
    s.step(STOP)
    r = s.results[0]
    assert r.winner == 0 and r.points == (1, -1) and s.points == [31, 29]
    assert r.turns[-1].koikoi is False and [t.koikoi for t in r.turns[:-1]] == [None, None]
    assert s.round == 2 and s.dealer == 0  # the winner deals next


def test_koikoi_raises_viewing_sake_and_adds_the_bonus():
    field = ids((8, 3), (9, 3), (2, 3), (3, 3), (4, 3), (5, 3), (6, 3), (7, 3))
    deal = make_deal(hand0=ids((8, 1), (9, 1), (3, 1)), hand1=ids((10, 1), (11, 1)), field=field,
                     draws=ids((10, 3), (11, 4), (12, 2), (12, 3), (1, 3)))
    s = game_with(deal, make_deal(), first_dealer=0)
    s.step(card_id(8, 1))
    s.step(card_id(10, 1))
    s.step(card_id(9, 1))
    s.step(KOIKOI)  # Moon Viewing Sake is now worth 3
    assert s.koikoi == [1, 0] and s.yaku_points(0) == 3 + 1
    s.step(card_id(11, 1))  # takes (11, 4): nothing
    s.step(card_id(3, 1))  # Flower Viewing Sake: points rise again
    assert s.phase == KOIKOI_DECISION
    s.step(STOP)
    assert s.results[0].points == (3 + 3 + 1, -7)


def test_illegal_actions_raise_with_a_clear_message():
    s = GameState(seed=1)
    not_in_hand = next(c for c in range(48) if not s.hands[s.player] >> c & 1)
    with pytest.raises(IllegalActionError, match="illegal action"):
        s.step(not_in_hand)
    with pytest.raises(IllegalActionError):
        s.step(STOP)
    with pytest.raises(IllegalActionError):
        s.step(-1)


@pytest.mark.parametrize("bad", [1.0, "3", None, np.float32(2), [3]])
def test_non_integral_actions_raise_illegal_action(bad):
    s = GameState(seed=1)
    with pytest.raises(IllegalActionError, match="must be an integer"):
        s.step(bad)
    check_invariants(s)  # nothing changed


def test_numpy_integer_actions_play_whole_games_like_python_ints():
    """argmax, Discrete.sample() and RL libraries hand out numpy integers: same games as with ints."""
    rng = np.random.default_rng(0)
    for seed in range(40):
        plain, numpy_played = GameState(seed=seed), GameState(seed=seed)
        while not plain.is_over:
            legal = plain.legal_actions()
            a = legal[int(rng.integers(len(legal)))]
            plain.step(a)
            numpy_played.step(np.array(legal, dtype=np.int64)[legal.index(a)])  # np.int64
            check_invariants(numpy_played)
        assert numpy_played.is_over and numpy_played.points == plain.points
        assert all(type(m) is int for m in (*numpy_played.hands, *numpy_played.piles, numpy_played.field))


def test_redeal_when_four_of_a_month():
    four = sum(1 << c for c in ids((1, 1), (1, 2), (1, 3), (1, 4)))
    assert not deal_is_valid((four, 0, 0, []))
    assert not deal_is_valid((0, 0, four, []))
    seeds = [seed for seed in range(400) if GameState(seed=seed).redeals]
    assert seeds, "some seed must need a re-deal"
    for seed in seeds[:20]:
        s = GameState(seed=seed)
        assert deal_is_valid((s.hands[0], s.hands[1], s.field, s.stock))


def _pile_of(turns, player):
    m = 0
    for t in turns:
        if t.player == player:
            if t.captured:
                m |= (1 << t.discard) | t.captured
            if t.captured2:
                m |= (1 << t.draw) | t.captured2
    return m


def _play(seed, policy, **kw):
    s = GameState(seed=seed, **kw)
    rng = random.Random(seed)
    while s.phase != GAME_OVER:
        s.step(policy(s, rng))
    return s


def _random(s, rng):
    legal = s.legal_actions()
    return legal[rng.randrange(len(legal))]


def _always_koikoi(s, rng):
    if s.phase == KOIKOI_DECISION:
        assert s.turn < 15, "no koi-koi prompt on a player's eighth turn"
        return KOIKOI
    return _random(s, rng)


def test_round_points_are_the_winners_yaku_with_bonus_and_dealer_priority():
    seen_priority = seen_bonus = 0
    for seed in range(300):
        s = _play(seed, _random)
        for i, r in enumerate(s.results):
            assert r.points[0] == -r.points[1]
            if r.winner is None:
                seen_priority += 1
                assert r.points == ((1, -1) if r.dealer == 0 else (-1, 1))
            else:
                k = sum(1 for t in r.turns if t.player == r.winner and t.koikoi)
                expected = score_mask(_pile_of(r.turns, r.winner), k).points
                assert r.points[r.winner] == expected > 0
                seen_bonus += k > 0
            if i + 1 < len(s.results):
                nxt = s.results[i + 1].dealer
                assert nxt == (r.winner if r.winner is not None else r.dealer)
    assert seen_priority and seen_bonus


def test_dealers_priority_ignores_yaku_of_a_player_who_claimed_koikoi():
    found = 0
    for seed in range(300):
        s = _play(seed, _always_koikoi)
        for r in s.results:
            if r.winner is None and any(t.koikoi for t in r.turns):
                found += 1
                assert abs(r.points[0]) == 1
    assert found


def test_round_stops_by_itself_on_a_players_eighth_turn():
    found = 0
    for seed in range(200):
        s = _play(seed, _always_koikoi)
        for r in s.results:
            if r.winner is not None:  # only the automatic stop can end these rounds
                last = r.turns[-1]
                assert last.player == r.winner and last.koikoi is False and len(r.turns) >= 15
                found += 1
    assert found


def test_game_ends_early_when_a_player_reaches_zero():
    ended_early = 0
    for seed in range(200):
        s = _play(seed, _random, init_points=5)
        assert s.is_over and len(s.results) <= 8
        if len(s.results) < 8:
            ended_early += 1
            assert min(s.points) <= 0
            assert s.winner == (0 if s.points[0] > s.points[1] else 1)
    assert ended_early


def test_game_length_and_winner_after_last_round():
    for seed in range(50):
        s = _play(seed, _random, num_rounds=3)
        assert len(s.results) <= 3 and s.round == len(s.results)
        a, b = s.points
        assert s.winner == (0 if a > b else 1 if b > a else None)


def test_same_seed_same_game():
    a, b = _play(11, _random), _play(11, _random)
    assert a.results == b.results and a.points == b.points


def test_a_clone_with_deals_plays_its_round_alike_and_then_deals_those():
    """``clone(deals=...)``: the same round to its end as a plain copy, then the given deals, never a draw from the
    generator it shares (the original's games go on as they would have)."""
    s = GameState(seed=5)
    rng = random.Random(0)
    for _ in range(10):
        s.step(_random(s, rng))
    deal = make_deal()
    plain, fixed = s.clone(), s.clone(deals=iter([deal]))
    state = s.rng.bit_generator.state
    r1, r2 = random.Random(9), random.Random(9)
    for c, r in ((plain, r1), (fixed, r2)):
        while c.round == s.round:
            c.step(_random(c, r))
    assert plain.results == fixed.results and plain.points == fixed.points
    assert s.rng.bit_generator.state == state  # nothing drawn from the shared generator
    if fixed.phase != GAME_OVER:
        assert fixed.deal[:3] == deal[:3] and fixed.hands == [deal[0], deal[1]] and fixed.stock == deal[3]


def test_clone_is_independent_and_continues_identically():
    s = GameState(seed=5)
    rng = random.Random(0)
    for _ in range(30):
        s.step(_random(s, rng))
    c = s.clone()
    r1, r2 = random.Random(9), random.Random(9)
    while s.phase != GAME_OVER:
        s.step(_random(s, r1))
    while c.phase != GAME_OVER:
        c.step(_random(c, r2))
    assert s.results == c.results
