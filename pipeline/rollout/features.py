"""What the rollout policy sees: a row per legal token and a row per observation, from ``Observation`` fields only.

No per-turn history (its Python loop cost more than this whole policy). Per token: position, static attributes,
its month's counts per place, yaku progress of its sets; per observation: the game's progress."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..engine import Observation
from ..engine.cards import ALL_CARDS, MONTH_MASK, YAKU_SETS
from ..net.encoding import ATTRIBUTES, NUM_TOKENS, POSITIONS

FEATURE_VERSION = "rollout-v1"  # bumped when a row changes meaning: an old rollout model then refuses to load

MAX_LEGAL = 8  # the most legal tokens of any decision: a discard from a full hand
MONTH_COUNTS = ("field", "hand", "unseen", "my_pile", "opp_pile")  # per token: cards of its month there
PROGRESS = ("my_pile", "opp_pile", "unseen")  # per token: share of each of its yaku sets there
GLOBAL_PROGRESS = ("my_pile", "opp_pile", "unseen", "hand", "field")  # per observation
NUM_YAKU = len(YAKU_SETS)
NUM_TOKEN_FEATURES = len(POSITIONS) + ATTRIBUTES.shape[0] + len(MONTH_COUNTS) + len(PROGRESS) * NUM_YAKU
NUM_GLOBAL_FEATURES = 3 + 5 + 3 + 1 + 1 + 1 + 4 + 6 + len(GLOBAL_PROGRESS) * NUM_YAKU

_ATTR = np.ascontiguousarray(ATTRIBUTES.T)  # (50, 27): token -> its static attributes
_MEMBER = np.ascontiguousarray(np.stack([(np.uint64(m) >> np.arange(NUM_TOKENS, dtype=np.uint64)) & np.uint64(1)
                                         for m in YAKU_SETS.values()], axis=1).astype(np.float32))  # (50, 9)
_MONTH_OF = np.array([t // 4 if t < 48 else 12 for t in range(NUM_TOKENS)])  # 12: [K0]/[K1], no month
# the months (and a 13th, empty, for [K0]/[K1]) then the yaku sets; a count of each /4 or /its size
_GROUPS = np.array([*MONTH_MASK, 0, *YAKU_SETS.values()], dtype=np.uint64)
_GROUP_SCALE = np.array([0.25] * 13 + [1.0 / m.bit_count() for m in YAKU_SETS.values()], dtype=np.float32)
_PLACE_ORDER = [3, 4, 2, 1, 0]  # ``places`` (field, hand, unseen, mine, opp) as GLOBAL_PROGRESS orders them
_ALL = np.uint64(ALL_CARDS)
_MONTH_AT = len(POSITIONS) + ATTRIBUTES.shape[0]  # where a token row's month counts start, then its progress
_PROGRESS_AT = _MONTH_AT + len(MONTH_COUNTS)
_ONE = np.uint64(1)


class Features(NamedTuple):
    """A featurized batch: legal ``tokens`` (B, L) ascending, ``valid`` (not padding), token rows ``x``
    (B, L, NUM_TOKEN_FEATURES), observation rows ``g`` (B, NUM_GLOBAL_FEATURES), ``decision`` (B,)."""

    tokens: np.ndarray
    valid: np.ndarray
    x: np.ndarray
    g: np.ndarray
    decision: np.ndarray


_FIELDS = ("hand", "field", "my_pile", "opp_pile", "pick_card", "legal_mask", "opp_hand_count", "stock_count",
           "round", "num_rounds", "turn", "is_dealer", "my_points", "opp_points", "my_koikoi", "opp_koikoi",
           "my_yaku_points", "opp_yaku_points", "decision", "pick_from_draw")
_ROW = operator.itemgetter(*(Observation._fields.index(f) for f in _FIELDS))  # an observation's ``_FIELDS``
_NOT_TO_ACT = "featurize: every observation must be of the player to act (decision 0, 1 or 2)"
# the global features that are one scalar each, divided: their columns of ``g``, ``_FIELDS`` index and divisor
_G_COLS = [4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 19, 23]
_G_SRC = [12, 13, 16, 17, 8, 10, 11, 19, 14, 15, 6, 7]
_G_DIV = np.array([30, 30, 10, 10, 12, 16, 1, 1, 3, 3, 8, 24], dtype=np.float64)


def _scalars(observations: Sequence[Observation]) -> np.ndarray:
    """``_FIELDS`` of each observation, int64 ``(B, 20)``, in one pass of C (a list of tuples cost 1.5x)."""
    try:
        flat = np.fromiter(itertools.chain.from_iterable(map(_ROW, observations)), dtype=np.int64,
                           count=len(observations) * len(_FIELDS))
    except TypeError:  # a decision of None
        raise ValueError(_NOT_TO_ACT) from None
    return flat.reshape(len(observations), len(_FIELDS))


def _legal_tokens(legal: np.ndarray, width: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The set bits of each uint64 ``legal`` mask, ascending, padded to ``width`` (default: the most in the batch)."""
    bits = np.unpackbits(legal.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1,
                         bitorder="little")[:, :NUM_TOKENS]
    counts = bits.sum(1, dtype=np.int64)
    L = int(counts.max(initial=1)) if width is None else width
    if int(counts.max(initial=0)) > L:
        raise ValueError(f"featurize: an observation has {int(counts.max())} legal tokens, more than {L}")
    rows, cols = np.nonzero(bits)  # row by row, each row's tokens ascending
    tokens = np.zeros((len(legal), L), dtype=np.int64)
    tokens[rows, np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]] = cols  # rank within its row
    return tokens, np.arange(L) < counts[:, None]


