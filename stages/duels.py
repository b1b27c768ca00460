"""Stage duels: round-robin duels, the searchers' and the phase pairings' duels, Table II, Bradley-Terry ratings,
the champion, figures, one MLflow run.

Usage: python -m stages.duels OUT_DIR (dvc.yaml: results/duels). ``duels_stage`` plays the
``duels`` section of params.yaml, writes ``metrics.json`` (numbers), ``run.json``, ``table.md``,
``ratings.json``, ``champion.json`` (``duel.champion``) and the figures, logs one MLflow run and, when asked
(``registry.register``), points each played model's ``rated`` alias at its registered version, tagged with its
rating, and registers the champion as ``koikoi-champion@champion``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pipeline.agents.specs import BUILTIN, is_model_spec, key_name, model_of
from pipeline.duel.attention import AttentionError, render_attention
from pipeline.duel.champion import CHAMPION_FILE, candidates_of, champion_doc, sl_of
from pipeline.duel.duel_report import table_markdown
from pipeline.duel.plots import rl_curves, winrate_matrix
from pipeline.duel.tournament import (
    metrics_of,
    phase_duels,
    ratings_of,
    round_robin,
    search_duels,
    strongest_model,
)
from pipeline.net.inference import resolve_inference
from pipeline.net.model_dir import is_model_dir
from pipeline.params import DuelsParams
from pipeline.runtime import atomic
from pipeline.runtime.hardware import Placement, announce, play_device
from pipeline.runtime.phase_pairs import phase_pair
from pipeline.runtime.results import write_results
from pipeline.search.spec import parse_options
from pipeline.tracking.lifecycle import tracked_run
from pipeline.tracking.registry import CHAMPION, CHAMPION_MODEL, RATED, register_champion, set_rated
from pipeline.tracking.store import setup_experiment
from stages import run_stage, stage_parser

STAGE = "duels"


class DuelsError(ValueError):
    """A missing model directory, or an attention figure no seed can draw (one line, names the culprit)."""


def check_models(cfg: DuelsParams) -> None:
    """Every model the stage needs must be a saved model directory; name all that are not."""
    needed = [model_of(a) for a in cfg.agents if a not in BUILTIN]
    needed += [m for v in cfg.phase_pairs for m in phase_pair(v)]
    if cfg.attention is not None:
        needed.append(cfg.attention.model)
    if cfg.search is not None and cfg.search.games:
        needed += [m for m in cfg.search.models if m != "strongest"]
        if "strongest" in cfg.search.models and all(a in BUILTIN for a in cfg.agents):  # now, not after the games
            raise DuelsError("duels.search.models strongest: duels.agents has no model directory to search with; "
                             "name one, or set duels.search.games to 0")
    missing = sorted({d for d in needed if not is_model_dir(d)})
    if missing:
        raise DuelsError(f"missing model director{'y' if len(missing) == 1 else 'ies'} "
                         f"{', '.join(missing)} (model.pt + config.json): run the training stages first "
                         "(dvc repro sl_train rl_phase2) or change duels.agents")
    if cfg.search is not None and cfg.search.games:
        check_search_reward(cfg)


def check_search_reward(cfg: DuelsParams) -> None:
    """A searcher rewards by the win-probability table (unless its options say ``reward=point``): say that the
    table is missing now, not after the round-robin."""
    options = parse_options(cfg.search.options)
    models = [m for s in cfg.search.models
              for m in ([a for a in cfg.agents if is_model_spec(a)] if s == "strongest" else [s])]
    table = Path(options.winprob)
    if options.reward != "point" and not table.is_file() and models:
        raise DuelsError(f"duels.search: the searcher's wp reward needs the win-probability table {table} "
                         "(run the winprob stage first), or add reward=point to duels.search.options")


def duels_stage(cfg: DuelsParams, out_dir: str | Path, track: bool = True, register: bool = False) -> dict:
    """Play the round-robin, then the searchers (``duels.search``) against their models and SL and the phase
    pairings (``duels.phase_pairs``), pick the champion and write every output into ``out_dir``; returns the
    metrics. ``register`` (with ``track``) sets the ``rated`` aliases and registers the champion."""

    check_models(cfg)
    device = play_device(cfg.device, "duels.device")
    setup = resolve_inference(cfg.inference, device, "duels.inference")
    placement = announce(STAGE, [Placement("play", device, setup.setup, cfg.device == "auto")])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    keys = [key_name(a) for a in cfg.agents]
    t0 = time.perf_counter()
    results = round_robin(cfg.agents, cfg.games, cfg.seed, cfg.rounds, cfg.points, torch_threads=cfg.torch_threads,
                          rl_vs_sl_games=cfg.rl_vs_sl_games, workers=cfg.workers, device=device,
                          inference=cfg.inference)
    ratings = ratings_of(keys, results, cfg.anchor)
    searchers = []
    if cfg.search is not None and cfg.search.games:
        s = cfg.search
        models = [strongest_model(cfg.agents, ratings) if m == "strongest" else m for m in s.models]
        for model in dict.fromkeys(models):  # strongest may name a model listed too: it plays once
            spec, searched = search_duels(model, s.options, cfg.agents, cfg.games, s.games, cfg.seed, cfg.rounds,
                                          cfg.points, cfg.workers, inference=cfg.inference)
            searchers.append(spec)
            keys.append(key_name(spec))
            results.update(searched)
    if cfg.phase_pairs:
        results.update(phase_duels(cfg.phase_pairs, cfg.rl_vs_sl_games, cfg.seed, cfg.rounds, cfg.points,
                                   cfg.workers, device=device, inference=cfg.inference))
        keys += [key_name(phase_pair(v)[1]) for v in cfg.phase_pairs]
    ratings = ratings_of(keys, results, cfg.anchor)
    seconds = time.perf_counter() - t0
    metrics = metrics_of(results)
    champion = champion_doc(candidates_of(cfg.agents, searchers), sl_of(cfg.agents), results, cfg.champion_min_games)
    if champion["spec"] is not None:
        metrics["champion"] = {k: champion[k] for k in ("win_rate", "point_diff", "ci95", "games")}
        print(f"duels: champion {champion['spec']}: win rate {champion['win_rate']:.3f} "
              f"[{champion['ci95'][0]:.3f}, {champion['ci95'][1]:.3f}] against SL over {champion['games']} games",
              file=sys.stderr)
    else:
        print(f"duels: no champion: {champion['reason']}", file=sys.stderr)
    # per pairing: win rate, point difference and interval in metrics.json; games and draw rate in run.json
    write_results(out, metrics, info_keys=("games", "draw_rate"))
    atomic.write_text(out / CHAMPION_FILE, json.dumps(champion, indent=2) + "\n")
    atomic.write_text(out / "ratings.json", json.dumps({
        "model": "Bradley-Terry, draws as half wins; 95% intervals from the Fisher information; "
                 "elo = strength * 400 / ln 10",
        "anchor": cfg.anchor, "games_per_pairing": cfg.games, "rl_vs_sl_games": cfg.rl_vs_sl_games,
        "search": {"agents": searchers, "games": cfg.search.games} if searchers else None,
        "ratings": ratings}, indent=2) + "\n")
    atomic.write_text(out / "table.md", table_markdown(keys, results, ratings))
    winrate_matrix(keys, results, out / "winrate_matrix.png")
    _, missing = rl_curves(cfg.rl_curves, out / "rl_curves.png")
    if cfg.attention is not None:
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
        _log_run(cfg, metrics, ratings, champion, out, seconds, missing, register, placement)
    return metrics


def _log_run(cfg: DuelsParams, metrics: dict, ratings: dict, champion: dict, out: Path, seconds: float,
             missing: list[str], register: bool, placement: dict) -> None:
    import mlflow

    exp = setup_experiment("duels")
    with tracked_run(experiment_id=exp, run_name="duels") as run:
        mlflow.log_params({"agents": ",".join(cfg.agents), "games": cfg.games, "rl_vs_sl_games": cfg.rl_vs_sl_games,
                           "seed": cfg.seed,
                           "rounds": cfg.rounds, "points": cfg.points, "anchor": cfg.anchor, **placement})
        if cfg.search is not None:
            mlflow.log_params({"search.models": ",".join(cfg.search.models), "search.options": cfg.search.options,
                               "search.games": cfg.search.games})
        mlflow.log_params({"phase_pairs": ",".join(cfg.phase_pairs), "champion_min_games": cfg.champion_min_games})
        if champion["spec"] is not None:
            mlflow.set_tag("champion", champion["spec"])
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
            rated = _set_rated(cfg, ratings, run.info.run_id)
            mlflow.set_tags({f"{RATED}/{name}": version for name, version in rated.items()})
            if champion["spec"] is not None:
                tags = {k: champion[k] for k in ("spec", "win_rate", "ci95", "games", "point_diff", "against")}
                version = register_champion(model_of(champion["spec"]), {**tags, "duels.run_id": run.info.run_id})
                if version is not None:
                    mlflow.set_tag(f"{CHAMPION}/{CHAMPION_MODEL}", version)
                    print(f"duels: {CHAMPION_MODEL}@{CHAMPION} -> version {version} ({champion['spec']})",
                          file=sys.stderr)


def _set_rated(cfg: DuelsParams, ratings: dict, run_id: str) -> dict[str, str]:
    """``rated`` on the registered version of every model played, tagged with its rating and rank."""
    ranked = sorted(ratings, key=lambda k: -ratings[k]["elo"])
    tags = {a: {"duels.elo": ratings[key_name(a)]["elo"], "duels.run_id": run_id,
                "duels.rank": f"{ranked.index(key_name(a)) + 1} of {len(ranked)}"}
            for a in cfg.agents if is_model_spec(a)}  # a searcher is no model; phase 1 registers none
    rated = set_rated(tags)
    for name, version in rated.items():
        print(f"duels: {name}@{RATED} -> version {version}", file=sys.stderr)
    return rated


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, out_dir="metrics, table, ratings and figures go here (results/duels)"
                        ).parse_args(argv)
    run_stage(STAGE, lambda params: duels_stage(params.duels, args.out_dir, register=params.registry.enabled),
              ValueError)  # DuelsError is one


if __name__ == "__main__":
    main()
