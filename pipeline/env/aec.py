"""Koi-Koi as a PettingZoo AEC environment: token-index actions, encoded observations, each round's points."""

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..engine.actions import DECISION_NAMES, NUM_ACTIONS, STOP
from ..engine.cards import ALL_CARDS, card_name, ids_of
from ..engine.observation import Observation
from ..engine.scoring import base_points, with_bonus
from ..engine.state import GameState
from ..net.encoding import MAX_ROUNDS, NUM_FEATURES, NUM_TOKENS, ROWS, encode, legal_masks

AGENTS = ("player_0", "player_1")
# A round moves at most every yaku of all 48 cards with the largest koi-koi multiplier (7 claims).
MAX_ROUND_POINTS = with_bonus(base_points(ALL_CARDS, True), 7)


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` wrapped as PettingZoo's own games are (call order, action bounds)."""
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(raw_env(**kwargs)))


def observation_bounds(init_points: int) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of every encoded row (the point rows' from the initial points and the largest round)."""
    low = np.zeros((NUM_FEATURES, NUM_TOKENS), np.float32)
    high = np.ones((NUM_FEATURES, NUM_TOKENS), np.float32)
    # a game stops once a player is at 0 or below, so the last round starts with both in 1..2*init-1
    p_lo, p_hi = 1 - MAX_ROUND_POINTS, 2 * init_points - 1 + MAX_ROUND_POINTS
    r = ROWS["points"]  # diff/30, mine/30, opponent's/30, yaku points/10 of me and the opponent
    low[r], high[r] = (p_lo - p_hi) / 30, (p_hi - p_lo) / 30
    low[r + 1:r + 3], high[r + 1:r + 3] = p_lo / 30, p_hi / 30
    high[r + 3:r + 5] = MAX_ROUND_POINTS / 10
    high[ROWS["koikoi"]:ROWS["koikoi"] + 2] = 7 / 3  # at most 7 claims a round, scaled by 3
    c = ROWS["counts"]  # hand/8, opponent's hand/8, field/12, piles/24, stock/24
    high[c + 2], high[c + 3:c + 5] = 48 / 12, 48 / 24
    return low, high


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's name for the unwrapped environment)
    metadata = {"name": "koikoi_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, num_rounds: int = 8, init_points: int = 30, render_mode: str | None = None) -> None:
        super().__init__()
        if not isinstance(num_rounds, int) or not 1 <= num_rounds <= MAX_ROUNDS:
            raise ValueError(f"num_rounds must be 1..{MAX_ROUNDS} (what the encoding covers), got {num_rounds!r}")
        if not isinstance(init_points, int) or init_points < 1:
            raise ValueError(f"init_points must be an int >= 1, got {init_points!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.num_rounds, self.init_points, self.render_mode = num_rounds, init_points, render_mode
        self.possible_agents = list(AGENTS)
        low, high = observation_bounds(init_points)
        self._observation_space = spaces.Dict({
            "observation": spaces.Box(low, high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        self._action_space = spaces.Discrete(NUM_ACTIONS)

    def observation_space(self, agent: str) -> spaces.Space:  # the same object each time, so that seeding sticks
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        # the whole game, both hands included: private, so wrappers do not hand it on
        self._game = GameState(seed=seed, num_rounds=self.num_rounds, init_points=self.init_points)
        self.agents = list(self.possible_agents)
        self.rewards, self._cumulative_rewards = dict.fromkeys(self.agents, 0), dict.fromkeys(self.agents, 0)
        self.terminations, self.truncations = dict.fromkeys(self.agents, False), dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = AGENTS[self._game.current_player]

    def engine_observation(self, agent: str) -> Observation:
        """What ``agent`` may see, as the engine's ``Observation`` (for the project's agents)."""
        return self._game.observation(AGENTS.index(agent))

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = [self.engine_observation(agent)]
        return {"observation": encode(obs)[0], "action_mask": legal_masks(obs)[0].astype(np.int8)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        g = self._game
        rounds_before = len(g.results)
        g.step(action)  # IllegalActionError for an action the rules do not allow; the game is unchanged
        self._cumulative_rewards[agent] = 0  # the reward since this agent last acted has been read
        self._clear_rewards()
        for result in g.results[rounds_before:]:
            for i, a in enumerate(AGENTS):
                self.rewards[a] += result.points[i]
        self.agent_selection = AGENTS[g.current_player]
        if g.is_over:
            winner = None if g.winner is None else AGENTS[g.winner]
            for i, a in enumerate(AGENTS):
                self.terminations[a] = True
                self.infos[a] = {"winner": winner, "points": g.points[i]}
        self._accumulate_rewards()
        if g.is_over:
            self._deads_step_first()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use raw_env(render_mode='ansi')")
            return None
        text = table_text(self.engine_observation(self.agent_selection), self.agent_selection)
        g = self._game
        if g.is_over:
            outcome = "a draw" if g.winner is None else f"{AGENTS[g.winner]} wins"
            text += f"\ngame over: {outcome}, points {AGENTS[0]} {g.points[0]}, {AGENTS[1]} {g.points[1]}"
        return text

    def close(self) -> None:  # PettingZoo's API test wants it beside render()
        pass


def _cards(mask: int) -> str:
    return ", ".join(card_name(c) for c in ids_of(mask)) or "-"


def table_text(obs: Observation, name: str) -> str:
    """The table as ``obs``'s player sees it (only the observation is read: nothing hidden is drawn)."""
    other = AGENTS[1 - obs.player]
    decision = f"{name} to {DECISION_NAMES[obs.decision]}" if obs.to_act else "no decision pending"
    if obs.pick_card >= 0 and obs.to_act:
        decision += f" a match for {card_name(obs.pick_card)}"
    legal = [card_name(t) if t < STOP else ("stop" if t == STOP else "koi-koi")
             for t in range(NUM_ACTIONS) if obs.legal_mask >> t & 1]
    lines = [
        f"round {obs.round}/{obs.num_rounds}, turn {obs.turn}: {decision} "
        f"(dealer {name if obs.is_dealer else other})",
        f"points: {name} {obs.my_points} (yaku {obs.my_yaku_points}, koi-koi {obs.my_koikoi}), "
        f"{other} {obs.opp_points} (yaku {obs.opp_yaku_points}, koi-koi {obs.opp_koikoi})",
        f"field: {_cards(obs.field)}",
        f"{name} hand: {_cards(obs.hand)}",
        f"{name} pile: {_cards(obs.my_pile)}",
        f"{other} pile: {_cards(obs.opp_pile)}",
        f"{other} hand: {obs.opp_hand_count} cards; stock: {obs.stock_count} cards",
    ]
    if legal:
        lines.append(f"legal: {', '.join(legal)}")
    return "\n".join(lines)
