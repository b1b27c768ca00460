"""The round-robin of the ``duels`` stage: every pairing on the same duplicate deals, then the report.

``run_duels`` plays the ``duels`` section of params.yaml (``pipeline.params.DuelsParams``),
writes ``metrics.json``, ``table.md``, ``ratings.json``, the figures, logs one MLflow run and, when
asked (the stage, ``registry.register``), points each played model's ``champion`` alias at its
registered version, tagged with its rating.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .. import atomic
from ..agents import load_agent
from ..params import DuelsParams
from .plots import rl_curves, winrate_matrix
from .ratings import fit_bradley_terry
from .report import key_name, table_markdown
from .runner import DuelResult, duel_agents, set_torch_threads

BUILTIN = ("random", "heuristic")


class DuelsError(ValueError):
    """A missing model directory, or an attention figure no seed can draw (one line, names the culprit)."""


def check_models(cfg: DuelsParams) -> None:
    """Every model the stage needs must be a saved model directory; name all that are not."""
    from ..modelio import is_model_dir

    needed = [a for a in cfg.agents if a not in BUILTIN]
    if cfg.attention is not None:
        needed.append(cfg.attention.model)
    missing = sorted({d for d in needed if not is_model_dir(d)})
    if missing:
        raise DuelsError(f"missing model director{'y' if len(missing) == 1 else 'ies'} "
                         f"{', '.join(missing)} (model.pt + config.json): run the training stages first "
                         "(dvc repro sl_train rl_phase2) or change duels.agents")


def is_rl_vs_sl(a: str, b: str) -> bool:
    """An RL model (``rl_*`` key) paired with the SL model: the comparisons the paper's Table II is about."""
    return "sl" in {key_name(a), key_name(b)} and any(key_name(x).startswith("rl_") for x in (a, b))


def round_robin(specs: list[str], games: int, seed: int, rounds: int = 8, points: int = 30,
                progress: bool = True, torch_threads: int = 1,
                rl_vs_sl_games: int | None = None, workers: int = 0) -> dict[tuple[str, str], DuelResult]:
    """Every pairing ``specs[i]`` vs ``specs[j]`` (i < j) on the same deal seeds, keyed by agent keys.

    RL-vs-SL pairings play ``rl_vs_sl_games`` (default ``games``); their first deals are the others' deals.
    """
    results: dict[tuple[str, str], DuelResult] = {}
    if any(s not in BUILTIN for s in specs):
        import torch  # noqa: F401  (loaded anyway by the model agents; threads are set before they run)

        set_torch_threads(torch_threads)
    from ..progress import progress_bar

    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1:]]
    for k, (a, b) in enumerate(progress_bar(pairs, enabled=progress, desc="duels", unit="pairing")):
        agent_a = load_agent(a, seed=seed + 2 * k)
        agent_b = load_agent(b, seed=seed + 2 * k + 1)
        label = f"{key_name(a)} vs {key_name(b)}" if progress else None
        n = rl_vs_sl_games if rl_vs_sl_games and is_rl_vs_sl(a, b) else games
        results[(key_name(a), key_name(b))] = duel_agents(agent_a, agent_b, n, seed, rounds, points, workers, label)
    return results


def metrics_of(results: dict[tuple[str, str], DuelResult]) -> dict[str, dict]:
    keep = ("games", "win_rate", "draw_rate", "point_diff", "ci95")
    return {f"{a}_vs_{b}": {k: v for k, v in r.summary().items() if k in keep} for (a, b), r in results.items()}


def ratings_of(keys: list[str], results: dict[tuple[str, str], DuelResult], anchor: str) -> dict[str, dict]:
    games = [(a, b, r.wins + 0.5 * r.draws, r.games) for (a, b), r in results.items()]
    return fit_bradley_terry(keys, games, anchor=anchor)


