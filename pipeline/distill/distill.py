"""What the ``rollout`` stage runs: the teacher's games, the fit of a ``RolloutNet`` to its policy, the figures it is
judged by and the rollout model directory, tracked in MLflow experiment ``rollout``."""

import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import mlflow
import torch
from lightning.pytorch.loggers import MLFlowLogger

from ..agents.model_agent import NetPlayer
from ..net.inference import checked, resolve_inference
from ..net.model_dir import need_model_dir
from ..net.modelio import load_model
from ..params import RolloutParams, dotted
from ..rollout.network import RolloutConfig, save_rollout
from ..rollout.rollout_player import RolloutPlayer
from ..runtime.hardware import Placement, announce, placement_params
from ..runtime.progress import progress_bar
from ..runtime.results import is_number
from ..tracking.lifecycle import tracked_run
from ..tracking.store import setup_experiment, tracking_uri
from .fit import fit_rollout, judge_net
from .speed import us_per_decision
from .teacher_games import teacher_positions

EXPERIMENT = "rollout"
TIMING_BATCH = 64  # observations per timed call: the searcher's playouts batch about this many


def train_game_count(games: int, val_fraction: float) -> int:
    """The number of training games: the first ones; the rest (at least one, at most ``games - 1``) validate."""
    val = min(games - 1, max(1, round(games * val_fraction)))
    return games - val


def distill(p: RolloutParams, model_dir: str | Path, *, progress: bool = True, track: bool = True) -> dict[str, Any]:
    """Distill ``p.teacher`` into a rollout policy written to ``model_dir``; returns the stage's results."""
    t0 = time.perf_counter()
    need_model_dir(p.teacher, "rollout.teacher")
    setup = resolve_inference(p.inference, "cpu", "rollout.inference")
    placements = [Placement("play", "cpu", setup.setup, p.inference == "auto"), Placement("train", "cpu", "32-true")]
    placement = announce("rollout", placements) if progress else placement_params(placements)
    torch.set_num_threads(p.threads)
    teacher_net, _ = load_model(p.teacher)
    setup = checked(setup, teacher_net)
    teacher = NetPlayer(teacher_net, inference=setup)
    n_train = train_game_count(p.games, p.val_fraction)
    with progress_bar(total=p.games, desc="teacher games", unit="game", enabled=progress) as bar:
        positions, val_obs = teacher_positions(teacher, p.games, p.seed, p.epsilon, p.concurrency,
                                               keep_observations=lambda game: game >= n_train,
                                               on_game=lambda: bar.update(1))
    play_s = time.perf_counter() - t0
    train, val = positions.subset(positions.game < n_train), positions.subset(positions.game >= n_train)
    config = RolloutConfig(hidden=p.hidden, layers=p.layers)
    with tracked_run(experiment_id=setup_experiment(EXPERIMENT), run_name="rollout") if track else nullcontext():
        logger = None
        if track:
            logger = MLFlowLogger(experiment_name=EXPERIMENT, tracking_uri=tracking_uri(),
                                  run_id=mlflow.active_run().info.run_id)
            mlflow.log_params({**dotted(p.model_dump(), "rollout"), **placement, "positions.train": len(train),
                               "positions.val": len(val)})
        t1 = time.perf_counter()
        net = fit_rollout(train, val, config, epochs=p.epochs, lr=p.lr, batch_size=p.batch_size, seed=p.seed,
                          logger=logger, progress=progress)
        train_s = time.perf_counter() - t1
        judged = {"val": judge_net(net, val), "train": judge_net(net, train)}
        torch.set_num_threads(1)  # the figures are per decision on one thread, as a playout worker runs
        speed = us_per_decision({"teacher": teacher, "rollout": RolloutPlayer(net)}, val_obs[:p.timing_positions],
                                TIMING_BATCH)
        result = {
            "val": {k: round(v, 4) for k, v in judged["val"].items()},
            "train": {k: round(judged["train"][k], 4) for k in ("agreement", "kl")},
            "us_per_decision": speed, "speedup": round(speed["teacher"]["all"] / speed["rollout"]["all"], 1),
            "positions": {"train": len(train), "val": len(val), "timed": min(len(val_obs), p.timing_positions)},
            "games": p.games, "seconds": {"teacher_games": round(play_s, 1), "training": round(train_s, 1)},
            "teacher": p.teacher, "teacher_inference": setup.setup,
        }
        save_rollout(net, model_dir, {"teacher": p.teacher, "games": p.games,
                                      "val_agreement": result["val"]["agreement"], "params": p.model_dump()})
        result["seconds"]["total"] = round(time.perf_counter() - t0, 1)
        if track:
            mlflow.log_metrics({f"final/{k}": float(v) for k, v in dotted(result).items() if is_number(v)})
            mlflow.log_artifacts(str(model_dir), "model")
            result["mlflow_run_id"] = mlflow.active_run().info.run_id
    return result
