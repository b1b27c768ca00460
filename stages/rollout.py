"""Stage rollout: distill the searched network (``rollout.teacher``, models/rl/wp) into the searcher's rollout policy.

Usage: python -m stages.rollout MODEL_DIR RESULTS_DIR (dvc.yaml: models/rollout results/rollout). The teacher plays
``rollout.games`` games against itself; a small network learns its policy on their positions (pipeline/distill/).
metrics.json: validation agreement with the teacher's arg-max and KL (per decision type), both policies' µs per
decision on the same observations and their ratio, positions and seconds; run.json: the teacher, its inference
setup, the MLflow run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.params import Params
from pipeline.runtime.results import write_results
from stages import run_stage, stage_parser

STAGE = "rollout"


def rollout_stage(params: Params, model_dir: str | Path, results_dir: str | Path, progress: bool = True,
                  track: bool = True) -> dict:
    """``distill`` the teacher into ``model_dir``, then ``results_dir/metrics.json`` and ``run.json``; returns the
    metrics."""
    from pipeline.distill.distill import distill  # torch, lightning, mlflow: loaded only when this runs

    result = distill(params.rollout, model_dir, progress=progress, track=track)
    return write_results(results_dir, result, info_keys=("games",))  # games: the param, echoed in run.json


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, model_dir="the rollout model directory written (models/rollout)",
                        results_dir="metrics.json and run.json (results/rollout)").parse_args(argv)
    run_stage(STAGE, lambda params: rollout_stage(params, args.model_dir, args.results_dir), ValueError,
              FileNotFoundError, results=args.results_dir)


if __name__ == "__main__":
    main()