def run_duels(cfg: DuelsParams, out_dir: str | Path, track: bool = True, register: bool = False) -> dict:
    """Play the round-robin and write every output into ``out_dir``; returns the metrics. ``register``
    (with ``track``) sets the ``champion`` aliases."""
    check_models(cfg)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    keys = [key_name(a) for a in cfg.agents]
    t0 = time.perf_counter()
    results = round_robin(cfg.agents, cfg.games, cfg.seed, cfg.rounds, cfg.points, torch_threads=cfg.torch_threads,
                          rl_vs_sl_games=cfg.rl_vs_sl_games, workers=cfg.workers)
    seconds = time.perf_counter() - t0
    metrics = metrics_of(results)
    ratings = ratings_of(keys, results, cfg.anchor)
    atomic.write_text(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    atomic.write_text(out / "ratings.json", json.dumps({
        "model": "Bradley-Terry, draws as half wins; 95% intervals from the Fisher information; "
                 "elo = strength * 400 / ln 10",
        "anchor": cfg.anchor, "games_per_pairing": cfg.games, "rl_vs_sl_games": cfg.rl_vs_sl_games,
        "ratings": ratings}, indent=2) + "\n")
    atomic.write_text(out / "table.md", table_markdown(keys, results, ratings))
    winrate_matrix(keys, results, out / "winrate_matrix.png")
    _, missing = rl_curves(cfg.rl_curves, out / "rl_curves.png")
    if cfg.attention is not None:
        from .attention import AttentionError, render_attention

        a = cfg.attention
        # A seed whose round 1 ends before the chosen turn cannot show it: try the next seeds.
        for s in range(a.seed, a.seed + 50):
            try:
                render_attention(a.model, s, a.turn, out / "attention.png")
                break
            except AttentionError:
                continue
        else:
            raise DuelsError(f"duels.attention: no seed in {a.seed}..{a.seed + 49} reaches turn {a.turn} "
                             "of round 1; choose an earlier turn")
    if track:
        _log_run(cfg, metrics, ratings, out, seconds, missing, register)
    return metrics


def _log_run(cfg: DuelsParams, metrics: dict, ratings: dict, out: Path, seconds: float, missing: list[str],
             register: bool) -> None:
    import mlflow

    from ..runstate import tracked_run
    from ..tracking import setup_experiment

    exp = setup_experiment("duels")
    with tracked_run(experiment_id=exp, run_name="duels") as run:
        mlflow.log_params({"agents": ",".join(cfg.agents), "games": cfg.games, "rl_vs_sl_games": cfg.rl_vs_sl_games,
                           "seed": cfg.seed,
                           "rounds": cfg.rounds, "points": cfg.points, "anchor": cfg.anchor})
        flat = {f"{pair}/{k}": v for pair, m in metrics.items() for k, v in m.items() if k != "ci95"}
        flat.update({f"{pair}/ci95_lo": m["ci95"][0] for pair, m in metrics.items()})
        flat.update({f"{pair}/ci95_hi": m["ci95"][1] for pair, m in metrics.items()})
        flat.update({f"elo/{k}": v["elo"] for k, v in ratings.items()})
        flat["seconds"] = seconds
        mlflow.log_metrics(flat)
        if missing:
            mlflow.set_tag("rl_curves_missing", ", ".join(missing))
        mlflow.log_artifacts(str(out))
        if register:
            crowned = _set_champions(cfg, ratings, run.info.run_id)
            mlflow.set_tags({f"champion/{name}": version for name, version in crowned.items()})


def _set_champions(cfg: DuelsParams, ratings: dict, run_id: str) -> dict[str, str]:
    """``champion`` on the registered version of every model played, tagged with its rating and rank."""
    from ..registry import CHAMPION, set_champions

    ranked = sorted(ratings, key=lambda k: -ratings[k]["elo"])
    tags = {a: {"duels.elo": ratings[key_name(a)]["elo"], "duels.run_id": run_id,
                "duels.rank": f"{ranked.index(key_name(a)) + 1} of {len(ranked)}"}
            for a in cfg.agents if a not in BUILTIN}
    crowned = set_champions(tags)
    for name, version in crowned.items():
        print(f"duels: {name}@{CHAMPION} -> version {version}", file=sys.stderr)
    return crowned
