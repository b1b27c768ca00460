"""Stage duels: round-robin duels, Table II, Bradley-Terry ratings, figures, one MLflow run."""

from __future__ import annotations

import json
import sys

from pipeline.duel.tournament import DuelsError, run_duels
from pipeline.params import load_params
from pipeline.runstate import stage_exit


def main(params_file: str = "params.yaml", out_dir: str = "results/duels") -> None:
    params = load_params(params_file)
    try:
        metrics = run_duels(params.duels, out_dir, register=params.registry.enabled)
    except (DuelsError, ValueError) as e:
        sys.exit(f"duels: error: {e}")
    print(json.dumps(metrics))


if __name__ == "__main__":
    with stage_exit("duels"):  # Ctrl-C: one line, exit code 130
        main(*sys.argv[1:3])
