"""The agents a person can play and loading them; an unoffered name gets one refusal: no probing of the files."""

import gc
import json
import os
import sys
import threading
import time
import types
from collections import OrderedDict
from dataclasses import replace
from functools import partial
from pathlib import Path

from ..agents.base import Agent
from ..agents.specs import BUILTIN, PREFIX, is_search, key_name, model_of, split_spec
from ..duel.ratings_file import RATINGS, read_ratings
from ..duel.strongest import strongest
from ..engine import random_observations
from ..lineup.loader import load_agent
from ..net.model_dir import MODEL_FILE, is_model_dir
from ..params import ParamError, load_params
from ..search.spec import parse_options

# Trained models in the order the pipeline ranks them when no duel ratings say otherwise.
MODELS = ("models/rl/wp", "models/rl/point", "models/sl")
CHAMPION = "results/duels/champion.json"  # the duels stage's champion (duel.champion): the default opponent
MODELS_ROOT = "models"
MAX_NETWORKS = 6  # networks loaded at once, all games together (~100 MB each at the paper's sizes)
MAX_DEPTH = 3   # how deep under the models root model directories are looked for (models/rl_phase1/wp)


def present_models(root: Path = Path(".")) -> list[str]:
    return [m for m in MODELS if is_model_dir(root / m)]


def _strongest(candidates: list[str], ratings: dict[str, dict[str, float]]) -> str:
    # the duels' rule (duel.strongest): intervals that overlap the best's keep the order of ``candidates``
    return strongest(candidates, {c: ratings[key_name(c)] for c in candidates if key_name(c) in ratings})


def search_options(root: Path = Path("."), deals: int | None = None) -> str:
    """The options of the searcher the duels stage rates (params.yaml), with ``deals`` when given."""
    try:
        search = load_params(root / "params.yaml").duels.search
        options = search.options if search is not None else ""
    except ParamError:
        options = ""  # no readable params: the search defaults
    return with_deals(options, deals)


def _search_spec(model: str, options: str) -> str:
    return f"{PREFIX}{model}" + (f"?{options}" if options else "")


def searcher(root: Path = Path("."), models: list[str] | None = None, options: str | None = None) -> str | None:
    """The searcher over the strongest of ``models`` (default: those present), None without a model."""
    models = present_models(root) if models is None else models
    if not models:
        return None
    return _search_spec(_strongest(models, read_ratings(root)[1]), search_options(root) if options is None else options)


def with_deals(options: str, deals: int | None) -> str:
    """Search options with ``deals`` (None: as they are); options that do not parse are left for the loader."""
    if deals is None:
        return options
    try:
        return replace(parse_options(options), deals=deals).query()
    except ValueError:
        return options


def champion(root: Path = Path("."), deals: int | None = None) -> tuple[str, str] | None:
    """The duels' champion as the spec to serve and one line saying what it is; None without one present."""
    try:
        doc = json.loads((root / CHAMPION).read_text())
        spec = doc["spec"]
        figure = (f"win rate {float(doc['win_rate']):.3f} [{float(doc['ci95'][0]):.3f}, {float(doc['ci95'][1]):.3f}] "
                  f"against {doc['against']} over {int(doc['games'])} games")
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    if not isinstance(spec, str) or spec in BUILTIN or not is_model_dir(root / model_of(spec)):
        return None
    served = _search_spec(split_spec(spec)[0], with_deals(split_spec(spec)[1], deals)) if is_search(spec) else spec
    extra = f"; served with --deals {deals} per searched decision, so not as measured" if served != spec else ""
    return served, f"playing the duels' champion {spec}: {figure} ({CHAMPION}{extra})"


def default_opponent(root: Path = Path("."), deals: int | None = None) -> tuple[str, str]:
    """The opponent to serve and one line saying why: the champion, else the strongest model present, else heuristic."""
    crowned = champion(root, deals)
    if crowned is not None:
        return crowned
    models = present_models(root)
    if not models:
        return "heuristic", (f"no trained model under {(root / MODELS_ROOT).resolve()} (run it in the project "
                             "directory, or pass --opponent DIR): playing the heuristic agent")
    ratings = read_ratings(root)[1]
    spec = _strongest([*models, searcher(root, options=search_options(root, deals))], ratings)
    return spec, (f"no champion in {CHAMPION} (run the duels stage): playing {spec}, the strongest by "
                  f"{RATINGS if ratings else 'the fixed order (no ratings either)'}")


