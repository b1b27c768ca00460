"""``search:<model>?...`` as an agent: ``load_search_agent`` (what ``agents.load_agent`` calls) and ``SearchAgent``."""

from collections.abc import Callable, Sequence

import numpy as np

from ..agents.base import Agent, PlayerSpec
from ..agents.model_agent import ModelAgent
from ..engine import Observation
from ..selfplay.rewards import RewardModel
from ..value.winprob import WinProbTable
from .player import SearchPlayer, SearchSpec
from .spec import SearchOptions, parse_search, rollout_path


class SearchAgent(ModelAgent):
    """Plays by search; its hints and reviews show its model's values, not a search."""

    player: SearchPlayer

    def action_scores(self, observations: Sequence[Observation]) -> np.ndarray:
        return self.player.model.values(observations)

    def act(self, observations: Sequence[Observation]) -> list[int]:
        if not observations:
            return []
        return [int(a) for a in self.player.values(observations).argmax(axis=1)]


def search_reward(spec: str, options: SearchOptions) -> RewardModel:
    """The reward the search maximises: ``wp`` from the ``winprob`` table, or ``point``."""
    if options.reward == "point":
        return RewardModel("point")
    try:
        table = WinProbTable.load(options.winprob)
    except (OSError, ValueError) as e:
        raise ValueError(f"agent {spec!r}: the wp reward needs the win-probability table {options.winprob} "
                         f"({type(e).__name__}: {e}); set winprob=PATH or reward=point") from None
    return RewardModel("wp", 10.0, table, 0.5)  # RL-WP's units; a scale changes no choice


def rollout_spec(spec: str, path: str) -> PlayerSpec:
    from ..rollout.rollout_player import load_rollout  # torch: loaded only when this runs

    try:
        return load_rollout(path)
    except (OSError, ValueError) as e:
        raise ValueError(f"agent {spec!r}: search option rollout={path!r}: {e}") from None


def load_search_agent(spec: str, seed: int, load_base: Callable[..., Agent], inference: str = "auto") -> SearchAgent:
    """The agent of a ``search:`` spec, its model loaded by ``load_base`` (``agents.load_agent``)."""
    model, options = parse_search(spec)
    base = load_base(model, seed=seed, inference=inference)
    if not isinstance(base, ModelAgent) or base.spec is None:
        raise ValueError(f"agent {spec!r}: {model} is not a model directory; search needs a model")
    reward = search_reward(spec, options)
    path = rollout_path(model, options.rollout)
    rollout = None if path is None else rollout_spec(spec, path)
    search = SearchSpec(spec, base.spec, reward, options, seed, rollout=rollout)
    # the base agent's own player searches: its network is not loaded twice
    player = SearchPlayer(base.player, reward, options, seed,
                          None if rollout is None else rollout.player(base.player.inference, "cpu"))
    agent = SearchAgent(base.net, name=spec, seed=seed, spec=search, player=player)
    agent.meta = getattr(base, "meta", {})
    return agent
