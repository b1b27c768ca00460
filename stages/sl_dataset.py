"""Stage sl_dataset: human records -> encoded SL samples in data/sl/, split by game into train/val."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pipeline import atomic
from pipeline.params import load_params
from pipeline.records_source import resolve_records
from pipeline.runstate import stage_exit
from pipeline.sl.dataset import build_dataset


def main() -> None:
    p = load_params().sl_dataset
    try:
        src = resolve_records(p.records_dir or None, synthetic_games=p.synthetic_games, seed=p.seed)
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"sl_dataset: error: {e}")
    print(f"sl_dataset: records from {src.path} (source: {src.kind})", file=sys.stderr)
    try:  # built beside data/sl and swapped in whole: bad records or a kill leave the old dataset as it was
        with atomic.building_dir("data/sl") as out:
            metrics = build_dataset(src.path, out, val_fraction=p.val_fraction, seed=p.seed,
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
