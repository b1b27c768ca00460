"""Stage sl_train: train the Transformer on data/sl/, write models/sl/ and results/sl/{metrics.json,curves.csv}.

Resumes from models/sl/checkpoints/last.ckpt after a kill when the params and data are unchanged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pipeline import atomic
from pipeline.params import load_params
from pipeline.runstate import stage_exit
from pipeline.sl import DECISION_NAMES
from pipeline.sl.train import train_sl


def main() -> None:
    params = load_params()
    res = Path("results/sl")
    res.mkdir(parents=True, exist_ok=True)
    try:
        r = train_sl("data/sl", "models/sl", params.sl_train, curves_path=res / "curves.csv",
                     register=params.registry.enabled)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"sl_train: error: {e}")
    info = json.loads(Path("data/sl/info.json").read_text())
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
    atomic.write_text(res / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    print(json.dumps(metrics))


if __name__ == "__main__":
    with stage_exit("sl_train"):  # Ctrl-C: one line, exit code 130
        main()
