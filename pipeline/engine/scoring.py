"""Yaku scoring per Table IV of the paper (the rules of the PC game "KoiKoi-Japan")."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from .cards import (
    BLUE_RIBBONS,
    BOAR_DEER_BUTTERFLY,
    DROSS,
    FLOWER_SAKE,
    LIGHT,
    MOON_SAKE,
    RAINMAN_BIT,
    RED_BLUE_RIBBONS,
    RED_RIBBONS,
    RIBBON,
    SEED,
    mask_of,
)

MAX_KOIKOI = 7  # eight turns a round, and the last one cannot claim koi-koi


@functools.lru_cache(maxsize=1 << 16)  # a hit costs a fifth of the sum; every observation asks twice
def base_points(pile: int, koikoi_claimed: bool) -> int:
    """Yaku points of a pile before the koi-koi bonus (hot path); a claim raises the sake yaku to 3."""
    pts = 0
    lights = (pile & LIGHT).bit_count()
    if lights >= 3:
        rain = pile & RAINMAN_BIT
        if lights == 5:
            pts = 10
        elif lights == 4:
            pts = 7 if rain else 8
        elif not rain:  # three lights including the Rainman score nothing
            pts = 5
    if pile & BOAR_DEER_BUTTERFLY == BOAR_DEER_BUTTERFLY:
        pts += 5
    sake = 3 if koikoi_claimed else 1
    if pile & FLOWER_SAKE == FLOWER_SAKE:
        pts += sake
    if pile & MOON_SAKE == MOON_SAKE:
        pts += sake
    n = (pile & SEED).bit_count()
    if n >= 5:
        pts += n - 4
    if pile & RED_RIBBONS == RED_RIBBONS:
        pts += 15 if pile & RED_BLUE_RIBBONS == RED_BLUE_RIBBONS else 5
    if pile & BLUE_RIBBONS == BLUE_RIBBONS:
        pts += 5
    n = (pile & RIBBON).bit_count()
    if n >= 5:
        pts += n - 4
    n = (pile & DROSS).bit_count()
    if n >= 10:
        pts += n - 9
    return pts


def with_bonus(base: int, koikoi_count: int) -> int:
    """Total after the koi-koi bonus: +1/+2/+3 for 1-3 claims, x2..x5 for 4-7 claims."""
    if koikoi_count <= 3:
        return base + koikoi_count
    return base * (koikoi_count - 2)


@dataclass(frozen=True)
class Score:
    """A scored pile: ``points`` (bonus included) and the ``yaku`` as ``(name, points)``, which add up to it."""

    points: int
    yaku: list[tuple[str, int]] = field(default_factory=list)


def score_mask(pile: int, koikoi_count: int = 0) -> Score:
    """Score a pile given as a card bit mask."""
    if not isinstance(koikoi_count, int) or not 0 <= koikoi_count <= MAX_KOIKOI:
        raise ValueError(f"koikoi_count must be an int in 0..{MAX_KOIKOI}, got {koikoi_count!r}")
    yaku: list[tuple[str, int]] = []
    lights = (pile & LIGHT).bit_count()
    rain = bool(pile & RAINMAN_BIT)
    if lights == 5:
        yaku.append(("Five Lights", 10))
    elif lights == 4:
        yaku.append(("Rainy Four Lights", 7) if rain else ("Four Lights", 8))
    elif lights == 3 and not rain:
        yaku.append(("Three Lights", 5))
    if pile & BOAR_DEER_BUTTERFLY == BOAR_DEER_BUTTERFLY:
        yaku.append(("Boar-Deer-Butterfly", 5))
    sake = 3 if koikoi_count > 0 else 1
    if pile & FLOWER_SAKE == FLOWER_SAKE:
        yaku.append(("Flower Viewing Sake", sake))
    if pile & MOON_SAKE == MOON_SAKE:
        yaku.append(("Moon Viewing Sake", sake))
    n = (pile & SEED).bit_count()
    if n >= 5:
        yaku.append(("Tane", n - 4))
    if pile & RED_BLUE_RIBBONS == RED_BLUE_RIBBONS:
        yaku.append(("Red & Blue Ribbons", 10))
    if pile & RED_RIBBONS == RED_RIBBONS:
        yaku.append(("Red Ribbons", 5))
    if pile & BLUE_RIBBONS == BLUE_RIBBONS:
        yaku.append(("Blue Ribbons", 5))
    n = (pile & RIBBON).bit_count()
    if n >= 5:
        yaku.append(("Tan", n - 4))
    n = (pile & DROSS).bit_count()
    if n >= 10:
        yaku.append(("Kasu", n - 9))
    base = sum(p for _, p in yaku)
    if 1 <= koikoi_count <= 3:
        yaku.append(("Koi-Koi", koikoi_count))
    elif koikoi_count >= 4:
        yaku.append((f"Koi-Koi x{koikoi_count - 2}", base * (koikoi_count - 3)))
    return Score(points=with_bonus(base, koikoi_count), yaku=yaku)


def score(pile: Iterable[tuple[int, int]], koikoi_count: int = 0) -> Score:
    """Score a pile of ``(month, index)`` cards after ``koikoi_count`` koi-koi claims this round."""
    return score_mask(mask_of(pile), koikoi_count)
