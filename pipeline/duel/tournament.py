"""The duels of the ``duels`` stage (``duel.duels_stage``): the round-robin, the searchers' and the phase pairings'
duels, every pairing on the same duplicate deals; the pairings that decide something (a champion candidate
against SL, phase 2 against phase 1) by the sequential test, the others for a fixed number of games; their
metrics and their Bradley-Terry ratings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..agents.specs import BUILTIN, PREFIX, is_model_spec, key_name
from ..lineup.loader import load_agent
from ..net.inference import Inference, resolve_inference
from ..runtime.phase_pairs import phase_pair
from ..runtime.progress import progress_bar
from ..search.spec import play_device_of
from ..selfplay.executor import Executor
from .ratings import fit_bradley_terry
from .runner import DuelResult, Pools, duel_agents, set_torch_threads
from .sprt import Sprt
from .strongest import strongest

SL = "sl"  # the key of the agent every candidate is measured against


@dataclass(frozen=True)
class Arena:
    """How the stage's duels are played: deals from ``seed``, the game's rules, where and how the networks run,
    and the sequential test (``sprt``, at most ``max_games``) of the duels that decide."""

    seed: int
    rounds: int = 8
    points: int = 30
    workers: int = 0
    device: str = "cpu"
    inference: Inference | str = "auto"
    sprt: Sprt | None = None
    max_games: int = 2000
    progress: bool = True
    cpu_inference: Inference | None = None  # set where ``device`` is an auto GPU: searchers with a rollout policy
    # play their pairings on the CPUs in this setup (``search.spec.play_device_of``)
    pools: Pools = field(init=False, compare=False, repr=False)  # the duels' worker pools, one per device

    def __post_init__(self) -> None:
        object.__setattr__(self, "pools", Pools(self.workers))  # frozen: set once, here

    def pool(self, device: str) -> Executor | None:
        """The worker pool of the duels on ``device`` (``Pools.pool``); None without workers."""
        return self.pools.pool(device)

    def close(self) -> None:
        """Stop the worker pools."""
        self.pools.close()

    def placement(self, a: str, b: str) -> tuple[str, Inference]:
        """Where and how a duel of ``a`` and ``b`` runs its networks: the arena's device and setup, or the CPUs'
        (``cpu_inference``) for a searcher with a rollout policy where auto chose a GPU."""
        if self.cpu_inference is not None and play_device_of((a, b), self.device, auto=True) == "cpu":
            return "cpu", self.cpu_inference
        return self.device, resolve_inference(self.inference, self.device)

    def duel(self, a: str, b: str, games: int, agent_seed: int, decide: bool = False, seed: int | None = None,
             label: tuple[str, str] | None = None) -> DuelResult:
        """``a`` against ``b``: ``games`` games, or with ``decide`` a sequential duel of at most ``max_games``; the
        agents seeded from ``agent_seed``, the deals from ``seed`` (default the arena's)."""
        device, inference = self.placement(a, b)
        agent_a = load_agent(a, seed=agent_seed, inference=inference)
        agent_b = load_agent(b, seed=agent_seed + 1, inference=inference)
        names = label or (key_name(a), key_name(b))
        return duel_agents(agent_a, agent_b, self.max_games if decide else games,
                           self.seed if seed is None else seed, self.rounds, self.points, self.workers,
                           f"{names[0]} vs {names[1]}" if self.progress else None, device, inference,
                           sprt=self.sprt if decide else None, executor=self.pool(device))


def is_candidate(spec: str) -> bool:
    """A champion candidate: a model directory or a searcher, not a built-in agent, not SL (the yardstick)."""
    return spec not in BUILTIN and key_name(spec) != SL


def round_robin(specs: list[str], games: int, arena: Arena, keys: Mapping[str, str], torch_threads: int = 1
                ) -> dict[tuple[str, str], DuelResult]:
    """Every pairing ``specs[i]`` vs ``specs[j]`` (i < j) on the same deal seeds, keyed by ``keys``. A candidate
    paired with SL plays first (A) in a sequential duel that decides whether it beats SL; every other pairing
    plays ``games``. Model-vs-model pairings run on the arena's workers and device."""
    results: dict[tuple[str, str], DuelResult] = {}
    if any(s not in BUILTIN for s in specs):
        import torch  # noqa: F401  (loaded anyway by the model agents; threads are set before they run)

        set_torch_threads(torch_threads)
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1:]]
    for k, (a, b) in enumerate(progress_bar(pairs, enabled=arena.progress, desc="duels", unit="pairing")):
        decide = SL in (key_name(a), key_name(b)) and (is_candidate(a) or is_candidate(b))
        if decide and key_name(a) == SL:
            a, b = b, a  # the candidate is A: the test is of its win rate
        results[(keys[a], keys[b])] = arena.duel(a, b, games, arena.seed + 2 * k, decide, label=(keys[a], keys[b]))
    return results


def strongest_model(specs: list[str], ratings: dict[str, dict]) -> str:
    """The strongest model directory of ``specs`` (not a built-in agent, not a searcher) by ``strongest``: among
    those whose intervals overlap the best rated one's, the first in ``specs`` (``duels.agents``' order)."""
    models = [s for s in specs if is_model_spec(s)]
    if not models:
        raise ValueError("duels.search.models strongest: duels.agents has no model directory")
    return strongest(models, {m: ratings[key_name(m)] for m in models if key_name(m) in ratings})


def search_spec(model: str, options: str) -> str:
    return f"{PREFIX}{model}?{options}" if options else f"{PREFIX}{model}"


def search_duel(spec: str, model: str, games: int, arena: Arena, keys: Mapping[str, str]
                ) -> dict[tuple[str, str], DuelResult]:
    """The searcher ``spec`` against its own network ``model``, ``games`` games on the round-robin's first deals: its
    row where there is no SL (no yardstick, so no champion's duels). With SL the searcher's duels are the champion's
    (``duels_stage._champion``): one against the best so far, and its confirmation against SL when it is picked."""
    return {(keys[spec], keys[model]): arena.duel(spec, model, games, arena.seed + 1000, False,
                                                  label=(keys[spec], keys[model]))}


def phase_duels(variants: list[str], arena: Arena) -> dict[tuple[str, str], DuelResult]:
    """Each variant's final model against its phase-1 model (``phase_pairs.phase_pair``), a sequential duel each."""
    results = {}
    for k, variant in enumerate(variants):
        final, first = phase_pair(variant)
        results[(key_name(final), key_name(first))] = arena.duel(final, first, 0, arena.seed + 2000 + 2 * k,
                                                                 decide=True)
    return results


def metrics_of(results: dict[tuple[str, str], DuelResult]) -> dict[str, dict]:
    keep = ("games", "win_rate", "draw_rate", "point_diff", "ci95", "sprt")  # sprt: run.json's
    return {f"{a}_vs_{b}": {k: v for k, v in r.summary().items() if k in keep} for (a, b), r in results.items()}


def ratings_of(keys: list[str], results: dict[tuple[str, str], DuelResult], anchor: str) -> dict[str, dict]:
    games = [(a, b, r.wins + 0.5 * r.draws, r.games) for (a, b), r in results.items()]
    return fit_bradley_terry(keys, games, anchor=anchor)
