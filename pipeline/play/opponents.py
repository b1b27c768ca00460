"""Which agents a person can play, which one by default, and loading them once for many games."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from ..agents import Agent, load_agent
from ..duel.report import key_name
from ..search.spec import model_of

BUILTIN = ("random", "heuristic")
# Trained models in the order the pipeline ranks them when no duel ratings say otherwise.
MODELS = ("models/rl/wp", "models/rl/point", "models/sl")
RATINGS = "results/duels/ratings.json"
THINK = "0.5s"  # the page's searcher thinks at most this long per searched decision (unless its options say)


def _is_model_dir(d: Path) -> bool:
    # modelio.is_model_dir's test, without importing torch just to list the choices
    return (d / "model.pt").is_file() and (d / "config.json").is_file()


def present_models(root: Path = Path(".")) -> list[str]:
    """The trained model directories that exist under ``root``, as agent specs relative to it."""
    return [m for m in MODELS if _is_model_dir(root / m)]


def _elo(root: Path) -> dict[str, float]:
    try:
        doc = json.loads((root / RATINGS).read_text())
        return {k: float(v["elo"]) for k, v in doc["ratings"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # no duels run yet (or an unreadable file): fall back to the fixed order


def _strongest(models: list[str], elo: dict[str, float]) -> str:
    return max(models, key=lambda m: (elo.get(key_name(m), float("-inf")), -models.index(m)))


def search_options(root: Path = Path(".")) -> str:
    """The options of the searcher the duels stage rates (params.yaml ``duels.search.options``), with a think
    budget per decision when they set none, so that a reply never waits long on a slow machine."""
    from ..params import ParamError, load_params

    try:
        search = load_params(root / "params.yaml").duels.search
        options = search.options if search is not None else ""
    except ParamError:
        options = ""  # no readable params: the search defaults
    if "think=" not in options:
        options = "&".join(x for x in (options, f"think={THINK}") if x)
    return options


def searcher(root: Path = Path(".")) -> str | None:
    """The strongest searcher: ``search:`` over the strongest trained model present, None without a model."""
    models = present_models(root)
    if not models:
        return None
    return f"search:{_strongest(models, _elo(root))}?{search_options(root)}"


def default_opponent(root: Path = Path(".")) -> str:
    """The strongest trained agent present by the duels' Elo (the searcher when it is rated above every model),
    else RL-WP, RL-Point, SL in that order; else heuristic."""
    models = present_models(root)
    if not models:
        return "heuristic"
    elo = _elo(root)
    return _strongest([*models, searcher(root)], elo)


def choices(root: Path = Path(".")) -> list[str]:
    """The opponents offered in the page: the trained models present, the strongest searcher, the built-in agents."""
    found = searcher(root)
    return present_models(root) + ([found] if found else []) + ["heuristic", "random"]


class AgentPool:
    """Loads the agent of each new game. A model (or a searcher) is loaded once per file version and shared by its
    games: it plays greedily (a searcher's deals are seeded by what it sees), so its moves depend on the observation
    alone and sharing changes nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[tuple[str, int], Agent] = {}

    def load(self, spec: str, seed: int) -> Agent:
        """The agent for ``spec``; ``ValueError`` (one line, naming the spec) when it cannot be loaded."""
        if spec in BUILTIN:
            return load_agent(spec, seed=seed)  # cheap, and their random tie-breaks follow the game's seed
        weights = Path(model_of(spec)) / "model.pt"  # a searcher's choices, too, depend on the observation alone
        key = (str(weights.resolve()), spec, weights.stat().st_mtime_ns if weights.is_file() else 0)
        with self._lock:
            if key not in self._models:
                self._models[key] = load_agent(spec, seed=seed)
            return self._models[key]
