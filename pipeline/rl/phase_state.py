"""What an RL phase is given (``PhaseConfig``) and what it keeps between loops (``LoopCounters``), and how a phase
starts: afresh from its starting weights, or from its checkpoint when its fingerprint still matches: the params, the
starting files, the devices and the code that decides the games and the weights (``code_fingerprint``).

``<ckpt_dir>/state.pt`` (the stages: ``checkpoints/rl_phase1/<variant>``, outside the model directory)
holds the weights, the Adam state and ``LoopCounters`` (loop and game counters, the curve rows, the evaluation
history, the win-probability table, the MLflow run id and the fingerprint); ``PhaseRunner`` rewrites it
atomically after every loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from ..net.model import KoiKoiNet
from ..net.modelio import load_config, load_model
from ..params import RLParams, RolloutParams, WinProbParams
from ..runtime.curves import read_curve
from ..runtime.fingerprints import file_fingerprint, fingerprint
from ..tracking.resume import read_training_state, resume_point
from ..value.winprob import WinProbTable
from .algorithms import Algorithm, algorithm_for
from .devices import searches_with_a_rollout_policy
from .learner import PolicyLearner

CURVE_COLUMNS = ("loop", "games", "seconds", "win_rate", "point_diff", "eval_games", "ci_low", "ci_high", "vs_phase1",
                 "vs_phase1_low", "vs_phase1_high")  # seconds: CPU seconds of training so far; vs_phase1: phase 2's
STATE_FILE = "state.pt"
CURVE_FILE = "curve.csv"
RUN_RECORD = "mlflow_run.json"  # the MLflow run id, written as the run starts (state.pt comes a loop later)


@dataclass
class PhaseConfig:
    """One training phase: where it starts from, what it writes."""

    phase: int  # 1: against SL, 2: self-play
    variant: str  # reward model: point | wp
    params: RLParams
    winprob: WinProbParams
    sl_dir: Path  # the SL agent: phase-1 opponent, evaluation baseline, and the init weights (init: sl)
    out_dir: Path  # model dir of this phase: model.pt + config.json
    results_dir: Path  # curve.csv, metrics.json, run.json
    ckpt_dir: Path  # state.pt and the run record (kept between runs: a killed run resumes)
    init_dir: Path | None = None  # phase 2: the phase-1 model dir
    init_ckpt_dir: Path | None = None  # phase 2: phase 1's checkpoints (Adam's moments go on from them)
    init_curve: Path | None = None  # phase 2: phase 1's curve.csv (the curve goes on from its rows)
    winprob_path: Path | None = None  # RL-WP: the starting table
    progress: bool = True
    mlflow: bool = True
    register: bool = False  # phase 2 registers its model (koikoi-rl-<variant>); only the DVC stage asks
    execution: dict | None = None  # how it runs here, as it changes the games (devices.execution_key; PhaseRunner)
    first_loop: Path | None = None  # phase 1: the first loop's games played once for both rewards (rl.first_loop)
    distill: RolloutParams | None = None  # phase 2 (expert_it): how its rollout policy is distilled again each loop

    @property
    def budget(self) -> int:
        return self.params.phase1.loops if self.phase == 1 else getattr(self.params.phase2.loops, self.variant)


@dataclass
class LoopCounters:
    fingerprint: str
    loop: int = 0  # loops completed in this phase
    games: int = 0  # training games played in this phase
    loop_offset: int = 0  # loops of earlier phases (the curve's and epsilon's clock)
    games_offset: int = 0
    curve: list[dict] = field(default_factory=list)
    evals: list[float] = field(default_factory=list)  # win rates of this phase's evaluations after training
    stop_reason: str = ""
    run_id: str | None = None
    winprob: dict | None = None
    final: dict | None = None  # the end-of-phase evaluation (rl.final_eval_games), once made
    epsilon: float = 0.0
    seconds: float = 0.0  # wall-clock seconds of this phase's loops
    cpu_seconds: float = 0.0  # CPU seconds of training (play and fit, every process) since phase 1 began


def loop_seed(params: RLParams, phase: int, loop: int, stream: int) -> int:
    """Distinct deterministic seeds per (seed, phase, loop, stream); game i adds i (< 10**6)."""
    return (((params.seed * 10 + phase) * 100_000 + loop) * 10 + stream) * 10**6


EVAL_PHASE = 9  # loop_seed's phase of the evaluations against SL: no training phase, so never a training deal


def eval_seed(params: RLParams, final: bool) -> int:
    """The seed of an evaluation against SL: the curve's (the same deals at every loop, in both phases), or
    the end-of-phase one (``final``: deals of its own)."""
    return loop_seed(params, EVAL_PHASE, 1 if final else 0, 0)


# The code that decides a phase's games and weights: its checkpoint is resumed only by the same code. DVC reruns a
# phase when any of it changes, and resuming the old code's loops would ship a model no one version of it makes.
# The packages and modules of the phase's DVC deps less what only logs, prints or places the work (tracking,
# progress, hardware: the devices are in the fingerprint as resolved).
RESULT_CODE = ("agents", "distill", "engine", "net", "params", "rl", "rollout", "search", "selfplay", "value",
               "duel/sprt.py", "duel/stats.py", "runtime/train_guards.py", "sl/packing.py")
_PACKAGE = Path(__file__).resolve().parents[1]
DISTILL_FIELDS = ("hidden", "layers", "epochs", "lr", "batch_size", "seed")  # what phase 2 reads of the rollout section


def code_fingerprint(root: Path = _PACKAGE, parts: tuple[str, ...] = RESULT_CODE) -> str:
    """A short hash of the sources of ``parts`` (packages and modules under ``root``, the ``pipeline`` package):
    every ``.py`` file's path and bytes."""
    files = [f for part in parts for f in ((root / part).rglob("*.py") if (root / part).is_dir() else [root / part])]
    return fingerprint({f.relative_to(root).as_posix(): file_fingerprint(f) for f in files})


