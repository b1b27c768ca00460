"""One loader for every agent spec: ``random``, ``heuristic``, a model directory, or ``search:<model>?...``."""

from __future__ import annotations

from pathlib import Path

from ..agents.base import Agent
from ..agents.heuristic import HeuristicAgent
from ..agents.random_agent import RandomAgent
from ..agents.specs import is_search
from ..net.model_dir import is_model_dir

SPEC_HELP = ("use random, heuristic or a model directory (models/sl, models/rl/point, ...), "
             "or search:<model directory> (docs/search.md)")


def load_agent(spec: str, seed: int = 0, inference: str = "auto") -> Agent:
    """The agent named by ``spec`` (model agents greedy); a one-line ``ValueError`` for a bad spec."""
    if spec == "random":
        return RandomAgent(seed)
    if spec == "heuristic":
        return HeuristicAgent(seed)
    if is_search(spec):
        from ..search.agent import load_search_agent  # torch: random/heuristic duels never import it

        return load_search_agent(spec, seed, load_agent, inference)
    path = Path(spec)
    try:
        is_dir = path.is_dir()
    except OSError as e:  # a name too long for the filesystem, ...
        shown = spec if len(spec) <= 60 else f"{spec[:50]}...{spec[-5:]}"
        raise ValueError(f"agent {shown!r}: {e.strerror}; {SPEC_HELP}") from None
    if not is_dir:
        if "/" in spec or path.exists():
            raise ValueError(f"agent {spec!r}: no such model directory; {SPEC_HELP}")
        raise ValueError(f"unknown agent {spec!r}: {SPEC_HELP}")
    if not is_model_dir(path):
        raise ValueError(f"agent {spec!r}: directory {path} holds no saved model (model.pt + config.json); "
                         f"{SPEC_HELP}")
    from .model_loader import load_model_agent  # torch: random/heuristic duels never import it

    try:
        return load_model_agent(path, spec.rstrip("/"), seed, inference)  # named by its directory as given
    except (FileNotFoundError, ValueError) as e:
        raise ValueError(f"agent {spec!r}: {e}") from None
