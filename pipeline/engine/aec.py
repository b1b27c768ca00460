"""A PettingZoo-style AEC (agent-environment-cycle) view of the engine.

It follows the AEC API (``reset``, ``agent_iter``, ``last``, ``step``, ``observe``,
``rewards``/``terminations``/``truncations``/``infos``) without depending on
PettingZoo, so ``pettingzoo.utils.wrappers`` can be put on top by a user who has it.
Rewards are each round's points, so an agent's cumulative reward is its final point
difference from the start. Observations are ``{"observation": Observation,
"action_mask": list[int]}`` over the 50 action tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .state import GAME_OVER, NUM_ACTIONS, GameState


class KoiKoiAEC:
    metadata = {"name": "koikoi_v0", "is_parallelizable": False}
    possible_agents = ["player_0", "player_1"]

    def __init__(self, num_rounds: int = 8, init_points: int = 30) -> None:
        self.num_rounds, self.init_points = num_rounds, init_points
        self.reset()

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.state = GameState(seed=seed, num_rounds=self.num_rounds, init_points=self.init_points)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.state.player]

    def observe(self, agent: str) -> dict[str, Any]:
        obs = self.state.observation(self.possible_agents.index(agent))
        mask = [(obs.legal_mask >> i) & 1 for i in range(NUM_ACTIONS)]
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, int, bool, bool, dict]:
        a = self.agent_selection
        return (self.observe(a) if observe else None, self._cumulative_rewards[a], self.terminations[a],
                self.truncations[a], self.infos[a])

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        for _ in range(max_iter):
            if not self.agents:
                return
            yield self.agent_selection

    def step(self, action: int | None) -> None:
        a = self.agent_selection
        if self.terminations[a] or self.truncations[a]:
            if action is not None:
                raise ValueError("a terminated agent must step with None")
            self.agents.remove(a)
            if self.agents:
                self.agent_selection = self.agents[0]
            return
        self._cumulative_rewards[a] = 0  # AEC: rewards accumulate until the agent acts again
        s = self.state
        rounds_before = len(s.results)
        s.step(action)
        self.rewards = {x: 0 for x in self.possible_agents}
        for r in s.results[rounds_before:]:
            for i, x in enumerate(self.possible_agents):
                self.rewards[x] += r.points[i]
        for x in self.agents:
            self._cumulative_rewards[x] += self.rewards[x]
        if s.phase == GAME_OVER:
            for x in self.agents:
                self.terminations[x] = True
                self.infos[x] = {"winner": s.winner, "points": list(s.points)}
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[s.player]
