"""Every row of Table IV and its notes."""

import pytest

from pipeline.engine import base_points, mask_of, score

LIGHTS = [(1, 1), (3, 1), (8, 1), (11, 1), (12, 1)]
DROSS10 = [(1, 3), (1, 4), (2, 3), (2, 4), (3, 3), (3, 4), (4, 3), (4, 4), (5, 3), (5, 4)]
SEEDS5 = [(2, 1), (4, 1), (5, 1), (8, 2), (11, 2)]
RIBBONS5 = [(4, 2), (5, 2), (7, 2), (11, 3), (1, 2)]


def names(s):
    return {n for n, _ in s.yaku}


@pytest.mark.parametrize("pile,points,yaku", [
    (LIGHTS, 10, "Five Lights"),
    ([(1, 1), (3, 1), (8, 1), (12, 1)], 8, "Four Lights"),
    ([(1, 1), (3, 1), (8, 1), (11, 1)], 7, "Rainy Four Lights"),
    ([(1, 1), (3, 1), (12, 1)], 5, "Three Lights"),
    ([(6, 1), (7, 1), (10, 1)], 5, "Boar-Deer-Butterfly"),
    ([(3, 1), (9, 1)], 1, "Flower Viewing Sake"),
    ([(8, 1), (9, 1)], 1, "Moon Viewing Sake"),
    (SEEDS5, 1, "Tane"),
    ([(1, 2), (2, 2), (3, 2)], 5, "Red Ribbons"),
    ([(6, 2), (9, 2), (10, 2)], 5, "Blue Ribbons"),
    (DROSS10, 1, "Kasu"),
])
def test_each_yaku_alone(pile, points, yaku):
    s = score(pile)
    assert s.points == points
    assert names(s) == {yaku}


def test_only_the_best_lights_yaku_counts():
    assert names(score(LIGHTS)) == {"Five Lights"}
    assert names(score([(1, 1), (3, 1), (8, 1), (12, 1)])) == {"Four Lights"}


def test_three_lights_with_rainman_score_nothing():
    s = score([(1, 1), (3, 1), (11, 1)])
    assert s.points == 0 and s.yaku == []


def test_red_and_blue_ribbons_stack_with_red_and_blue_and_tan():
    s = score([(1, 2), (2, 2), (3, 2), (6, 2), (9, 2), (10, 2)])
    assert names(s) == {"Red & Blue Ribbons", "Red Ribbons", "Blue Ribbons", "Tan"}
    assert s.points == 10 + 5 + 5 + 2


def test_tane_tan_kasu_add_one_per_extra_card():
    assert score(SEEDS5 + [(10, 1)]).points == 2
    assert score(RIBBONS5 + [(2, 2)]).points == 2
    assert score(DROSS10 + [(6, 3), (6, 4)]).points == 3
    assert score(SEEDS5[:4]).points == 0
    assert score(RIBBONS5[:4]).points == 0
    assert score(DROSS10[:9]).points == 0


def test_boar_deer_butterfly_counts_toward_tane():
    s = score([(6, 1), (7, 1), (10, 1), (2, 1), (4, 1)])
    assert names(s) == {"Boar-Deer-Butterfly", "Tane"}
    assert s.points == 6


def test_sake_cup_is_both_seed_and_dross():
    tane = score([(9, 1), (2, 1), (4, 1), (5, 1), (8, 2)])
    assert ("Tane", 1) in tane.yaku
    kasu = score([(9, 1)] + DROSS10[:9])
    assert ("Kasu", 1) in kasu.yaku


def test_viewing_sake_is_three_points_after_koikoi():
    assert score([(3, 1), (9, 1)], koikoi_count=0).points == 1
    s = score([(3, 1), (9, 1)], koikoi_count=1)
    assert ("Flower Viewing Sake", 3) in s.yaku and s.points == 3 + 1
    both = score([(3, 1), (8, 1), (9, 1)], koikoi_count=2)
    assert both.points == 3 + 3 + 2


@pytest.mark.parametrize("k,total", [(0, 5), (1, 6), (2, 7), (3, 8), (4, 10), (5, 15), (6, 20), (7, 25)])
def test_koikoi_bonus(k, total):
    s = score([(1, 1), (3, 1), (12, 1)], koikoi_count=k)  # Three Lights, 5
    assert s.points == total
    assert sum(p for _, p in s.yaku) == total


def test_bonus_applies_to_empty_pile_only_additively():
    assert score([], koikoi_count=2).points == 2
    assert score([], koikoi_count=5).points == 0


def test_bad_koikoi_count_and_cards_raise():
    with pytest.raises(ValueError, match="koikoi_count"):
        score([], koikoi_count=8)
    with pytest.raises(ValueError, match="no such card"):
        score([(13, 1)])


def test_base_points_agrees_with_score():
    import random

    rng = random.Random(3)
    for _ in range(2000):
        pile = rng.sample([(m, i) for m in range(1, 13) for i in range(1, 5)], rng.randint(0, 30))
        k = rng.randint(0, 7)
        base = base_points(mask_of(pile), k > 0)
        assert score(pile, 0 if k == 0 else k).points == (base + k if k <= 3 else base * (k - 2))
