"""What the rollout policy sees: features of each legal token and of the observation, from ``Observation`` fields only.

``featurize`` turns a batch of observations into a ``Features``: the legal tokens of each observation (ascending,
padded to the batch's largest count: at most ``MAX_LEGAL``), a row of ``NUM_TOKEN_FEATURES`` per token and a row of
``NUM_GLOBAL_FEATURES`` per observation. The network scores each token from its own row and its observation's row,
with nothing across tokens, so an illegal token is never computed at all (a discard has at most 8 legal tokens of
50, a pick or a koi-koi call 2 or 3). Unlike ``net.encoding`` there is no per-turn history (its Python loop cost
more than this whole policy) and no attention.

Per token (card 0..47, [K0] 48, [K1] 49):

- position (6): in my hand, on the field, in my pile, in the opponent's pile, the card waiting for a pick, unseen;
- static attributes (``encoding.ATTRIBUTES``, 27): month, category, yaku sets, [K0] / [K1];
- month counts (5): how many cards of its month are on the field, in my hand, unseen, in my pile, in the
  opponent's pile, /4 (what a discard would take, what is left to come);
- yaku progress (27): for each yaku set the card is in, that set's share already in my pile, the opponent's, unseen.

Per observation: decision type (3), points (5: diff, mine, opponent's /30; yaku points /10), round and rounds left
/12, last round, turn /16, dealer, pick from the draw, koi-koi counts /3 and whether claimed (4), card counts (6), and
the share of each yaku set in my pile, the opponent's, unseen, my hand and the field (45).

Nothing hidden (the opponent's hand, the stock's order) is read: ``unseen`` is every card not visible to me.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..engine import Observation
from ..engine.cards import ALL_CARDS, MONTH_MASK, YAKU_SETS
from ..net.encoding import ATTRIBUTES, NUM_TOKENS

FEATURE_VERSION = "rollout-v1"
"""Bumped whenever a row changes meaning, so a rollout model of another layout refuses to load."""

MAX_LEGAL = 8  # the most legal tokens of any decision: a discard from a full hand
POSITIONS = ("hand", "field", "my_pile", "opp_pile", "pending", "unseen")
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
_ONE = np.uint64(1)


class Features(NamedTuple):
    """A featurized batch of ``B`` observations with at most ``L`` legal tokens each.

    ``tokens`` int64 ``(B, L)``: the legal tokens, ascending (padding: 0); ``valid`` bool ``(B, L)``: not padding;
    ``x`` float32 ``(B, L, NUM_TOKEN_FEATURES)``; ``g`` float32 ``(B, NUM_GLOBAL_FEATURES)``; ``decision`` int64
    ``(B,)``.
    """

    tokens: np.ndarray
    valid: np.ndarray
    x: np.ndarray
    g: np.ndarray
    decision: np.ndarray


def _scalars(observations: Sequence[Observation]) -> np.ndarray:
    return np.array(
        [(o.hand, o.field, o.my_pile, o.opp_pile, o.pick_card, o.legal_mask, o.opp_hand_count, o.stock_count,
          o.round, o.num_rounds, o.turn, o.is_dealer, o.my_points, o.opp_points, o.my_koikoi, o.opp_koikoi,
          o.my_yaku_points, o.opp_yaku_points, -1 if o.decision is None else o.decision, o.pick_from_draw)
         for o in observations], dtype=np.int64).reshape(len(observations), 20)


def _legal_tokens(legal: np.ndarray, width: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The set bits of each uint64 ``legal`` mask, ascending, padded to ``width`` (default: the most in the batch)."""
    bits = np.unpackbits(legal.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1,
                         bitorder="little")[:, :NUM_TOKENS].astype(bool)
    counts = bits.sum(1)
    L = int(counts.max(initial=1)) if width is None else width
    if int(counts.max(initial=0)) > L:
        raise ValueError(f"featurize: an observation has {int(counts.max())} legal tokens, more than {L}")
    order = np.argsort(~bits, axis=1, kind="stable")[:, :L]  # legal tokens first, each group ascending
    valid = np.arange(L) < counts[:, None]
    return np.where(valid, order, 0), valid


