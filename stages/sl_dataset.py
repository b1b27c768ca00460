"""Stage sl_dataset: human records -> encoded SL samples, split by game into train/val.

Usage: python -m stages.sl_dataset OUT_DIR RESULTS_DIR (dvc.yaml: data/sl results/sl_dataset).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.params import SLDatasetParams
from pipeline.runtime import atomic
from pipeline.sl.records_source import resolve_records
from stages import one_line_errors, run_stage, stage_parser

STAGE = "sl_dataset"


def sl_dataset(p: SLDatasetParams, out_dir: str | Path, results_dir: str | Path) -> dict:
    """Find the records (``records_source``), build the dataset in ``out_dir``, write its metrics."""
    from pipeline.sl.dataset import build_dataset  # torch: loaded only when this runs

    with one_line_errors(STAGE, FileNotFoundError, ValueError):
        src = resolve_records(p.records_dir or None, synthetic_games=p.synthetic_games, seed=p.seed)
    print(f"{STAGE}: records from {src.path} (source: {src.kind})", file=sys.stderr)
    try:  # built beside out_dir and swapped in whole: bad records or a kill leave the old dataset as it was
        with atomic.building_dir(out_dir) as out:
            metrics = build_dataset(src.path, out, val_fraction=p.val_fraction, seed=p.seed, source=src.kind)
    except ValueError as e:
        sys.exit(f"{STAGE}: error: {e}; {out_dir} left as it was")
    metrics["human_records"] = src.human
    if not src.human:
        metrics["warning"] = "no human records found: trained on heuristic self-play records"
    res = Path(results_dir)
    res.mkdir(parents=True, exist_ok=True)
    atomic.write_text(res / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    return metrics


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, out_dir="the dataset directory (data/sl)",
                        results_dir="metrics.json goes here (results/sl_dataset)").parse_args(argv)
    run_stage(STAGE, lambda params: sl_dataset(params.sl_dataset, args.out_dir, args.results_dir))


if __name__ == "__main__":
    main()
