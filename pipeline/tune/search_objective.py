"""What a ``search`` trial plays and scores: the searcher ``search:<model>?<the trial's options>`` against
``tune.search.opponent`` in a duplicate-deal duel (``duel.runner.duel_agents``, as ``koikoi duel`` plays it) on the
same deals for every trial (``tune.search.seed``), so that trials differ by their knobs only; score: its win rate.

A trial logs into its MLflow run the spec it played, the duel's win rate, interval and point difference, and the
searcher's seconds per searched decision. Each trial's win rate is picked from many on the same deals: the study's
best is flattered by that pick and is confirmed on fresh deals (``apply.confirm_line``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import optuna

from ..net.model_dir import is_model_dir
from ..params import DuelsParams
from ..params.sections import TuneSearchParams
from ..runtime.hardware import Placement, announce, play_device
from ..search.spec import OWN, SELF, parse_search, read_paths
from .objectives import PARAMS_ATTR
from .search_space import file_choices, first_trial, trial_spec

SPEC_ATTR = "spec"  # trial user attr: the search: spec it played
DUEL_ATTR = "duel"  # trial user attr: its duel's figures (the metrics below, without their prefixes)


class SearchObjective:
    """``objective(trial, run_id) -> win rate`` of the search target; ``first``: the values of the knobs the study
    starts from (the spec parser's defaults with ``tune.search.options``), its first trial, or None where the space
    cannot play them. Every agent a trial may load is loaded once here: a missing model or rollout policy is one
    line before any trial. The trials play on one worker pool, started by the first and stopped by ``close``: a
    pool per trial started its processes and compiled the networks every trial (about 20 s on 2 cores)."""

    def __init__(self, cfg: TuneSearchParams, duels: DuelsParams, space: Mapping[str, Any],
                 source: str = "params.yaml") -> None:
        from ..duel.runner import Pools  # torch: loaded only when this runs
        from ..lineup.loader import load_agent

        self.cfg, self.duels, self.space = cfg, duels, dict(space)
        self.first = first_trial(space, cfg.options)
        if not is_model_dir(cfg.model):
            raise FileNotFoundError(f"{source}: tune.search.model {cfg.model} holds no saved model (model.pt + "
                                    "config.json): train it first (dvc repro)")
        load_agent(cfg.opponent, inference="fp32")  # a bad opponent spec is one ValueError line
        searchers = file_choices(cfg.model, cfg.options, self.space)
        for spec in searchers:
            rollout = parse_search(spec)[1].rollout
            if rollout not in (SELF, OWN) and not Path(rollout).is_dir():
                raise FileNotFoundError(f"{source}: no rollout model at {rollout} (tune.search.rollout, or a "
                                        "tune.space.search.rollout choice): build it first (dvc repro), or leave "
                                        "it out")
            load_agent(spec, inference="fp32")
        # every file a trial may read: the study's key (study.open_study)
        self.models = sorted({p for s in [*searchers, cfg.opponent] for p in read_paths(s).values()})
        self.device = "cpu" if cfg.workers == 0 else play_device(duels.device, "duels.device")
        from ..net.inference import resolve_inference  # torch: loaded only when this runs

        setup = resolve_inference(duels.inference, self.device, "duels.inference")
        self.placement = announce("tune", [Placement("play", self.device, setup.setup, duels.device == "auto")])
        self.pools = Pools(cfg.workers)

    def close(self) -> None:
        """Stop the trials' worker pool."""
        self.pools.close()

    def __call__(self, trial: optuna.Trial, run_id: str) -> float:
        import mlflow

        from ..duel.runner import duel_agents, set_torch_threads
        from ..lineup.loader import load_agent
        from .space import sample

        cfg, duels = self.cfg, self.duels
        spec, query = trial_spec(cfg.model, cfg.options, sample(trial, self.space))
        trial.set_user_attr(PARAMS_ATTR, {"search": {"options": query}})  # duels.search.options, for --apply
        trial.set_user_attr(SPEC_ATTR, spec)
        mlflow.log_params({**self.placement, "agent": spec, "opponent": cfg.opponent, "games": cfg.games,
                           "seed": cfg.seed, "workers": cfg.workers, "rounds": duels.rounds, "points": duels.points})
        set_torch_threads(duels.torch_threads)
        a = load_agent(spec, seed=cfg.seed, inference=duels.inference)
        b = load_agent(cfg.opponent, seed=cfg.seed + 1, inference=duels.inference)
        result = duel_agents(a, b, cfg.games, cfg.seed, duels.rounds, duels.points, cfg.workers, progress=None,
                             device=self.device, inference=duels.inference, executor=self.pools.pool(self.device))
        figures = duel_figures(result)
        trial.set_user_attr(DUEL_ATTR, figures)
        mlflow.log_metrics({f"{'search' if k in SEARCH_KEYS else 'duel'}/{k}": v for k, v in figures.items()
                            if v is not None})
        return float(result.win_rate)


SEARCH_KEYS = ("seconds_per_search", "searched_per_game", "changed_share", "deals_per_search", "playouts_per_search")


def duel_figures(result: Any) -> dict[str, float | None]:
    """A trial's figures from its ``DuelResult``: win rate, its 95% interval, point difference, seconds, and the
    searcher's seconds per searched decision, searched decisions per game, share changed,
    deals and playouts per search."""
    lo, hi = result.ci95
    out: dict[str, float | None] = {"win_rate": round(result.win_rate, 4), "ci95_low": round(lo, 4),
                                    "ci95_high": round(hi, 4), "point_diff": round(result.point_diff, 3),
                                    "games": result.games, "seconds": round(result.seconds, 2)}
    s = result.search.get("a", {})
    n = s.get("searched", 0)
    out.update(seconds_per_search=s.get("seconds_per_search"), searched_per_game=round(n / max(result.games, 1), 2),
               changed_share=round(s.get("changed", 0) / n, 4) if n else None,
               deals_per_search=s.get("deals_per_search"), playouts_per_search=s.get("playouts_per_search"))
    return out
