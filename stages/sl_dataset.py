"""Stage sl_dataset: human records -> encoded SL samples in data/sl/, split by game into train/val."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from pipeline import atomic
from pipeline.records_source import resolve_records
from pipeline.runstate import stage_exit
from pipeline.sl.dataset import build_dataset

KEYS = {"records_dir": str, "val_fraction": float, "seed": int, "synthetic_games": int}


def read_params() -> dict:
    p = yaml.safe_load(Path("params.yaml").read_text()).get("sl_dataset") or {}
    missing = sorted(set(KEYS) - set(p))
    unknown = sorted(set(p) - set(KEYS))
    if missing or unknown:
        sys.exit(f"sl_dataset: error: params.yaml sl_dataset: missing {missing}, unknown {unknown}")
    p["records_dir"] = p["records_dir"] or ""
    for k, t in KEYS.items():
        ok = isinstance(p[k], int | float) and not isinstance(p[k], bool) if t is float else isinstance(p[k], t)
        if not ok or isinstance(p[k], bool):
            sys.exit(f"sl_dataset: error: params.yaml sl_dataset.{k} must be {t.__name__}, got {p[k]!r}")
    if not 0 < p["val_fraction"] < 1:
        sys.exit(f"sl_dataset: error: sl_dataset.val_fraction must be in (0, 1), got {p['val_fraction']!r}")
    if p["synthetic_games"] < 2:
        sys.exit(f"sl_dataset: error: sl_dataset.synthetic_games must be >= 2, got {p['synthetic_games']!r}")
    return p


def main() -> None:
    p = read_params()
    try:
        src = resolve_records(p["records_dir"] or None, synthetic_games=p["synthetic_games"], seed=p["seed"])
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"sl_dataset: error: {e}")
    print(f"sl_dataset: records from {src.path} (source: {src.kind})", file=sys.stderr)
    try:  # built beside data/sl and swapped in whole: bad records or a kill leave the old dataset as it was
        with atomic.building_dir("data/sl") as out:
            metrics = build_dataset(src.path, out, val_fraction=float(p["val_fraction"]), seed=p["seed"],
                                    source=src.kind)
    except ValueError as e:
        sys.exit(f"sl_dataset: error: {e}; data/sl left as it was")
    metrics["human_records"] = src.human
    if not src.human:
        metrics["warning"] = "no human records found: trained on heuristic self-play records"
    res = Path("results/sl_dataset")
    res.mkdir(parents=True, exist_ok=True)
    atomic.write_text(res / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    print(json.dumps(metrics))


if __name__ == "__main__":
    with stage_exit("sl_dataset"):  # Ctrl-C: one line, exit code 130
        main()
