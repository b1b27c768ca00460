"""Stage sl_train: train the Transformer on the SL dataset; the model, its metrics and its curves.

Usage: python -m stages.sl_train DATA_DIR MODEL_DIR CKPT_DIR RESULTS_DIR
(dvc.yaml: data/sl models/sl checkpoints/sl results/sl). A killed run started again resumes from
CKPT_DIR/last.ckpt when the params and data are unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pipeline.params import Params
from pipeline.runtime.results import write_results
from pipeline.sl import DECISION_NAMES
from stages import one_line_errors, run_stage, stage_parser

STAGE = "sl_train"


def sl_train(params: Params, data_dir: str | Path, model_dir: str | Path, ckpt_dir: str | Path,
             results_dir: str | Path) -> dict:
    """``train_sl`` on ``data_dir`` (registered when ``registry.register``), then the DVC metrics in
    ``results_dir/metrics.json`` (numbers; ``run.json``: the rest) and the epoch curves in
    ``results_dir/curves.csv``."""
    from pipeline.sl.train import train_sl  # lightning, torch: loaded only when this runs

    res = Path(results_dir)
    res.mkdir(parents=True, exist_ok=True)
    with one_line_errors(STAGE, ValueError, FileNotFoundError):
        r = train_sl(data_dir, model_dir, params.sl_train, curves_path=res / "curves.csv",
                     register=params.registry.enabled, ckpt_dir=ckpt_dir)
    info = json.loads((Path(data_dir) / "info.json").read_text())
    metrics = {
        "val": {"acc": round(r["val/acc"], 4), **{f"acc_{n}": round(r[f"val/acc_{n}"], 4) for n in DECISION_NAMES
                                                   if f"val/acc_{n}" in r},
                "loss": round(r["val/loss"], 4)},
        "samples": {"val": r["val_samples"], **{f"val_{n}": r[f"val_samples_{n}"] for n in DECISION_NAMES},
                    "train": r["train_samples"]},
        "val_games": info.get("val_games"),
        "best_epoch": r["best_epoch"],
        "epochs": r["epochs"],
        "seconds": r["seconds"],
        "threads": r["threads"],
        "dataset_source": info.get("source"),
        "mlflow_run_id": r.get("run_id"),
    }
    # the sample counts, split sizes and threads echo the dataset and the config; ids and sources are words
    write_results(res, metrics, info_keys=("samples", "val_games", "threads"))
    return metrics


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, data_dir="the SL dataset (data/sl)",
                        model_dir="the model directory written (models/sl)",
                        ckpt_dir="Lightning checkpoints, kept between runs to resume (checkpoints/sl)",
                        results_dir="metrics.json, run.json and curves.csv (results/sl)").parse_args(argv)
    run_stage(STAGE, lambda params: sl_train(params, args.data_dir, args.model_dir, args.ckpt_dir, args.results_dir),
              results=args.results_dir)


if __name__ == "__main__":
    main()