def featurize(observations: Sequence[Observation], width: int | None = None) -> Features:
    """Features of a batch of acting-player observations; ``width``: pad the tokens to this many (the training
    set's ``MAX_LEGAL``), default the batch's most. ``ValueError`` for an observation with no decision to make."""
    B = len(observations)
    s = _scalars(observations)
    dec = s[:, 18]
    if B and (dec < 0).any():
        raise ValueError("featurize: every observation must be of the player to act (decision 0, 1 or 2)")
    u = s.astype(np.uint64)
    hand, field, mine, opp = u[:, 0], u[:, 1], u[:, 2], u[:, 3]
    pick = s[:, 4]
    pending = np.where(pick >= 0, _ONE << np.maximum(pick, 0).astype(np.uint64), np.uint64(0))
    unseen = _ALL & ~(hand | field | mine | opp | pending)
    tokens, valid = _legal_tokens(u[:, 5], width)
    L = tokens.shape[1]

    # per token: position bits ([K0]/[K1] are in no mask), static attributes, month counts, yaku progress
    where = np.stack([hand, field, mine, opp, pending, unseen], axis=1)  # (B, 6)
    pos = (where[:, None, :] >> tokens[:, :, None].astype(np.uint64)) & _ONE  # (B, L, 6)
    # cards of each month and each yaku set in each of the five places, in one count: (B, 5, 12 + 9)
    places = np.stack([field, hand, unseen, mine, opp], axis=1)
    counts = np.bitwise_count(places[:, :, None] & _GROUPS).astype(np.float32) * _GROUP_SCALE
    month = counts[np.arange(B)[:, None], :, _MONTH_OF[tokens]]  # (B, L, 5); month 12 ([K0]/[K1]): zeros
    progress = counts[:, _PLACE_ORDER, 13:]  # (B, 5, 9): my pile, opponent's, unseen, hand, field
    member = _MEMBER[tokens]  # (B, L, 9)
    tok_progress = (member[:, :, None, :] * progress[:, None, :len(PROGRESS), :]).reshape(B, L, -1)
    x = np.concatenate([pos.astype(np.float32), _ATTR[tokens], month, tok_progress], axis=2)

    g = np.zeros((B, NUM_GLOBAL_FEATURES), dtype=np.float32)
    g[np.arange(B), np.clip(dec, 0, 2)] = 1.0
    my_pts, opp_pts = s[:, 12], s[:, 13]
    g[:, 3] = (my_pts - opp_pts) / 30.0
    g[:, 4] = my_pts / 30.0
    g[:, 5] = opp_pts / 30.0
    g[:, 6] = s[:, 16] / 10.0
    g[:, 7] = s[:, 17] / 10.0
    g[:, 8] = s[:, 8] / 12.0
    g[:, 9] = (s[:, 9] - s[:, 8]) / 12.0
    g[:, 10] = s[:, 8] >= s[:, 9]  # the last round: what is left to win is this round's points
    g[:, 11] = s[:, 10] / 16.0
    g[:, 12] = s[:, 11]
    g[:, 13] = s[:, 19]
    g[:, 14] = s[:, 14] / 3.0
    g[:, 15] = s[:, 15] / 3.0
    g[:, 16] = s[:, 14] > 0
    g[:, 17] = s[:, 15] > 0
    g[:, 18] = np.bitwise_count(hand) / 8.0
    g[:, 19] = s[:, 6] / 8.0
    g[:, 20] = np.bitwise_count(field) / 12.0
    g[:, 21] = np.bitwise_count(mine) / 24.0
    g[:, 22] = np.bitwise_count(opp) / 24.0
    g[:, 23] = s[:, 7] / 24.0
    g[:, 24:] = progress.reshape(B, -1)
    return Features(tokens, valid, x, g, dec)


def scatter(values: np.ndarray, features: Features) -> np.ndarray:
    """Per-token ``values`` ``(B, L)`` as float32 ``(B, 50)`` by token, -inf on every illegal token."""
    out = np.full((len(values), NUM_TOKENS), -np.inf, dtype=np.float32)
    rows = np.broadcast_to(np.arange(len(values))[:, None], features.tokens.shape)
    out[rows[features.valid], features.tokens[features.valid]] = values[features.valid]
    return out


assert NUM_TOKEN_FEATURES == 65 and NUM_GLOBAL_FEATURES == 69
