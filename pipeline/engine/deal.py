"""A deal: the two hands and the field (card masks) and the stock (ids), and the re-deal rule."""

from __future__ import annotations

import numpy as np

from .cards import MONTH_MASK, mask_of_ids

Deal = tuple[int, int, int, list[int]]
"""A deal: hand of player 0, hand of player 1, field (masks), stock (ids, drawn from the end)."""


def _has_four_of_a_month(mask: int) -> bool:
    return any(mask & mm == mm for mm in MONTH_MASK)


def deal_from_permutation(perm: list[int]) -> Deal:
    """Split a permutation of 0..47 into hands, field and stock as the records do."""
    return mask_of_ids(perm[0:8]), mask_of_ids(perm[8:16]), mask_of_ids(perm[16:24]), list(perm[24:])


def deal_is_valid(deal: Deal) -> bool:
    """False when a hand or the field holds four cards of one month (a re-deal)."""
    h0, h1, fld, _ = deal
    return not (_has_four_of_a_month(h0) or _has_four_of_a_month(h1) or _has_four_of_a_month(fld))


def random_deal(rng: np.random.Generator) -> tuple[Deal, int]:
    """A valid deal shuffled by ``rng``, and how many invalid ones were dealt again before it."""
    redeals = 0
    while not deal_is_valid(deal := deal_from_permutation(rng.permutation(48).tolist())):
        redeals += 1
    return deal, redeals
