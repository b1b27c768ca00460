"""Stage duels: round-robin duels, Table II, Bradley-Terry ratings, figures, one MLflow run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from pipeline.duel.tournament import DuelsConfig, DuelsError, run_duels
from pipeline.registry import register_enabled
from pipeline.runstate import stage_exit


def main(params_file: str = "params.yaml", out_dir: str = "results/duels") -> None:
    try:
        params = yaml.safe_load(Path(params_file).read_text()) or {}
        if "duels" not in params:
            raise DuelsError(f"{params_file} has no 'duels' section")
        metrics = run_duels(DuelsConfig.from_params(params["duels"]), out_dir, register=register_enabled(params))
    except (DuelsError, ValueError) as e:
        sys.exit(f"duels: error: {e}")
    print(json.dumps(metrics))


if __name__ == "__main__":
    with stage_exit("duels"):  # Ctrl-C: one line, exit code 130
        main(*sys.argv[1:3])
