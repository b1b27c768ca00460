"""A greedy rule-based player: a capture is worth what it adds to my yaku ``potential`` plus part of the opponent's
(denial); a lone discard costs its worth to me plus the opponent's gain if they can take it."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import DISCARD, KOIKOI, PICK, STOP, Observation, base_points, ids_of
from ..engine.cards import (
    ALL_CARDS,
    BLUE_RIBBONS,
    BOAR_DEER_BUTTERFLY,
    DROSS,
    FLOWER_SAKE,
    LIGHT,
    MONTH_MASK,
    MOON_SAKE,
    RAINMAN_BIT,
    RED_RIBBONS,
    RIBBON,
    SEED,
)
from .base import Agent, observation_uniform, seed_or_entropy

# Yaku made of one fixed set of cards: (set, points).
_SET_YAKU = ((BOAR_DEER_BUTTERFLY, 5.0), (RED_RIBBONS, 5.0), (BLUE_RIBBONS, 5.0), (FLOWER_SAKE, 2.0), (MOON_SAKE, 2.0))
# Yaku counted by category: (category, cards needed, points when reached).
_COUNT_YAKU = ((SEED, 5, 1.0), (RIBBON, 5, 1.0), (DROSS, 10, 1.0))
_LIGHTS_NO_RAIN = LIGHT & ~RAINMAN_BIT
# Small per-card worth on top of yaku progress so ties break toward the rarer category.
_CARD_WORTH = {LIGHT: 0.6, SEED: 0.3, RIBBON: 0.3, DROSS: 0.05}

DENY = 0.7  # weight of what a capture takes away from the opponent
KEEP = 0.35  # share of a card's value to me lost by laying it on the field


def _intrinsic(mask: int) -> float:
    return sum(w * (mask & cat).bit_count() for cat, w in _CARD_WORTH.items())


def potential(pile: int, blocked: int) -> float:
    """Points ``pile`` scores plus partial credit (quadratic in progress) for reachable yaku."""
    v = float(base_points(pile, False)) + _intrinsic(pile)
    # Lights: three non-Rainman lights make 5; progress counts only while three remain reachable.
    n = (pile & _LIGHTS_NO_RAIN).bit_count()
    if n < 3 and n + (_LIGHTS_NO_RAIN & ~blocked & ~pile).bit_count() >= 3:
        v += 5.0 * (n / 3) ** 2
    elif n >= 3 and (pile & LIGHT).bit_count() < 5:
        free = (LIGHT & ~blocked & ~pile).bit_count()
        if free:
            v += 1.5 * ((pile & LIGHT).bit_count() - 2) / 3
    for cards, pts in _SET_YAKU:
        have = pile & cards
        if have != cards and not cards & blocked:
            v += pts * (have.bit_count() / cards.bit_count()) ** 2
    for cat, need, pts in _COUNT_YAKU:
        n = (pile & cat).bit_count()
        if n < need and n + (cat & ~blocked & ~pile).bit_count() >= need:
            v += pts * (n / need) ** 2
    return v


def gain(pile: int, blocked: int, cards: int) -> float:
    """How much ``cards`` add to the potential of ``pile``."""
    return potential(pile | cards, blocked) - potential(pile, blocked)


def threat(pile: int, blocked: int) -> float:
    """Points of the yaku the owner of ``pile`` is one reachable card away from (0 if none)."""
    t = 0.0
    n = (pile & _LIGHTS_NO_RAIN).bit_count()
    if n == 2 and _LIGHTS_NO_RAIN & ~blocked & ~pile:
        t = max(t, 5.0)
    for cards, pts in _SET_YAKU:
        missing = cards & ~pile
        if missing.bit_count() == 1 and not missing & blocked:
            t = max(t, pts)
    for cat, need, pts in _COUNT_YAKU:
        n = (pile & cat).bit_count()
        if n == need - 1 and cat & ~blocked & ~pile:
            t = max(t, pts)
    return t


class HeuristicAgent(Agent):
    """Greedy rules: best capture by yaku value and denial, safest discard, cautious koi-koi."""

    name = "heuristic"

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed_or_entropy(seed)

    def act(self, observations: Sequence[Observation]) -> list[int]:
        out = []
        for obs in observations:
            if obs.decision == DISCARD:  # a random tie-break, from the observation (``base.observation_uniform``)
                eps = observation_uniform(self.seed, obs) * 1e-6
                out.append(self._discard(obs, eps))
            elif obs.decision == PICK:
                out.append(self._pick(obs))
            else:
                out.append(self._koikoi(obs))
        return out

    def _capture_value(self, obs: Observation, cards: int) -> float:
        return gain(obs.my_pile, obs.opp_pile, cards) + DENY * gain(obs.opp_pile, obs.my_pile, cards)

    def _best_of(self, obs: Observation, shown: int, choices: int) -> tuple[float, int]:
        """Best field card of ``choices`` to take with the ``shown`` card bit: (value, card bit)."""
        best, best_bit = -1e9, 0
        for c in ids_of(choices):
            low = 1 << c
            v = self._capture_value(obs, shown | low)
            if v > best:
                best, best_bit = v, low
        return best, best_bit

    def _discard(self, obs: Observation, eps: float) -> int:
        unseen = ALL_CARDS & ~(obs.hand | obs.field | obs.my_pile | obs.opp_pile)
        n_unseen = max(unseen.bit_count(), 1)
        # chance that one given unseen card reaches the opponent's hand or the opponent's draws
        p_card = min(1.0, (obs.opp_hand_count + obs.stock_count / 2) / n_unseen)
        best, best_card = -1e18, -1
        for c in ids_of(obs.hand):
            low = 1 << c
            month = MONTH_MASK[c >> 2]
            matches = obs.field & month
            k = matches.bit_count()
            if k == 1 or k == 3:
                v = 10.0 + self._capture_value(obs, low | matches)
            elif k == 2:
                v = 10.0 + self._best_of(obs, low, matches)[0]
            else:
                partners = unseen & month
                p_opp = 1.0 - (1.0 - p_card) ** partners.bit_count()
                opp_take = gain(obs.opp_pile, obs.my_pile, low | partners) if partners else 0.0
                mine = gain(obs.my_pile, obs.opp_pile, low)
                if obs.hand & month & ~low:
                    mine *= 0.3  # I hold a partner: likely to take it back next turn
                v = -(p_opp * opp_take + KEEP * mine)
            v += eps
            if v > best:
                best, best_card = v, c
        return best_card

    def _pick(self, obs: Observation) -> int:
        shown = 1 << obs.pick_card
        return self._best_of(obs, shown, obs.legal_mask)[1].bit_length() - 1

    def _koikoi(self, obs: Observation) -> int:
        mine = obs.my_yaku_points
        opp_after = obs.opp_points - mine
        last = obs.round >= obs.num_rounds
        if opp_after <= 0:
            return STOP  # stopping ends the game in my favour
        if last:
            # the game ends after this round: stop if that wins it, else push on
            return STOP if obs.my_points + mine > opp_after else (KOIKOI if obs.hand else STOP)
        cards_left = obs.hand.bit_count()
        if cards_left <= 3 or obs.opp_yaku_points > 0 or obs.opp_koikoi > 0:
            return STOP
        if threat(obs.opp_pile, obs.my_pile) > 0:
            return STOP
        # late in the game and ahead: bank the points
        if obs.round >= obs.num_rounds - 2 and obs.my_points + mine > opp_after:
            return STOP
        # early, opponent harmless and more yaku in reach: koi-koi
        if threat(obs.my_pile, obs.opp_pile) > 0 and mine <= 6:
            return KOIKOI
        return STOP
