"""Which agents a person can play, which one by default, and loading them for many games.

A server offers a fixed list: the built-in agents, the model directories found under its models root
(the project's ``models/``, or ``koikoi play --models DIR``) and the operator's ``--opponent``. A
request names one of them or gets one generic refusal: a client cannot probe the server's files.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path

from ..agents import Agent, load_agent
from ..agents.specs import BUILTIN, PREFIX, model_of
from ..duel.duel_report import key_name
from ..params import ParamError, load_params

# Trained models in the order the pipeline ranks them when no duel ratings say otherwise.
MODELS = ("models/rl/wp", "models/rl/point", "models/sl")
RATINGS = "results/duels/ratings.json"
MODELS_ROOT = "models"
MAX_MODELS = 3  # models kept loaded at once (least recently used dropped): ~100 MB each at the paper's sizes
MAX_DEPTH = 3   # how deep under the models root model directories are looked for (models/rl_phase1/wp)
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
    try:
        search = load_params(root / "params.yaml").duels.search
        options = search.options if search is not None else ""
    except ParamError:
        options = ""  # no readable params: the search defaults
    if "think=" not in options:
        options = "&".join(x for x in (options, f"think={THINK}") if x)
    return options


def searcher(root: Path = Path("."), models: list[str] | None = None, options: str | None = None) -> str | None:
    """The strongest searcher: ``search:`` over the strongest of ``models`` (default: the trained models present
    under ``root``) with ``options`` (default: ``search_options(root)``), None without a model."""
    models = present_models(root) if models is None else models
    if not models:
        return None
    return f"{PREFIX}{_strongest(models, _elo(root))}?{search_options(root) if options is None else options}"


def default_opponent(root: Path = Path(".")) -> str:
    """The strongest trained agent present by the duels' Elo (the searcher when it is rated above every model),
    else RL-WP, RL-Point, SL in that order; else heuristic."""
    models = present_models(root)
    if not models:
        return "heuristic"
    elo = _elo(root)
    return _strongest([*models, searcher(root)], elo)


def find_models(models_root: str | Path) -> list[str]:
    """The model directories under ``models_root`` (up to ``MAX_DEPTH`` levels), as specs that start with
    ``models_root`` as given: the ranked ones (``MODELS``) first, the others by name."""
    base = Path(models_root)
    found: list[str] = []
    level = [base]
    for _ in range(MAX_DEPTH):
        nxt = []
        for d in level:
            try:
                subs = sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
            except OSError:
                continue
            for p in subs:
                if _is_model_dir(p):
                    found.append(str(p))
                else:
                    nxt.append(p)
        level = nxt
    rank = {m.split("/", 1)[1]: i for i, m in enumerate(MODELS)}
    return sorted(found, key=lambda s: (rank.get(Path(s).relative_to(base).as_posix(), len(rank)), s))


def _normal(spec: str) -> str:
    """A path spec made absolute by string operations only (no filesystem access)."""
    return os.path.normpath(os.path.join(os.getcwd(), spec))


class Opponents:
    """The opponents one server offers and their agents. A model is loaded once per file version and shared
    by its games (it plays greedily: its moves depend on the observation alone, so sharing changes nothing);
    at most ``max_models`` stay loaded, the least recently used dropped first."""

    def __init__(self, default: str, models_root: str | Path = MODELS_ROOT, max_models: int = MAX_MODELS) -> None:
        self.default = default
        self.models_root = Path(models_root)
        self.max_models = max_models
        self.search_options = search_options()  # params.yaml read once, not at every request
        self._lock = threading.Lock()
        self._models: OrderedDict[tuple[str, str, int], Agent] = OrderedDict()

    def offered(self) -> list[str]:
        """The opponents a client may choose: the models under the root, the searcher over the strongest of them,
        the default, the built-in agents."""
        models = find_models(self.models_root)
        search = searcher(models=models, options=self.search_options)
        offered = models + ([search] if search else [])
        extra = [] if self.default in offered or self.default in BUILTIN else [self.default]
        return offered + extra + ["heuristic", "random"]

    def resolve(self, spec: str) -> str | None:
        """The offered opponent ``spec`` names (the same path written another way counts), else None."""
        offered = self.offered()
        if spec in offered:
            return spec
        if "\0" in spec or spec in BUILTIN:
            return None
        target = _normal(spec)
        return next((o for o in offered if o not in BUILTIN and _normal(o) == target), None)

    def load(self, spec: str, seed: int) -> Agent:
        """The agent for ``spec`` (random, heuristic, a model directory or a searcher, unchecked: ``resolve`` first);
        ``ValueError`` (one line, naming the spec) when it cannot be loaded."""
        if spec in BUILTIN:
            return load_agent(spec, seed=seed)  # cheap, and their random tie-breaks follow the game's seed
        weights = Path(model_of(spec)) / "model.pt"  # a searcher's choices, too, depend on the observation alone
        try:
            key = (_normal(str(weights)), spec, weights.stat().st_mtime_ns)
        except OSError:
            key = (_normal(str(weights)), spec, 0)  # load_agent says why in one line
        with self._lock:
            agent = self._models.get(key)
            if agent is None:
                agent = load_agent(spec, seed=seed)
                self._models[key] = agent
                while len(self._models) > self.max_models:
                    self._models.popitem(last=False)  # its games keep their reference; the pool lets it go
            self._models.move_to_end(key)
            return agent

    def loaded(self) -> int:
        """How many models the pool holds now."""
        with self._lock:
            return len(self._models)


def log(message: str) -> None:
    """One line on the server's stderr: what the operator needs and a client must not see (paths, causes)."""
    print(f"koikoi play: {message}", file=sys.stderr, flush=True)
