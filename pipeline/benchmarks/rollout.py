"""The rollout policy against its teacher: CPU microseconds per decision, by type (fresh networks if absent)."""

import argparse
from pathlib import Path

from ..cli_args import as_user_error, int_range
from ..distill.speed import us_per_decision
from ..engine import random_observations
from ..net.inference import checked, resolve_inference
from ..net.model_dir import is_model_dir
from ..params import load_params
from ..runtime.hardware import INFERENCE_CHOICES
from .inference import cpu_summary


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="models/rl/wp", help="the teacher's model directory (default models/rl/wp)")
    p.add_argument("--rollout", default="models/rollout", help="the rollout model directory (default models/rollout)")
    p.add_argument("--positions", type=int_range(1), default=1024, help="observations timed (default 1024)")
    p.add_argument("--batch", type=int_range(1), default=64, help="observations per call (default 64)")
    p.add_argument("--rounds", type=int_range(1), default=3, help="timed rounds; the median counts (default 3)")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch threads (default 1)")
    p.add_argument("--inference", choices=INFERENCE_CHOICES, default="auto",
                   help="the teacher's inference setup (default auto)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random games and of fresh weights")


def run(args: argparse.Namespace) -> dict:
    import torch

    from ..agents.model_agent import NetPlayer  # torch: loaded only when this runs
    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..net.modelio import load_model  # torch: loaded only when this runs
    from ..rollout.network import RolloutConfig, RolloutNet, load_rollout_net  # torch: loaded only when this runs
    from ..rollout.rollout_player import RolloutPlayer  # torch: loaded only when this runs
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    with as_user_error((FileNotFoundError, ValueError)):
        if is_model_dir(args.model):
            teacher, teacher_name = load_model(args.model)[0], args.model
        else:
            teacher = KoiKoiNet(ModelConfig(yaku_cross=("discard", "pick"), card_logit=("pick",))).eval()
            teacher_name = "fresh paper-size network"
        if is_model_dir(args.rollout):
            rollout, rollout_name = load_rollout_net(args.rollout)[0], args.rollout
        else:
            p = load_params(Path("params.yaml")).rollout if Path("params.yaml").is_file() else None
            config = RolloutConfig(hidden=p.hidden, layers=p.layers) if p else RolloutConfig()
            rollout, rollout_name = RolloutNet(config).eval(), f"fresh rollout network {config.to_dict()}"
    setup = checked(resolve_inference(args.inference), teacher)
    observations = random_observations(args.positions, args.seed)
    us = us_per_decision({"teacher": NetPlayer(teacher, inference=setup), "rollout": RolloutPlayer(rollout)},
                         observations, args.batch, args.rounds)
    return {**cpu_summary(), "threads": args.threads, "batch": args.batch, "positions": args.positions,
            "teacher": teacher_name, "teacher_inference": setup.setup, "rollout": rollout_name,
            "us_per_decision": us, "speedup": round(us["teacher"]["all"] / us["rollout"]["all"], 1)}