def default_judge(root: Path = Path(".")) -> str | None:
    """The searcher that judges games: the champion when it is one, else ``searcher``; None without a model."""
    crowned = champion(root)
    return crowned[0] if crowned is not None and is_search(crowned[0]) else searcher(root)


def find_models(models_root: str | Path) -> list[str]:
    """The model directories under ``models_root`` (``MAX_DEPTH`` levels), ``MODELS`` first, the others by name."""
    base = Path(models_root)
    found, level = [], [base]
    for _ in range(MAX_DEPTH):
        nxt = []
        for d in level:
            try:
                subs = sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
            except OSError:
                continue
            for p in subs:
                (found if is_model_dir(p) else nxt).append(p)
        level = nxt
    rank = {m.split("/", 1)[1]: i for i, m in enumerate(MODELS)}
    return sorted(map(str, found), key=lambda s: (rank.get(Path(s).relative_to(base).as_posix(), len(rank)), s))


def _normal(spec: str) -> str:
    """A path spec made absolute by string operations only (no filesystem access)."""
    return os.path.normpath(os.path.join(os.getcwd(), spec))


class Opponents:
    """A server's opponents. A model is loaded once per file version and shared by its games, which hold it by name
    (``ref``), so that ``max_networks`` bounds every network loaded, the least recently used dropped first."""

    def __init__(self, default: str, models_root: str | Path = MODELS_ROOT, max_networks: int = MAX_NETWORKS,
                 deals: int | None = None) -> None:
        self.default, self.models_root, self.max_networks = default, Path(models_root), max_networks
        self.search_options = search_options(deals=deals)  # params.yaml read once, not at every request
        self._lock = threading.Lock()
        self._models: OrderedDict[tuple[str, str, int], tuple[Agent, int]] = OrderedDict()  # agent, networks

    def offered(self) -> list[str]:
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
        """The agent for a resolved ``spec``; ``ValueError`` (one line). Hold a model agent for one request only."""
        if spec in BUILTIN:
            return load_agent(spec, seed=seed)  # cheap, and their random tie-breaks follow the game's seed
        weights = Path(model_of(spec)) / MODEL_FILE  # a searcher's choices, too, depend on the observation alone
        try:
            key = (_normal(str(weights)), spec, weights.stat().st_mtime_ns)
        except OSError:
            key = (_normal(str(weights)), spec, 0)  # load_agent says why in one line
        with self._lock:
            entry = self._models.get(key)
            if entry is None:
                agent = load_agent(spec, seed=seed)
                entry = self._models[key] = (agent, networks(agent))
            self._models.move_to_end(key)
            while len(self._models) > 1 and sum(n for _, n in self._models.values()) > self.max_networks:
                self._models.popitem(last=False)  # no game holds it: it is freed now
            return entry[0]

    def ref(self, spec: str, seed: int) -> Agent | partial[Agent]:
        """What a game holds: a built-in agent itself (its own tie-breaks), a model agent by name (its ``load``)."""
        agent = self.load(spec, seed)  # loaded now, so that a bad model fails at the game's creation
        return agent if spec in BUILTIN else partial(self.load, spec, seed)


def networks(agent: object) -> int:
    """The torch networks ``agent`` holds, each counted once: a walk over its attributes and containers."""
    import torch

    seen, nets, todo = set(), set(), [agent]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType, str, bytes, int, float)):
            continue
        seen.add(id(obj))
        if isinstance(obj, torch.nn.Module):
            nets.add(id(obj))
            continue  # its layers and weights are its own
        if isinstance(obj, torch.Tensor):
            continue
        todo.extend(gc.get_referents(obj))
    return len(nets)


def log(message: str) -> None:
    """One line on the server's stderr: what a client must not see (paths, causes)."""
    print(f"koikoi play: {message}", file=sys.stderr, flush=True)


def warm_up(agent: Agent) -> float:
    """Seconds of ``agent``'s first decisions, so that a compiled setup compiles before any person waits."""
    t0 = time.perf_counter()
    if agent.name not in BUILTIN:
        obs = random_observations(64)  # seed 0: 4 koi-koi calls and 7 picks among them (a test checks)
        one_each = list({o.decision: o for o in obs}.values())
        for batch in (obs[:1], (one_each + obs)[:7]):  # 1, then 7 of every type: a dynamic shape settles after two
            agent.act(batch)
    return time.perf_counter() - t0