def featurize(observations: Sequence[Observation], width: int | None = None) -> Features:
    """Features of a batch of acting-player observations, tokens padded to ``width`` (default: the batch's most)."""
    B = len(observations)
    s = _scalars(observations)
    dec = s[:, 18]
    if B and (dec < 0).any():
        raise ValueError(_NOT_TO_ACT)
    u = s.astype(np.uint64)
    hand, field, mine, opp = u[:, 0], u[:, 1], u[:, 2], u[:, 3]
    pick = s[:, 4]
    pending = np.where(pick >= 0, _ONE << np.maximum(pick, 0).astype(np.uint64), np.uint64(0))
    unseen = _ALL & ~(hand | field | mine | opp | pending)
    tokens, valid = _legal_tokens(u[:, 5], width)
    L = tokens.shape[1]
    # cards of each month and each yaku set in each of the five places, in one count: (B, 5, 12 + 9)
    places = np.stack([field, hand, unseen, mine, opp], axis=1)
    counts = np.bitwise_count(places[:, :, None] & _GROUPS).astype(np.float32) * _GROUP_SCALE
    progress = counts[:, _PLACE_ORDER, 13:]  # (B, 5, 9): my pile, opponent's, unseen, hand, field

    # per token, in place: position bits, static attributes, month counts ([K0]/[K1]: zeros), yaku progress
    x = np.empty((B, L, NUM_TOKEN_FEATURES), dtype=np.float32)
    where = np.stack([hand, field, mine, opp, pending, unseen], axis=1)  # (B, 6)
    x[:, :, :6] = (where[:, None, :] >> tokens[:, :, None].astype(np.uint64)) & _ONE
    x[:, :, 6:_MONTH_AT] = _ATTR[tokens]
    x[:, :, _MONTH_AT:_PROGRESS_AT] = counts[np.arange(B)[:, None], :, _MONTH_OF[tokens]]
    x[:, :, _PROGRESS_AT:] = (_MEMBER[tokens][:, :, None, :] * progress[:, None, :len(PROGRESS), :]).reshape(B, L, -1)

    g = np.zeros((B, NUM_GLOBAL_FEATURES), dtype=np.float32)
    g[np.arange(B), np.clip(dec, 0, 2)] = 1.0
    # 3, 9: my points less the opponent's /30, rounds left /12; 4-8, 11-15, 19, 23: one scalar each (_G_COLS)
    g[:, [3, 9]] = (s[:, [12, 9]] - s[:, [13, 8]]) / np.array([30.0, 12.0])
    g[:, _G_COLS] = s[:, _G_SRC] / _G_DIV
    g[:, 10] = s[:, 8] >= s[:, 9]  # the last round: what is left to win is this round's points
    g[:, 16:18] = s[:, 14:16] > 0  # koi-koi claimed, mine and the opponent's
    g[:, [18, 20, 21, 22]] = np.bitwise_count(u[:, :4]) / np.array([8.0, 12.0, 24.0, 24.0])  # hand, field, piles
    g[:, 24:] = progress.reshape(B, -1)
    return Features(tokens, valid, x, g, dec)


def scatter(values: np.ndarray, features: Features) -> np.ndarray:
    """Per-token ``values`` ``(B, L)`` as float32 ``(B, 50)`` by token, -inf on every illegal token."""
    out = np.full((len(values), NUM_TOKENS), -np.inf, dtype=np.float32)
    rows = np.broadcast_to(np.arange(len(values))[:, None], features.tokens.shape)
    out[rows[features.valid], features.tokens[features.valid]] = values[features.valid]
    return out


assert NUM_TOKEN_FEATURES == 65 and NUM_GLOBAL_FEATURES == 69
