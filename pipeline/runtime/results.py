"""What a stage writes into its results directory: ``metrics.json``, numbers only (what ``dvc metrics show`` and
``dvc metrics diff`` compare, and ``dvc exp show`` lists), and ``run.json``, the rest of its outcome (where its
data came from, MLflow run ids, why it stopped, the config it echoes). Both are small, uncached DVC outputs
committed to git beside ``dvc.lock``; only ``metrics.json`` is listed under ``metrics:`` in ``dvc.yaml``.
"""

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from . import atomic

METRICS_FILE = "metrics.json"
RUN_FILE = "run.json"


def is_number(v: Any) -> bool:
    """An int or a float, not a boolean (``dvc metrics`` shows a boolean as a word)."""
    return isinstance(v, int | float) and not isinstance(v, bool)


def split_results(doc: Mapping[str, Any], info_keys: Iterable[str] = ()) -> tuple[dict, dict]:
    """``doc`` as (metrics, info): the numeric leaves (nested mappings kept; an interval ``[low, high]`` under a
    key with ``ci`` as ``<key>_low`` and ``<key>_high``) and everything else. A key of ``info_keys`` goes to info
    whatever it holds (a number that echoes the config, not a result), at any depth."""
    keys = set(info_keys)
    metrics: dict = {}
    info: dict = {}
    for k, v in doc.items():
        if k in keys:
            info[k] = v
        elif isinstance(v, Mapping):
            m, i = split_results(v, keys)
            if m:
                metrics[k] = m
            if i:
                info[k] = i
        elif is_number(v):
            metrics[k] = v
        elif "ci" in str(k) and isinstance(v, list | tuple) and len(v) == 2 and all(map(is_number, v)):
            metrics[f"{k}_low"], metrics[f"{k}_high"] = v[0], v[1]
        else:
            info[k] = v
    return metrics, info


def write_results(results_dir: str | Path, doc: Mapping[str, Any], info_keys: Iterable[str] = ()) -> dict:
    """Write ``doc`` split by ``split_results`` into ``results_dir/metrics.json`` and ``results_dir/run.json``;
    returns the metrics."""
    metrics, info = split_results(doc, info_keys)
    out = Path(results_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out / METRICS_FILE, json.dumps(metrics, indent=2) + "\n")
    atomic.write_text(out / RUN_FILE, json.dumps(info, indent=2) + "\n")
    return metrics


def add_to_run(results_dir: str | Path, **info: Any) -> None:
    """Merge ``info`` into ``results_dir/run.json`` (written where the stage wrote none)."""
    out = Path(results_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out / RUN_FILE, json.dumps({**read_run(out), **info}, indent=2) + "\n")


def read_run(results_dir: str | Path) -> dict:
    """A stage's ``run.json`` ({} when it has none)."""
    path = Path(results_dir) / RUN_FILE
    return json.loads(path.read_text()) if path.is_file() else {}
