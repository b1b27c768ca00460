"""Probes of what one step of rollout improvement can gain over a policy, per decision type.

The rollout targets of ``rollout_pi`` are worth training on only where the best action by rollout value
beats the policy's own choice by more than the rollouts' noise. These probes measure that on the
policy's own games, with both seats played greedily by one network:

- :func:`rollout_values`: each legal action played on ``k`` deals in which the cards the deciding
  player cannot see (the opponent's hand and the stock) are dealt again, the same deals for every
  action; every copy then played greedily to the end of the round on the rollout engine
  (``playout``). Uses nothing the player cannot see.
- :func:`rollout_gain`: at a share of the policy's decisions, the split-half gain of the best action by
  rollout value over the policy's choice (the best action chosen on half the deals, valued on the
  other half, so that the noise of the choice is not counted as gain), and the rollouts' noise.
- :func:`search_duel`: the network everywhere, except at ``decisions`` where it takes the action of
  best mean rollout value, against the plain network on duplicate deals. An upper bound of what
  distilling those targets into the network could reach.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..agents.base import legal_list
from ..agents.model_agent import NetPlayer
from ..duel.stats import DuelResult, mean_ci
from ..engine import DECISION_NAMES, GAME_OVER, GameState, resample_hidden
from ..selfplay.playout import branch, play_out
from ..selfplay.rewards import RewardModel
from .greedy import greedy_decisions


def rollout_values(player: NetPlayer, s: GameState, actions: Sequence[int], k: int, reward: RewardModel,
                   rng: np.random.Generator, deals: Sequence[GameState] | None = None) -> np.ndarray:
    """Round rewards of ``s.player``, shape ``(len(actions), k)``: action i on redealt copy j, then greedy play.

    ``deals``: the ``k`` copies to play on, instead of ``s`` redealt with ``rng``.
    """
    if deals is None:
        deals = [resample_hidden(s, s.player, rng) for _ in range(k)]
    return play_out([player], branch(deals, actions), reward).reshape(len(actions), len(deals))


@dataclass
class GainStats:
    """One decision type's probe: split-half gains (reward units per decision) and paired noise."""

    gains: list[float] = field(default_factory=list)
    noise_sd: list[float] = field(default_factory=list)  # per-deal sd of (action - policy's action)
    flips: int = 0  # decisions whose best action by mean rollout value is not the policy's

    def summary(self) -> dict:
        n = len(self.gains)
        gain, half = mean_ci(self.gains)
        return {"decisions": n, "gain": gain, "gain_ci95": half,
                "noise_sd": float(np.mean(self.noise_sd)) if n else float("nan"),
                "flip_rate": self.flips / n if n else float("nan")}


def rollout_gain(player: NetPlayer, reward: RewardModel, games: int, k: int, fraction: float, seed: int,
                 progress: Callable[[int], None] | None = None) -> dict[str, dict]:
    """Per decision type, what the best action by ``k``-deal rollout value gains over ``player``'s choice."""
    if k < 2:
        raise ValueError(f"rollout_gain needs at least 2 deals per action to split, got {k}")
    rng = np.random.default_rng(seed)
    stats = {name: GainStats() for name in DECISION_NAMES}
    for dec in greedy_decisions(player, seed, games, on_game=progress):
        acts, taken = legal_list(dec.obs), dec.taken
        if len(acts) > 1 and rng.random() < fraction:
            m = rollout_values(player, dec.state, acts, k, reward, rng)
            d = m - m[acts.index(taken)]  # paired: the same deals for every action
            order = rng.permutation(k)
            a_half, b_half = order[: k // 2], order[k // 2:]
            st = stats[DECISION_NAMES[dec.obs.decision]]
            st.gains.append(float(d[int(d[:, a_half].mean(axis=1).argmax()), b_half].mean()))
            others = [i for i, a in enumerate(acts) if a != taken]
            st.noise_sd.append(float(d[others].std(axis=1, ddof=1).mean()))
            st.flips += acts[int(d.mean(axis=1).argmax())] != taken
    return {name: st.summary() for name, st in stats.items()}


def search_duel(player: NetPlayer, reward: RewardModel, games: int, k: int, decisions: Sequence[int], seed: int,
                progress: Callable[[int], None] | None = None) -> tuple[DuelResult, int, int]:
    """The searcher (the network plus rollouts at ``decisions``) against the plain network, from A's side.

    Each deal is played twice, the searcher in seat 0 then seat 1. Returns the result, how many
    decisions were searched and how many of those changed the network's choice.
    """
    if games % 2:
        raise ValueError(f"search_duel plays each deal from both seats: games must be even, got {games}")
    rng = np.random.default_rng(seed)
    result, searched, changed = DuelResult(), 0, 0
    for g in range(games):
        searcher = g % 2
        s = GameState(seed=seed + g // 2)
        while s.phase != GAME_OVER:
            obs = s.observation(s.player)
            q = player.values([obs])[0]
            a = int(q.argmax())
            acts = legal_list(obs)
            if s.player == searcher and obs.decision in decisions and len(acts) > 1:
                m = rollout_values(player, s, acts, k, reward, rng)
                best = acts[int(m.mean(axis=1).argmax())]
                searched, changed = searched + 1, changed + (best != a)
                a = best
            s.step(a)
        result.add(s, searcher, s.init_points)
        if progress:
            progress(1)
    return result, searched, changed
