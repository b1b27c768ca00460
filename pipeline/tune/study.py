"""Create or resume a study and run trials: TPE (seeded), median pruning, MLflow nesting, outputs.

A study lives in an RDB storage (default: SQLite ``mlruns/optuna.db`` beside the MLflow store).
Running again with the same storage and study name resumes it: new trials join the old ones, the
sampler learns from all of them, and the MLflow parent run is reused. Several machines pointing
at one server database (``postgresql://...``) work on one study at once.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from ..params import TuneParams
from ..runtime.fingerprints import file_fingerprint
from ..runtime.progress import on_terminal
from ..tracking.store import store_dir
from ..tracking.store_lock import sqlite_lock
from . import runs
from . import study_report as report
from .objectives import Objective

STORAGE_FILE = "optuna.db"
TARGET_ATTR = "target"
MODELS_ATTR = "models"  # study user attr: {model file: fingerprint} of what its trials read (its key)
HEARTBEAT_S = 60  # a trial whose process died is marked FAIL after 2 missed beats


class TrialSeededSampler(optuna.samplers.BaseSampler):
    """TPE whose random stream is seeded from ``(seed, trial number)``, not from the session: the storage
    hands out each trial number once, so sessions running at once draw distinct trials, and a trial
    draws the same point (given the same finished trials) whichever session runs it."""

    def __init__(self, seed: int, n_startup_trials: int) -> None:
        self.seed, self.n_startup_trials = seed, n_startup_trials
        self._by_trial: dict[int, optuna.samplers.TPESampler] = {}

    def _tpe(self, trial: optuna.trial.FrozenTrial) -> optuna.samplers.TPESampler:
        if trial.number not in self._by_trial:
            seed = int(np.random.SeedSequence([self.seed, trial.number]).generate_state(1)[0])
            self._by_trial[trial.number] = optuna.samplers.TPESampler(seed=seed,
                                                                      n_startup_trials=self.n_startup_trials)
        return self._by_trial[trial.number]

    def infer_relative_search_space(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> dict:
        return self._tpe(trial).infer_relative_search_space(study, trial)

    def sample_relative(self, study: optuna.Study, trial: optuna.trial.FrozenTrial, search_space: dict) -> dict:
        return self._tpe(trial).sample_relative(study, trial, search_space)

    def sample_independent(self, study: optuna.Study, trial: optuna.trial.FrozenTrial, param_name: str,
                           param_distribution: Any) -> Any:
        return self._tpe(trial).sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        self._tpe(trial).before_trial(study, trial)

    def after_trial(self, study: optuna.Study, trial: optuna.trial.FrozenTrial, state: Any,
                    values: Any) -> None:
        self._by_trial.pop(trial.number, self._tpe(trial)).after_trial(study, trial, state, values)


def default_storage() -> str:
    return f"sqlite:///{store_dir() / STORAGE_FILE}"


def redact(url: str) -> str:
    """``url`` without its password (for logs and MLflow tags)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparsable storage url>"


def open_study(cfg: TuneParams, pruner: optuna.pruners.BasePruner | None = None,
               models: list[str] | None = None) -> optuna.Study:
    """The study ``cfg.study_name`` in ``cfg.storage``, created if missing, with a seeded TPE sampler.

    Each trial is sampled by a TPE sampler seeded from ``(seed, trial number)`` (``TrialSeededSampler``):
    a resumed study draws new points instead of repeating the first session's, and sessions running at
    once (each trial number is handed out once by the storage) never draw the same trial.
    ``ValueError`` when the study exists for another target, or (``models``: every model file its trials read) was
    run with other models: its trials scored those, and are not reused for these.
    """
    url = cfg.storage or default_storage()
    with sqlite_lock(url):  # sessions starting together on a fresh SQLite file: one creates its tables
        try:
            with warnings.catch_warnings():  # heartbeats are "experimental" since Optuna 2.9; they work
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                storage = optuna.storages.RDBStorage(url, heartbeat_interval=HEARTBEAT_S)
        except Exception as e:  # bad URL, missing driver, unreachable server
            raise ValueError(f"cannot open Optuna storage {redact(url)}: {str(e).splitlines()[0]}") from None
        study = optuna.create_study(storage=storage, study_name=cfg.study_name, direction="maximize",
                                    load_if_exists=True,
                                    pruner=pruner or optuna.pruners.MedianPruner(
                                        n_startup_trials=cfg.startup_trials, n_warmup_steps=cfg.warmup_epochs))
    owner = study.user_attrs.get(TARGET_ATTR)
    if owner is None:
        study.set_user_attr(TARGET_ATTR, cfg.target)
    elif owner != cfg.target:
        raise ValueError(f"study {cfg.study_name!r} in {redact(url)} tunes {owner!r}, not {cfg.target!r}; "
                         "pick another --study")
    if models is not None:
        _check_models(study, {m: file_fingerprint(m) for m in models}, redact(url))
    study.sampler = TrialSeededSampler(cfg.seed, cfg.startup_trials)
    return study


