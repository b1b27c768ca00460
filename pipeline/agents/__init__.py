"""Agents: random, heuristic and model-backed players behind one batched interface."""

from .base import Agent, legal_list
from .heuristic import HeuristicAgent
from .loader import load_agent
from .random_agent import RandomAgent

__all__ = ["Agent", "HeuristicAgent", "ModelAgent", "RandomAgent", "legal_list", "load_agent"]


def __getattr__(name: str):
    # ModelAgent needs torch; load it on first use so random/heuristic play stays torch-free.
    if name == "ModelAgent":
        from .model_agent import ModelAgent  # torch: loaded only when this runs

        return ModelAgent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