def phase_fingerprint(cfg: PhaseConfig) -> str:
    """The fingerprint of a phase: its params, every model it starts from or plays with (SL, phase 1's, the rollout
    policy of searched targets: each model directory's files), (phase 2) how its rollout policy is distilled, (RL-WP)
    the starting table, the devices and the code (``code_fingerprint``)."""
    extra = {"sl": file_fingerprint(cfg.sl_dir), "code": code_fingerprint()}
    if cfg.distill is not None:
        extra["distill"] = cfg.distill.model_dump(include=set(DISTILL_FIELDS))
    if cfg.execution is not None:
        extra["execution"] = cfg.execution
    if cfg.init_dir is not None:
        extra["init"] = file_fingerprint(cfg.init_dir)
    if searches_with_a_rollout_policy(cfg.params, cfg.phase):
        extra["rollout"] = file_fingerprint(cfg.params.expert.rollout)
    if cfg.variant == "wp":
        extra["winprob_start"] = file_fingerprint(cfg.winprob_path) if cfg.winprob_path else "-"
    return cfg.params.fingerprint(cfg.phase, cfg.variant, extra)


def _same_weights(state_dict: dict, net: nn.Module) -> bool:
    """Whether ``state_dict`` holds exactly ``net``'s weights."""
    mine = net.state_dict()
    return mine.keys() == state_dict.keys() and all(torch.equal(mine[k], state_dict[k]) for k in mine)


def initial_state(cfg: PhaseConfig, fp: str) -> tuple[nn.Module, LoopCounters, dict | None, list]:
    """Fresh start: the starting weights, state, optimizer state and replay (phase 2: phase 1's)."""
    state = LoopCounters(fingerprint=fp)
    opt_state, meta, replay = None, {}, []
    algorithm = algorithm_for(cfg.params, cfg.phase, cfg.distill)
    if cfg.phase == 1:
        net = algorithm.initial_net(load_model(cfg.sl_dir)[0], cfg.params)
    else:
        if cfg.init_dir is None:
            raise ValueError("phase 2 needs the phase-1 model directory")
        _, meta = load_model(cfg.init_dir)
        net = algorithm.learned_net(cfg.init_dir)
        state.loop_offset = int(meta.get("global_loops", 0))
        state.games_offset = int(meta.get("global_games", 0))
        if cfg.init_curve is not None and cfg.init_curve.is_file():
            state.curve = read_curve(cfg.init_curve)
            state.cpu_seconds = float(state.curve[-1].get("seconds") or 0.0) if state.curve else 0.0
        prev = cfg.init_ckpt_dir / STATE_FILE if cfg.init_ckpt_dir is not None else None
        if prev is not None and prev.is_file() and (
                ck := read_training_state(prev, "rl_phase2", set_aside=False)) is not None:
            opt_state = ck.get("optimizer")  # continue Adam's moments across the phase boundary
            if _same_weights(ck["model"], net):  # phase 1's final evaluation, on the deals phase 2's would play:
                state.final = ck["state"].get("final")  # kept while phase 2 trains no loop (cleared when it does)
    if cfg.variant == "wp":
        if cfg.phase == 2 and "winprob" in meta:  # phase 1's table, kept in its model's meta
            table = WinProbTable.from_dict(meta["winprob"])
        else:
            if cfg.winprob_path is None:
                raise ValueError("the wp reward model needs a win-probability table (run the winprob stage)")
            table = WinProbTable.load(cfg.winprob_path)
        state.winprob = table.to_dict()
    return net, state, opt_state, replay


def start_or_resume(cfg: PhaseConfig, algorithm: Algorithm) -> tuple[PolicyLearner, LoopCounters, bool, list]:
    """The learner (fitting with ``algorithm``, its state restored from a checkpoint), state and packed replay
    (``experience.Replay``) to go on from, and whether they come from this phase's checkpoint."""
    cfg.ckpt_dir.mkdir(parents=True, exist_ok=True)
    fp = phase_fingerprint(cfg)
    ck = resume_point(cfg.ckpt_dir / STATE_FILE, fp, f"rl_phase{cfg.phase}", lambda c: c["state"]["fingerprint"],
                      read_training_state, usable=lambda c: c["state"]["loop"] <= cfg.budget)
    if ck is not None:
        # the SL architecture only (eval mode, as load_model gives it): the checkpoint's weights replace its own
        algorithm.load_state(ck.get("algorithm", {}))
        net = algorithm.initial_net(KoiKoiNet(load_config(cfg.sl_dir)[0]).eval(), cfg.params)
        net.load_state_dict(ck["model"])
        learner = PolicyLearner(net, lr=cfg.params.lr, algorithm=algorithm, augment=cfg.params.augment)
        learner.configure_optimizers().load_state_dict(ck["optimizer"])
        return learner, LoopCounters(**ck["state"]), True, ck.get("replay", [])
    net, state, opt_state, replay = initial_state(cfg, fp)
    learner = PolicyLearner(net, lr=cfg.params.lr, algorithm=algorithm, augment=cfg.params.augment)
    if opt_state is not None:
        learner.configure_optimizers().load_state_dict(opt_state)
    return learner, state, False, replay