def _check_models(study: optuna.Study, models: dict[str, str], where: str) -> None:
    """Record the fingerprints of the model files a study's trials read (``models``), or refuse a study whose
    trials read other ones. A study made before they were recorded takes these."""
    kept = study.user_attrs.get(MODELS_ATTR)
    if kept is None:
        study.set_user_attr(MODELS_ATTR, models)
    elif kept != models:
        changed = sorted(m for m in kept.keys() | models.keys() if kept.get(m) != models.get(m))
        raise ValueError(f"study {study.study_name!r} in {where} was run with other models ({', '.join(changed)} "
                         "changed since): its trials do not score these; name a new study (tune.study, --study) or "
                         "delete the old one")


def budget_of(cfg: TuneParams) -> dict[str, Any]:
    """What each trial of a session is given: SL epochs (None: sl_train.max_epochs), RL loops and evaluation games,
    a search trial's duel (games, first deal seed, model, opponent)."""
    if cfg.target == "rl":
        return {"loops": cfg.rl.loops, "eval_games": cfg.rl.eval_games}
    if cfg.target == "search":
        return cfg.search.model_dump(include={"games", "seed", "model", "opponent"})
    return {"max_epochs": cfg.max_epochs}


def run_tune(cfg: TuneParams, objective: Objective | None, out_root: str | Path,
             pruner: optuna.pruners.BasePruner | None = None, progress: bool = True,
             first: dict[str, Any] | None = None, models: list[str] | None = None) -> dict[str, Any]:
    """Run ``cfg.trials`` more trials (or until ``cfg.timeout``) and write the outputs to
    ``out_root/<study>/``; returns the study summary. ``objective`` may be None when no trial is to run
    (``trials`` 0: only rewrite the outputs from storage). ``first``: values the study's first trials play unless
    a trial played them already (the knobs a search study starts from). ``models``: every model file the trials
    read, the study's key (``open_study``)."""
    study = open_study(cfg, pruner, models)
    url = cfg.storage or default_storage()
    tags = {"optuna.target": cfg.target, "optuna.storage": redact(url)}
    params = cfg.model_dump(exclude={"space", "storage", "trials", "timeout", "rl", "search"})
    if cfg.target in ("rl", "search"):
        params.update({f"{cfg.target}_{k}": v for k, v in getattr(cfg, cfg.target).model_dump().items()})
    out = Path(out_root) / cfg.study_name
    run_trials = cfg.trials is None or cfg.trials > 0
    if run_trials and objective is None:
        raise ValueError("run_tune: an objective is needed to run trials")
    import mlflow

    mine: list[int] = []  # this session's trial numbers (other processes may add trials to the study meanwhile)
    with runs.study_run(study, tags, params, url) as parent:
        try:
            if run_trials:
                if first:
                    study.enqueue_trial(first, skip_if_exists=True)
                tracked = runs.tracked(objective, parent)

                def counted(trial: optuna.Trial) -> float:
                    mine.append(trial.number)
                    return tracked(trial)

                study.optimize(counted, n_trials=cfg.trials, timeout=cfg.timeout,
                               callbacks=[runs.log_trial], show_progress_bar=progress and on_terminal())
        finally:  # an interrupted session still leaves its outputs
            summary = report.write_outputs(study, cfg.target, out, budget_of(cfg))
            summary["trials_this_session"] = len(mine)
            summary["session_trial_numbers"] = mine
            summary["storage"] = redact(url)
            summary["mlflow_parent_run_id"] = parent
            step = summary["trials_complete"] + summary["trials_pruned"] + summary["trials_fail"]
            mlflow.log_metrics({k: v for k, v in summary.items() if k.startswith("trials_")
                                and k != "trials_this_session"}, step=step)
            if "best_value" in summary:
                mlflow.log_metric("best_value", summary["best_value"], step=step)
                mlflow.set_tag("optuna.best_trial", str(summary["best_trial"]))
            mlflow.log_artifacts(str(out))
    return summary
