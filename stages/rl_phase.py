"""Stages rl_phase1@<reward> (against the frozen SL agent) and rl_phase2@<reward> (self-play from phase 1's model);
<reward> is point or wp.

Usage: python -m stages.rl_phase PHASE REWARD SL_DIR OUT_DIR CKPT_DIR RESULTS_DIR
[--winprob TABLE] [--first-loop FILE] [--init MODEL_DIR --init-checkpoints DIR --init-curve CSV] (the paths:
dvc.yaml).
A killed run started again resumes after its last loop from CKPT_DIR/state.pt.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.net.model_dir import need_model_dir
from pipeline.params import Params, check_variant
from pipeline.tracking.lifecycle import ending_runs
from stages import run_stage

FIRST_LOOP = "data/rl_phase1_play/first_loop.pt"  # stages.rl_phase1_play's output


@dataclass(frozen=True)
class PhasePaths:
    """What a phase reads and writes; ``init*``: phase 1's outputs (phase 2), ``winprob``: the start table (wp),
    ``first_loop``: phase 1's first loop played once for both rewards (``stages.rl_phase1_play``)."""

    sl: Path
    out: Path
    checkpoints: Path
    results: Path
    winprob: Path | None = None
    init: Path | None = None
    init_checkpoints: Path | None = None
    init_curve: Path | None = None
    first_loop: Path | None = None

    @classmethod
    def layout(cls, phase: int, variant: str, root: str | Path = ".") -> PhasePaths:
        """The paths dvc.yaml passes to ``rl_phase<phase>@<variant>`` (tests/setup checks they agree)."""
        r = Path(root)
        if phase == 1:
            return cls(r / "models/sl", r / "models/rl_phase1" / variant, r / "checkpoints/rl_phase1" / variant,
                       r / "results/rl_phase1" / variant, winprob=r / "models/winprob/winprob.json",
                       first_loop=r / FIRST_LOOP)
        return cls(r / "models/sl", r / "models/rl" / variant, r / "checkpoints/rl" / variant,
                   r / "results/rl" / variant, init=r / "models/rl_phase1" / variant,
                   init_checkpoints=r / "checkpoints/rl_phase1" / variant,
                   init_curve=r / "results/rl_phase1" / variant / "curve.csv")

    def argv(self) -> list[str]:
        """These paths as ``main``'s arguments after PHASE REWARD."""
        args = [str(p) for p in (self.sl, self.out, self.checkpoints, self.results)]
        for flag, value in (("--winprob", self.winprob), ("--first-loop", self.first_loop), ("--init", self.init),
                            ("--init-checkpoints", self.init_checkpoints), ("--init-curve", self.init_curve)):
            if value is not None:
                args += [flag, str(value)]
        return args


def phase_config(phase: int, variant: str, params: Params, paths: PhasePaths, progress: bool = True,
                 mlflow: bool = True, register: bool = False):
    """The ``PhaseConfig`` of phase 1 or 2 of one reward model, its inputs checked first (one-line
    ``FileNotFoundError``/``ValueError``)."""
    from pipeline.rl.phase_state import PhaseConfig  # torch: loaded only when this runs

    check_variant(variant)
    if phase not in (1, 2):
        raise ValueError(f"phase must be 1 or 2, got {phase}")
    need_model_dir(paths.sl, "the SL model")
    winprob_path = None
    if phase == 1 and variant == "wp":
        winprob_path = paths.winprob
        if winprob_path is None or not winprob_path.is_file():
            raise FileNotFoundError(f"no win-probability table {winprob_path}; run the winprob stage first")
    if phase == 2:
        if paths.init is None:
            raise ValueError("phase 2 needs the phase-1 model directory (--init)")
        need_model_dir(paths.init, "the phase-1 model")
    return PhaseConfig(phase=phase, variant=variant, params=params.rl, winprob=params.winprob, sl_dir=paths.sl,
                       out_dir=paths.out, ckpt_dir=paths.checkpoints, results_dir=paths.results,
                       init_dir=paths.init if phase == 2 else None,
                       init_ckpt_dir=paths.init_checkpoints if phase == 2 else None,
                       init_curve=paths.init_curve if phase == 2 else None, winprob_path=winprob_path,
                       progress=progress, mlflow=mlflow, register=register,
                       first_loop=paths.first_loop if phase == 1 else None,
                       distill=params.rollout if phase == 2 and params.rl.algorithm_of(2) == "expert_it" else None)


def rl_stage(phase: int, variant: str, params: Params, paths: PhasePaths, progress: bool = True,
             mlflow: bool = True, register: bool = False) -> dict:
    """Run (or resume) phase 1 or 2 of one reward model (``phase_config``). ``register``: phase 2 registers its
    model as ``koikoi-rl-<variant>``."""
    from pipeline.rl.training import PhaseRunner  # lightning, torch: loaded only when this runs

    cfg = phase_config(phase, variant, params, paths, progress, mlflow, register)
    with ending_runs():  # Ctrl-C: the MLflow run ends KILLED, an error: FAILED (never FINISHED)
        return PhaseRunner(cfg).run()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m stages.rl_phase", description=__doc__.splitlines()[0])
    ap.add_argument("phase", type=int, choices=(1, 2))
    ap.add_argument("variant", metavar="reward", help="point | wp")
    ap.add_argument("sl", type=Path, help="the SL model (models/sl)")
    ap.add_argument("out", type=Path, help="the model directory written")
    ap.add_argument("checkpoints", type=Path, help="state.pt, kept between runs to resume")
    ap.add_argument("results", type=Path, help="metrics.json and curve.csv")
    ap.add_argument("--winprob", type=Path, help="phase 1, wp: the starting win-probability table")
    ap.add_argument("--first-loop", type=Path, help="phase 1: the first loop's games played once for both rewards "
                    "(rl_phase1_play); a file of other params or code is not used")
    ap.add_argument("--init", type=Path, help="phase 2: phase 1's model directory")
    ap.add_argument("--init-checkpoints", type=Path, help="phase 2: phase 1's checkpoints (its Adam state)")
    ap.add_argument("--init-curve", type=Path, help="phase 2: phase 1's curve.csv (the curve goes on from it)")
    args = ap.parse_args(argv)
    paths = PhasePaths(args.sl, args.out, args.checkpoints, args.results, args.winprob, args.init,
                       args.init_checkpoints, args.init_curve, args.first_loop)
    # an unknown reward model is a ParamError: exit code 2, as a bad param
    run_stage(f"rl_phase{args.phase}", lambda params: rl_stage(args.phase, args.variant, params, paths,
                                                                register=args.phase == 2 and params.registry.enabled),
              ValueError, FileNotFoundError, name=f"rl_phase{args.phase}@{args.variant}")


if __name__ == "__main__":
    main()
