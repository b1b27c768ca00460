"""A study's outputs in ``results/tune/<study>/``: ``best_params.yaml`` (ready to merge), summary and plots."""

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import optuna
import yaml
from optuna.trial import TrialState

from ..runtime import atomic
from .objectives import PARAMS_ATTR
from .space import TARGETS

BEST_FILE = "best_params.yaml"
SUMMARY_FILE = "summary.json"
HISTORY_PNG = "optimization_history.png"
IMPORTANCE_PNG = "param_importances.png"
SHOWN_ATTRS = ("spec", "duel")  # trial user attrs the summary shows of the best trial


def counts(study: optuna.Study) -> dict[str, int]:
    states = [t.state for t in study.get_trials(deepcopy=False)]
    return {f"trials_{s.name.lower()}": states.count(s) for s in
            (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.RUNNING)}


def best_params(study: optuna.Study, target: str) -> dict[str, dict[str, Any]] | None:
    """``{section: {key: value}}`` of the best completed trial, or None when no trial completed."""
    if not any(t.state == TrialState.COMPLETE for t in study.get_trials(deepcopy=False)):
        return None
    best = study.best_trial
    return {TARGETS[target].section: dict(best.user_attrs.get(PARAMS_ATTR, best.params))}


def _save(ax: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.set_size_inches(8, 5)
    fig.tight_layout()
    atomic.savefig(fig, path, dpi=100)
    plt.close(fig)


def plots(study: optuna.Study, out: Path) -> dict[str, str]:
    """Write the plots that the study's trials allow; returns {file name: why it is missing} for the others."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never open a window
    from optuna.visualization import matplotlib as vis

    missing = {}
    complete = sum(t.state == TrialState.COMPLETE for t in study.get_trials(deepcopy=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        if complete >= 1:
            _save(vis.plot_optimization_history(study), out / HISTORY_PNG)
        else:
            missing[HISTORY_PNG] = "no completed trial"
        if complete >= 2:
            try:
                _save(vis.plot_param_importances(study), out / IMPORTANCE_PNG)
            except (ValueError, RuntimeError) as e:  # e.g. every trial had the same values
                missing[IMPORTANCE_PNG] = str(e).splitlines()[0]
        else:
            missing[IMPORTANCE_PNG] = f"needs 2 completed trials, the study has {complete}"
    for name in missing:
        (out / name).unlink(missing_ok=True)  # never leave a stale plot of an earlier session
    return missing


def write_outputs(study: optuna.Study, target: str, out: Path, budget: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write every output of the study into ``out``; returns the summary (``budget``: each trial's)."""
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"study": study.study_name, "target": target, **counts(study)}
    if budget is not None:
        summary["budget"] = budget
    best = best_params(study, target)
    best_file = out / BEST_FILE
    if best is not None:
        summary.update(best_value=round(float(study.best_value), 6), best_trial=study.best_trial.number)
        # a search trial's spec and duel figures (search_objective): what the best played, and how fast
        summary.update({f"best_{k}": study.best_trial.user_attrs[k] for k in SHOWN_ATTRS
                        if k in study.best_trial.user_attrs})
        header = (f"# Best of study {study.study_name!r}: trial {study.best_trial.number}, "
                  f"value {study.best_value:.4f}.\n# Merge into params.yaml with `koikoi tune --apply "
                  f"--study {study.study_name}`.\n")
        atomic.write_text(best_file, header + yaml.safe_dump(best, sort_keys=False))
    else:
        best_file.unlink(missing_ok=True)
    missing = plots(study, out)
    for name, why in missing.items():
        print(f"tune: no {name}: {why}", file=sys.stderr)
    summary["plots_missing"] = missing
    atomic.write_text(out / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
    return summary


def read_best(out: Path) -> dict[str, dict[str, Any]]:
    """``best_params.yaml`` of a study's output folder; ``FileNotFoundError`` with a clear message."""
    path = out / BEST_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: run `koikoi tune` for this study first "
                                "(or no trial of it completed)")
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise ValueError(f"{path}: expected {{section: {{key: value}}}}")
    return doc
