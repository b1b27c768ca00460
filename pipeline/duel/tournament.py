"""The round-robin of the ``duels`` stage (``stages/duels.py``): every pairing on the same duplicate
deals, the searcher's pairings after it, their metrics and their Bradley-Terry ratings."""

from __future__ import annotations

from ..agents.specs import BUILTIN, PREFIX, is_model_spec, key_name
from ..lineup.loader import load_agent
from ..runtime.phase_pairs import phase_pair
from ..runtime.progress import progress_bar
from .ratings import fit_bradley_terry
from .runner import DuelResult, duel_agents, set_torch_threads
from .strongest import strongest


def is_rl_vs_sl(a: str, b: str) -> bool:
    """An RL model (``rl_*`` key) paired with the SL model: the comparisons the paper's Table II is about."""
    return "sl" in {key_name(a), key_name(b)} and any(key_name(x).startswith("rl_") for x in (a, b))


def round_robin(specs: list[str], games: int, seed: int, rounds: int = 8, points: int = 30,
                progress: bool = True, torch_threads: int = 1,
                rl_vs_sl_games: int | None = None, workers: int = 0,
                device: str = "cpu", inference: str = "auto") -> dict[tuple[str, str], DuelResult]:
    """Every pairing ``specs[i]`` vs ``specs[j]`` (i < j) on the same deal seeds, keyed by agent keys; model-vs-model
    pairings on ``workers`` processes with their forward passes on ``device``, all in the ``inference`` setup.

    RL-vs-SL pairings play ``rl_vs_sl_games`` (default ``games``); their first deals are the others' deals.
    """
    results: dict[tuple[str, str], DuelResult] = {}
    if any(s not in BUILTIN for s in specs):
        import torch  # noqa: F401  (loaded anyway by the model agents; threads are set before they run)

        set_torch_threads(torch_threads)

    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1:]]
    for k, (a, b) in enumerate(progress_bar(pairs, enabled=progress, desc="duels", unit="pairing")):
        agent_a = load_agent(a, seed=seed + 2 * k, inference=inference)
        agent_b = load_agent(b, seed=seed + 2 * k + 1, inference=inference)
        label = f"{key_name(a)} vs {key_name(b)}" if progress else None
        n = rl_vs_sl_games if rl_vs_sl_games and is_rl_vs_sl(a, b) else games
        results[(key_name(a), key_name(b))] = duel_agents(agent_a, agent_b, n, seed, rounds, points, workers, label,
                                                          device, inference)
    return results


def strongest_model(specs: list[str], ratings: dict[str, dict]) -> str:
    """The strongest model directory of ``specs`` (not a built-in agent, not a searcher) by ``strongest``: among
    those whose intervals overlap the best rated one's, the first in ``specs`` (``duels.agents``' order)."""
    models = [s for s in specs if is_model_spec(s)]
    if not models:
        raise ValueError("duels.search.models strongest: duels.agents has no model directory")
    return strongest(models, {m: ratings[key_name(m)] for m in models if key_name(m) in ratings})


def search_duels(model: str, options: str, specs: list[str], games: int, sl_games: int, seed: int, rounds: int = 8,
                 points: int = 30, workers: int = 0, progress: bool = True,
                 inference: str = "auto") -> tuple[str, dict[tuple[str, str], DuelResult]]:
    """The searcher over ``model`` against ``model`` (``games``) and against SL (``models/sl``'s key among ``specs``:
    ``sl_games``, a champion candidate's duel), on the round-robin's first deals. Returns its spec and results."""
    spec = f"{PREFIX}{model}?{options}" if options else f"{PREFIX}{model}"
    sl = [(s, sl_games) for s in specs if key_name(s) == "sl"]
    opponents = sl if sl and key_name(model) == "sl" else [(model, games), *sl]
    results = {}
    for k, (other, n) in enumerate(opponents):
        searcher = load_agent(spec, seed=seed + 1000 + 2 * k, inference=inference)  # seeds apart from the round-robin's
        agent = load_agent(other, seed=seed + 1001 + 2 * k, inference=inference)
        label = f"{key_name(spec)} vs {key_name(other)}" if progress else None
        results[(key_name(spec), key_name(other))] = duel_agents(searcher, agent, n, seed, rounds, points,
                                                                 workers, label, inference=inference)
    return spec, results


def phase_duels(variants: list[str], games: int, seed: int, rounds: int = 8, points: int = 30, workers: int = 0,
                progress: bool = True, device: str = "cpu",
                inference: str = "auto") -> dict[tuple[str, str], DuelResult]:
    """Each variant's final model against its phase-1 model (``phase_pairs.phase_pair``), ``games`` games each."""
    results = {}
    for k, variant in enumerate(variants):
        final, first = phase_pair(variant)
        a = load_agent(final, seed=seed + 2000 + 2 * k, inference=inference)  # seeds apart from the others'
        b = load_agent(first, seed=seed + 2001 + 2 * k, inference=inference)
        label = f"{key_name(final)} vs {key_name(first)}" if progress else None
        results[(key_name(final), key_name(first))] = duel_agents(a, b, games, seed, rounds, points, workers, label,
                                                                  device, inference)
    return results


def metrics_of(results: dict[tuple[str, str], DuelResult]) -> dict[str, dict]:
    keep = ("games", "win_rate", "draw_rate", "point_diff", "ci95")
    return {f"{a}_vs_{b}": {k: v for k, v in r.summary().items() if k in keep} for (a, b), r in results.items()}


def ratings_of(keys: list[str], results: dict[tuple[str, str], DuelResult], anchor: str) -> dict[str, dict]:
    games = [(a, b, r.wins + 0.5 * r.draws, r.games) for (a, b), r in results.items()]
    return fit_bradley_terry(keys, games, anchor=anchor)
