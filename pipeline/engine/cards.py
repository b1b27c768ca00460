"""The 48 hanafuda cards, their categories and yaku sets: card ``(month 1-12, index 1-4)`` has id
``4 * (month - 1) + (index - 1)``; a set of cards is an ``int`` bit mask."""

from __future__ import annotations

from collections.abc import Iterable

NUM_CARDS = 48
ALL_CARDS = (1 << NUM_CARDS) - 1


def card_id(month: int, index: int) -> int:
    """Id 0..47 of the card ``(month, index)``; raises ``ValueError`` for a card that does not exist."""
    if not (isinstance(month, int) and isinstance(index, int) and 1 <= month <= 12 and 1 <= index <= 4):
        raise ValueError(f"no such card: ({month!r}, {index!r}); month is 1-12 and index 1-4")
    return 4 * (month - 1) + (index - 1)


def card_tuple(cid: int) -> tuple[int, int]:
    """``(month, index)`` of card id ``cid``."""
    return (cid >> 2) + 1, (cid & 3) + 1


def mask_of(cards: Iterable[tuple[int, int]]) -> int:
    """Bit mask of an iterable of ``(month, index)`` pairs."""
    return mask_of_ids(card_id(month, index) for month, index in cards)


def mask_of_ids(ids: Iterable[int]) -> int:
    """Bit mask of card ids."""
    m = 0
    for c in ids:
        m |= 1 << c
    return m


def ids_of(mask: int) -> list[int]:
    """Card ids set in ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _m(*cards: tuple[int, int]) -> int:
    return mask_of(cards)


MONTH_MASK = tuple(0xF << (4 * m) for m in range(12))
"""``MONTH_MASK[m]``: the four cards of month ``m + 1``."""

RAINMAN, SAKE_CUP = card_id(11, 1), card_id(9, 1)

LIGHT = _m((1, 1), (3, 1), (8, 1), (11, 1), (12, 1))
SEED = _m((2, 1), (4, 1), (5, 1), (6, 1), (7, 1), (8, 2), (9, 1), (10, 1), (11, 2))
RIBBON = _m((1, 2), (2, 2), (3, 2), (4, 2), (5, 2), (6, 2), (7, 2), (9, 2), (10, 2), (11, 3))
# Every card that is neither light, seed nor ribbon is dross; the Sake Cup is both seed and dross.
DROSS = (ALL_CARDS & ~(LIGHT | SEED | RIBBON)) | (1 << SAKE_CUP)

RAINMAN_BIT = 1 << RAINMAN
BOAR_DEER_BUTTERFLY = _m((7, 1), (10, 1), (6, 1))
FLOWER_SAKE = _m((3, 1), (9, 1))
MOON_SAKE = _m((8, 1), (9, 1))
RED_RIBBONS = _m((1, 2), (2, 2), (3, 2))
BLUE_RIBBONS = _m((6, 2), (9, 2), (10, 2))
RED_BLUE_RIBBONS = RED_RIBBONS | BLUE_RIBBONS

CATEGORIES: dict[str, int] = {"light": LIGHT, "seed": SEED, "ribbon": RIBBON, "dross": DROSS}
"""Category masks; the Sake Cup is in both ``seed`` and ``dross``."""

YAKU_SETS: dict[str, int] = {
    "lights": LIGHT,
    "boar_deer_butterfly": BOAR_DEER_BUTTERFLY,
    "flower_viewing_sake": FLOWER_SAKE,
    "moon_viewing_sake": MOON_SAKE,
    "tane": SEED,
    "red_ribbons": RED_RIBBONS,
    "blue_ribbons": BLUE_RIBBONS,
    "tan": RIBBON,
    "kasu": DROSS,
}
"""Cards that can take part in each yaku (one mask per yaku family)."""


def _rule_signature(c: int) -> tuple[bool, ...]:
    """Card ``c``'s membership of every category and yaku set: all the rules look at besides its month."""
    return tuple(bool(m >> c & 1) for m in (*CATEGORIES.values(), *YAKU_SETS.values()))


def _canonical() -> tuple[int, ...]:
    """Lowest id of the cards with the same month, categories and yaku sets as each card."""
    first: dict[tuple, int] = {}
    return tuple(first.setdefault((c >> 2, _rule_signature(c)), c) for c in range(NUM_CARDS))


CANONICAL: tuple[int, ...] = _canonical()
"""``CANONICAL[c]``: the lowest id of the cards the rules cannot tell from ``c`` (SL accuracy counts
choosing either as the same move, as the paper's ``equal_result`` does)."""


def _month_swaps() -> tuple[tuple[int, int], ...]:
    """Pairs of months whose four cards match index by index in categories and yaku sets."""
    def signature(m: int) -> tuple:
        return tuple(_rule_signature(4 * m + i) for i in range(4))

    first: dict[tuple, int] = {}
    return tuple((first[signature(m)] + 1, m + 1) for m in range(12) if first.setdefault(signature(m), m) != m)


MONTH_SWAPS: tuple[tuple[int, int], ...] = _month_swaps()
"""Months that can trade places without changing any rule ((4, 5), (6, 10)): SL's augmentation."""

MONTH_NAMES = ("Pine", "Plum", "Cherry", "Wisteria", "Iris", "Peony",
               "Bush Clover", "Grass", "Chrysanthemum", "Maple", "Willow", "Paulownia")
_SPECIAL_NAMES = {
    (1, 1): "Crane", (1, 2): "Pine Poetry", (2, 1): "Warbler", (2, 2): "Plum Poetry",
    (3, 1): "Curtain", (3, 2): "Cherry Poetry", (4, 1): "Cuckoo", (4, 2): "Wisteria Ribbon",
    (5, 1): "Bridge", (5, 2): "Iris Ribbon", (6, 1): "Butterfly", (6, 2): "Peony Blue",
    (7, 1): "Boar", (7, 2): "Bush Clover Ribbon", (8, 1): "Moon", (8, 2): "Geese",
    (9, 1): "Sake Cup", (9, 2): "Chrysanthemum Blue", (10, 1): "Deer", (10, 2): "Maple Blue",
    (11, 1): "Rainman", (11, 2): "Swallow", (11, 3): "Willow Ribbon", (12, 1): "Phoenix",
}


def card_name(cid: int) -> str:
    """A short human name, e.g. ``Moon`` or ``Pine 3`` for a dross card."""
    month, index = card_tuple(cid)
    return _SPECIAL_NAMES.get((month, index), f"{MONTH_NAMES[month - 1]} {index}")
