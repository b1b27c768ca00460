"""A model directory as a greedy agent, with the player spec duels ship to their workers."""

from __future__ import annotations

from pathlib import Path

from ..agents.model_agent import ModelAgent
from ..net.modelio import load_model
from ..selfplay.policies import NetSpec


def load_model_agent(directory: str | Path, name: str, seed: int = 0, inference: str = "auto") -> ModelAgent:
    """The greedy agent of the model in ``directory``, named ``name``; raises as ``load_model`` does."""
    net, meta = load_model(directory)
    agent = ModelAgent(net, name=name, seed=seed, inference=inference, spec=NetSpec.from_net(net, name))
    agent.meta = meta  # kind (sl/rl) etc., for reports
    return agent
