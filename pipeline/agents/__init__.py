"""Agents: random, heuristic and model-backed players behind one batched interface."""

from .base import Agent, legal_list
from .random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent", "legal_list"]
