"""Stage rl_phase1_play: phase 1's first loop, played once for both reward models (``pipeline.rl.first_loop``).

Usage: python -m stages.rl_phase1_play SL_DIR OUT_FILE --winprob TABLE --results DIR (the paths: dvc.yaml). Each
``rl_phase1@<reward>`` fits its first loop on its samples in OUT_FILE instead of playing the games again.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pipeline.params import Params
from pipeline.selfplay.rewards import REWARD_MODELS
from stages import run_stage
from stages.rl_phase import PhasePaths, phase_config


def play_stage(params: Params, sl: Path, out: Path, winprob: Path, progress: bool = True) -> dict:
    """Play phase 1's first loop once for every reward model and write each one's samples to ``out``; where the
    games differ between them (``first_loop.same_games``), ``out`` holds none and each phase plays its own."""
    from pipeline.rl import first_loop  # torch: loaded only when this runs
    from pipeline.rl.training import PhaseRunner

    cfgs = {v: phase_config(1, v, params, replace(PhasePaths.layout(1, v), sl=sl, winprob=winprob),
                            progress=progress, mlflow=False) for v in REWARD_MODELS}
    out.parent.mkdir(parents=True, exist_ok=True)
    if params.rl.algorithm == "expert_it":  # its searcher plays by each reward: the games differ, nothing to share
        first_loop.write(out, {}, None)
        print("rl_phase1_play: nothing to share (rl.algorithm expert_it searches by each reward)", flush=True)
        return {"shared": False}
    first = PhaseRunner(cfgs[REWARD_MODELS[0]])  # its executor plays for all
    try:
        runners = {v: first if v == REWARD_MODELS[0] else PhaseRunner(c, first.executor) for v, c in cfgs.items()}
        jobs, fingerprints = {}, {}
        for v, r in runners.items():
            jobs[v], fingerprints[v] = r.first_loop_job()
        t0 = time.perf_counter()
        shared = first_loop.shared_play(jobs, lambda job: first.play(job, "phase 1 first loop play")[0])
        seconds = time.perf_counter() - t0
    finally:
        first.executor.close()
    first_loop.write(out, fingerprints, shared)
    if shared is None:
        print("rl_phase1_play: the reward models' first loops play different games (rl.algorithm); "
              "each phase plays its own", flush=True)
        return {"shared": False}
    return {"shared": True, "games": len(next(iter(jobs.values())).games), "seconds": round(seconds, 1),
            "samples": {v: len(r.samples) for v, r in shared.items()}}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m stages.rl_phase1_play", description=__doc__.splitlines()[0])
    ap.add_argument("sl", type=Path, help="the SL model (models/sl)")
    ap.add_argument("out", type=Path, help="the file written: each reward model's first-loop samples")
    ap.add_argument("--winprob", type=Path, required=True, help="the starting win-probability table (RL-WP)")
    ap.add_argument("--results", type=Path, required=True, help="run.json: the stage's time (results/rl_phase1_play)")
    args = ap.parse_args(argv)
    run_stage("rl_phase1_play", lambda params: play_stage(params, args.sl, args.out, args.winprob),
              ValueError, FileNotFoundError, results=args.results)


if __name__ == "__main__":
    main()
