"""From params to a finished session: the config, the target's objective (SL, RL or search), the run. Shared by
``koikoi tune`` and the ``tune`` stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..net.model_dir import is_model_dir
from ..params import Params, TuneParams, overridden
from ..rl.devices import searches_with_a_rollout_policy
from ..runtime import atomic
from ..runtime.paths import repo_root
from .objectives import Objective, rl_objective, sl_objective
from .space import merged_space
from .study import run_tune

SL_DATASET = "data/sl"
SL_MODEL = "models/sl"
WINPROB_TABLE = "models/winprob"
RESULTS = "results/tune"


def config_from_params(section: TuneParams, **overrides: Any) -> TuneParams:
    """The ``tune`` section (from ``load_params``) with the non-None ``overrides`` (command-line options) on top,
    checked again."""
    return overridden(section, {k: v for k, v in overrides.items() if v is not None}, "tune")


def make_objective(cfg: TuneParams, params: Params, root: Path,
                   dataset_dir: str | Path | None = None, sl_dir: str | Path | None = None,
                   source: str = "params.yaml") -> tuple[Objective, list[str]]:
    """The target's objective over the project's data, and every model file its trials read (a search study's
    searchers' and opponent's, an RL study's SL model, table and rollout policy; an SL study reads none); a clear
    error when its input is missing. ``source`` (the params file) is what messages about the space name."""
    space = merged_space(cfg.target, cfg.space.get(cfg.target), cfg.rl.variant, source, params.rl.algorithm,
                         cfg.search.rollout)
    if cfg.target == "search":
        from .search_objective import SearchObjective  # torch: loaded only when this runs

        objective = SearchObjective(cfg.search, params.duels, space, source)
        return objective, objective.models
    if cfg.target == "sl":
        ds = Path(dataset_dir) if dataset_dir else root / SL_DATASET
        if not (ds / "info.json").is_file():
            raise FileNotFoundError(f"no SL dataset at {ds}: run `dvc repro sl_dataset` first")
        return sl_objective(ds, params.sl_train, space, cfg.max_epochs, source), []
    sl = Path(sl_dir) if sl_dir else root / SL_MODEL
    if not is_model_dir(sl):
        raise FileNotFoundError(f"no SL model at {sl}: run `dvc repro sl_train` first")
    wp_table = None
    if cfg.rl.variant == "wp":
        wp_table = root / WINPROB_TABLE
        if not wp_table.exists():
            raise FileNotFoundError(f"no win-probability table at {wp_table}: run `dvc repro winprob` first")
    models = [str(sl), *([str(wp_table)] if wp_table else []),
              *([params.rl.expert.rollout] if searches_with_a_rollout_policy(params.rl, 1) else [])]
    return rl_objective(sl, params.rl, params.winprob, space, cfg.rl.loops, cfg.rl.eval_games, cfg.rl.variant,
                        wp_table, source), models


def tune(cfg: TuneParams, params: Params, root: Path | None = None, out_root: str | Path | None = None,
         dataset_dir: str | Path | None = None, sl_dir: str | Path | None = None,
         progress: bool = True, source: str = "params.yaml") -> dict[str, Any]:
    """Run one session of ``cfg`` over the project at ``root``; returns the study summary. ``source``: the
    params file ``params`` came from."""
    root = root or repo_root()
    runs_trials = cfg.trials is None or cfg.trials > 0
    objective, models = make_objective(cfg, params, root, dataset_dir, sl_dir, source) if runs_trials else (None, None)
    out = Path(out_root) if out_root else root / RESULTS
    out.mkdir(parents=True, exist_ok=True)
    # No DVC stage declares results/tune as an output (see dvc.yaml): keep it out of git by itself.
    atomic.write_text(out / ".gitignore", "*\n")
    # a search study's first trial plays the knobs it starts from, on the same deals as every other
    try:
        summary = run_tune(cfg, objective, out, progress=progress, first=getattr(objective, "first", None),
                           models=models)
    finally:
        if hasattr(objective, "close"):  # a search study's worker pool
            objective.close()
    summary["output_dir"] = str(out / cfg.study_name)
    return summary
