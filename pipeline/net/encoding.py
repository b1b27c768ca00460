"""Observations as the paper's "deck tokens + special tokens" matrix ``(B, NUM_FEATURES, NUM_TOKENS)``: column ``t``
is token (= action) ``t``, rows in ``LAYOUT`` order. Only ``Observation`` fields are read: nothing hidden leaks."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..engine import Observation
from ..engine.cards import ALL_CARDS, CANONICAL, CATEGORIES, MONTH_MASK, NUM_CARDS, YAKU_SETS

NUM_TOKENS = 50
K0, K1 = 48, 49
MAX_TURNS = 16
MAX_ROUNDS = 12  # round one-hots cover games of up to 12 rounds (the paper plays 8)
MAX_POINTS = 1000  # initial points a game may start with (the paper: 30; scaled by 1/30 here)

FEATURE_VERSION = "tokens-v3"  # bumped when the rows change: an old model then refuses to load

POSITIONS = ("hand", "field", "my_pile", "opp_pile", "pending", "unseen")
DEALT = ("dealt_to_me", "dealt_to_field")  # where each card was at the start of the round
HISTORY_KINDS = ("discard_paired", "discard_unpaired", "taken_by_discard", "draw_paired", "draw_unpaired",
                 "taken_by_draw")
YAKU_NAMES = tuple(YAKU_SETS)
CATEGORY_NAMES = tuple(CATEGORIES)

# (block name, rows). Card-state blocks come first: they are the bit-mask rows unpacked in one go.
LAYOUT: tuple[tuple[str, int], ...] = (
    # card state
    ("position", len(POSITIONS)),
    ("dealt", len(DEALT)),
    ("legal", 1),
    ("history", MAX_TURNS * len(HISTORY_KINDS)),  # row = start + 6 * (current turn - turn) + kind
    # card attributes
    ("month", 12),
    ("category", len(CATEGORY_NAMES)),
    ("yaku_set", len(YAKU_NAMES)),
    ("special", 2),  # [K0], [K1]
    # game progress
    ("points", 5),  # diff/30, mine/30, opponent's/30, my yaku points/10, opponent's yaku points/10
    ("round", MAX_ROUNDS),  # one-hot of the round, 1-based
    ("rounds_left", MAX_ROUNDS),  # one-hot of num_rounds - round
    ("turn", MAX_TURNS),
    ("dealer", 2),  # I am the dealer, I am not
    ("decision", 3),  # discard, pick, koi-koi
    ("pick_from_draw", 1),
    ("koikoi", 4),  # my count/3, opponent's count/3, I have claimed, opponent has claimed
    ("koikoi_claims", 2 * MAX_TURNS),  # by me on turn t (row t-1), by the opponent (row 16 + t-1)
    ("counts", 6),  # my hand/8, opponent's hand/8, field/12, my pile/24, opponent's pile/24, stock/24
    ("yaku_progress", 5 * len(YAKU_NAMES)),  # share of each yaku set in my pile, opponent's, unseen, hand, field
)

_STARTS = list(itertools.accumulate((n for _, n in LAYOUT), initial=0))
ROWS: dict[str, int] = {name: start for (name, _), start in zip(LAYOUT, _STARTS)}
NUM_FEATURES: int = _STARTS[-1]

NUM_MASK_ROWS = ROWS["month"]  # rows 0..NUM_MASK_ROWS-1 are per-card bit masks
ATTR_START, PROGRESS_START = ROWS["month"], ROWS["points"]


CANONICAL_TOKEN = np.array([*CANONICAL, K0, K1], dtype=np.int64)
"""Token -> the lowest token interchangeable with it (``engine.cards.CANONICAL``)."""


def same_choice(pred: np.ndarray, action: np.ndarray) -> np.ndarray:
    """Whether each predicted token is the recorded one or a card interchangeable with it."""
    return CANONICAL_TOKEN[pred] == CANONICAL_TOKEN[action]


_ATTRIBUTE_MASKS = (*MONTH_MASK, *(CATEGORIES[c] for c in CATEGORY_NAMES), *(YAKU_SETS[y] for y in YAKU_NAMES),
                    1 << K0, 1 << K1)
ATTRIBUTES = np.array([[(m >> t) & 1 for t in range(NUM_TOKENS)] for m in _ATTRIBUTE_MASKS], dtype=np.float32)
"""The static card-attribute block, ``(ROWS['points'] - ROWS['month'], NUM_TOKENS)``."""

_YAKU_MASKS = np.array([YAKU_SETS[y] for y in YAKU_NAMES], dtype=np.uint64)
_YAKU_SIZES = np.array([YAKU_SETS[y].bit_count() for y in YAKU_NAMES], dtype=np.float32)
_ALL = np.uint64(ALL_CARDS)
_ONE = np.uint64(1)

# scalar fields read per observation, in this column order
_F_HAND, _F_FIELD, _F_MY, _F_OPP, _F_PICK, _F_LEGAL, _F_OPPHAND, _F_STOCK, _F_ROUND, _F_NROUNDS, _F_TURN, \
    _F_DEALER, _F_MYPTS, _F_OPPPTS, _F_MYK, _F_OPPK, _F_MYY, _F_OPPY, _F_DEC, _F_PDRAW = range(20)

_H = ROWS["history"]
_CLAIM_ME, _CLAIM_OPP = ROWS["koikoi_claims"], ROWS["koikoi_claims"] + MAX_TURNS


def _unpack(masks: np.ndarray) -> np.ndarray:
    """uint64 ``(..., R)`` -> uint8 ``(..., R, NUM_TOKENS)`` with bit t in column t."""
    b = np.unpackbits(masks.astype("<u8").view(np.uint8), axis=-1, bitorder="little")
    return b.reshape(*masks.shape, 64)[..., :NUM_TOKENS]


def _scalars(observations: Sequence[Observation]) -> np.ndarray:
    return np.array(
        [(o.hand, o.field, o.my_pile, o.opp_pile, o.pick_card, o.legal_mask, o.opp_hand_count, o.stock_count,
          o.round, o.num_rounds, o.turn, o.is_dealer, o.my_points, o.opp_points, o.my_koikoi, o.opp_koikoi,
          o.my_yaku_points, o.opp_yaku_points, -1 if o.decision is None else o.decision, o.pick_from_draw)
         for o in observations],
        dtype=np.int64,
    ).reshape(len(observations), 20)


def _history(observations: Sequence[Observation]) -> tuple[list[int], list[int], list[int], list[int], list[int],
                                                          np.ndarray]:
    """(sample, row, mask) of the history rows, (sample, row) of koi-koi claims, and the dealt masks (B, 2)."""
    hb, hr, hm, kb, kr = [], [], [], [], []  # history (sample, row, mask), koi-koi claims (sample, row)
    dealt = np.zeros((len(observations), 2), dtype=np.uint64)
    k = len(HISTORY_KINDS)
    for b, o in enumerate(observations):
        pending = o.pick_card  # the shown card waiting for a pick is neither paired nor unpaired yet
        me = o.player
        mine = taken = placed = 0  # my played cards; cards taken from the field; cards laid on it
        # turn t of the round (0-based) goes to block turn - 1 - t: this turn first, then back in time
        row = _H + k * (o.turn - 1)
        for t, turn in enumerate(o.turns):
            d = turn.discard
            if d >= 0:
                if turn.player == me:
                    mine |= 1 << d
                if turn.captured:
                    hb += (b, b)
                    hr += (row, row + 2)
                    hm += (1 << d, turn.captured)
                    taken |= turn.captured
                elif d != pending:
                    hb.append(b)
                    hr.append(row + 1)
                    hm.append(1 << d)
                    placed |= 1 << d
            d = turn.draw
            if d >= 0:
                if turn.captured2:
                    hb += (b, b)
                    hr += (row + 3, row + 5)
                    hm += (1 << d, turn.captured2)
                    taken |= turn.captured2
                elif d != pending:
                    hb.append(b)
                    hr.append(row + 4)
                    hm.append(1 << d)
                    placed |= 1 << d
            if turn.koikoi:
                kb.append(b)
                kr.append((_CLAIM_ME if turn.player == me else _CLAIM_OPP) + t)
            row -= k
        dealt[b, 0] = o.hand | mine
        dealt[b, 1] = (o.field | taken) & ~placed
    return hb, hr, hm, kb, kr, dealt


def encode(observations: Sequence[Observation]) -> np.ndarray:
    """Encode a batch: float32 ``(B, NUM_FEATURES, NUM_TOKENS)``."""
    B = len(observations)
    out = np.empty((B, NUM_FEATURES, NUM_TOKENS), dtype=np.float32)
    if B == 0:
        return out
    s = _scalars(observations)
    u = s.astype(np.uint64)

    # --- card state: bit masks -> rows
    masks = np.zeros((B, NUM_MASK_ROWS), dtype=np.uint64)
    masks[:, 0:4] = u[:, _F_HAND:_F_OPP + 1]
    pick = s[:, _F_PICK]
    pending = np.where(pick >= 0, _ONE << np.maximum(pick, 0).astype(np.uint64), np.uint64(0))
    masks[:, 4] = pending
    masks[:, 5] = _ALL & ~(u[:, _F_HAND] | u[:, _F_FIELD] | u[:, _F_MY] | u[:, _F_OPP] | pending)
    hb, hr, hm, kb, kr, dealt = _history(observations)
    masks[:, 6:8] = dealt
    masks[:, 8] = u[:, _F_LEGAL]
    if hb:
        masks[hb, hr] = np.array(hm, dtype=np.uint64)
    out[:, :NUM_MASK_ROWS] = _unpack(masks)

    # --- card attributes: static
    out[:, ATTR_START:PROGRESS_START] = ATTRIBUTES

    # --- game progress: one value per row, broadcast over the tokens
    g = np.zeros((B, NUM_FEATURES), dtype=np.float32)  # indexed by absolute row; only progress rows used
    ar = np.arange(B)
    r = ROWS["points"]
    g[:, r] = (s[:, _F_MYPTS] - s[:, _F_OPPPTS]) / 30.0
    g[:, r + 1] = s[:, _F_MYPTS] / 30.0
    g[:, r + 2] = s[:, _F_OPPPTS] / 30.0
    g[:, r + 3] = s[:, _F_MYY] / 10.0
    g[:, r + 4] = s[:, _F_OPPY] / 10.0
    g[ar, ROWS["round"] + np.clip(s[:, _F_ROUND] - 1, 0, MAX_ROUNDS - 1)] = 1.0
    g[ar, ROWS["rounds_left"] + np.clip(s[:, _F_NROUNDS] - s[:, _F_ROUND], 0, MAX_ROUNDS - 1)] = 1.0
    g[ar, ROWS["turn"] + np.clip(s[:, _F_TURN] - 1, 0, MAX_TURNS - 1)] = 1.0
    g[ar, ROWS["dealer"] + 1 - s[:, _F_DEALER]] = 1.0
    dec = s[:, _F_DEC]
    has_dec = dec >= 0
    g[ar[has_dec], ROWS["decision"] + dec[has_dec]] = 1.0
    g[:, ROWS["pick_from_draw"]] = s[:, _F_PDRAW]
    r = ROWS["koikoi"]
    g[:, r] = s[:, _F_MYK] / 3.0
    g[:, r + 1] = s[:, _F_OPPK] / 3.0
    g[:, r + 2] = s[:, _F_MYK] > 0
    g[:, r + 3] = s[:, _F_OPPK] > 0
    if kb:
        g[kb, kr] = 1.0
    r = ROWS["counts"]
    g[:, r] = np.bitwise_count(u[:, _F_HAND]) / 8.0
    g[:, r + 1] = s[:, _F_OPPHAND] / 8.0
    g[:, r + 2] = np.bitwise_count(u[:, _F_FIELD]) / 12.0
    g[:, r + 3] = np.bitwise_count(u[:, _F_MY]) / 24.0
    g[:, r + 4] = np.bitwise_count(u[:, _F_OPP]) / 24.0
    g[:, r + 5] = s[:, _F_STOCK] / 24.0
    r = ROWS["yaku_progress"]
    n = len(YAKU_NAMES)
    for i, m in enumerate((u[:, _F_MY], u[:, _F_OPP], masks[:, 5], u[:, _F_HAND], u[:, _F_FIELD])):
        g[:, r + i * n:r + (i + 1) * n] = np.bitwise_count(m[:, None] & _YAKU_MASKS) / _YAKU_SIZES
    out[:, PROGRESS_START:] = g[:, PROGRESS_START:, None]
    return out


def legal_masks(observations: Sequence[Observation]) -> np.ndarray:
    """Legal actions as bool ``(B, NUM_TOKENS)``."""
    m = np.array([o.legal_mask for o in observations], dtype=np.uint64).reshape(-1, 1)
    return _unpack(m)[:, 0].astype(bool)


def decisions(observations: Sequence[Observation]) -> np.ndarray:
    """Decision type per observation, int64 ``(B,)``: 0 discard, 1 pick, 2 koi-koi."""
    d = [o.decision for o in observations]
    if any(x is None or not 0 <= x <= 2 for x in d):
        raise ValueError("decisions: every observation must be of the player to act (decision 0, 1 or 2)")
    return np.array(d, dtype=np.int64).reshape(len(d))


def row_names() -> list[str]:
    """A readable name for each feature row (for plots and the encoding table of docs/encoding-model.md)."""
    names: list[str] = [f"position={p}" for p in POSITIONS] + list(DEALT) + ["legal"]
    names += [f"turns_ago={t}:{k}" for t in range(MAX_TURNS) for k in HISTORY_KINDS]
    names += [f"month={m}" for m in range(1, 13)] + [f"category={c}" for c in CATEGORY_NAMES]
    names += [f"yaku_set={y}" for y in YAKU_NAMES] + ["special=[K0]", "special=[K1]"]
    names += ["point_diff", "my_points", "opp_points", "my_yaku_points", "opp_yaku_points"]
    names += [f"round={i}" for i in range(1, MAX_ROUNDS + 1)] + [f"rounds_left={i}" for i in range(MAX_ROUNDS)]
    names += [f"turn={i}" for i in range(1, MAX_TURNS + 1)] + ["dealer", "not_dealer"]
    names += ["decision=discard", "decision=pick", "decision=koikoi", "pick_from_draw"]
    names += ["my_koikoi", "opp_koikoi", "my_koikoi>0", "opp_koikoi>0"]
    names += [f"koikoi_by_me@turn{t}" for t in range(1, MAX_TURNS + 1)]
    names += [f"koikoi_by_opp@turn{t}" for t in range(1, MAX_TURNS + 1)]
    names += ["n_hand", "n_opp_hand", "n_field", "n_my_pile", "n_opp_pile", "n_stock"]
    names += [f"{w}:{y}" for w in ("my_pile", "opp_pile", "unseen", "hand", "field") for y in YAKU_NAMES]
    assert len(names) == NUM_FEATURES
    return names


assert NUM_CARDS == 48 and ATTRIBUTES.shape == (PROGRESS_START - ATTR_START, NUM_TOKENS)
