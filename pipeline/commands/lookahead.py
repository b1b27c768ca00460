"""``koikoi lookahead MODEL --out DIR``: a model that looks one step ahead with a learned value
(``pipeline.value.build``); duel it like any model directory."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import UserError, float_range, int_range
from ..engine import DECISION_NAMES
from ..runtime.hardware import cpu_has_bf16
from ..runtime.paths import check_apart
from ..value.build_spec import BuildSpec


def register(sub: argparse._SubParsersAction) -> None:
    from dataclasses import fields

    d = {f.name: f.default for f in fields(BuildSpec)}
    p = sub.add_parser("lookahead", help="fit a value network on a model's self-play and save the model looking "
                                         "ahead with it (docs/rl-experiments.md)")
    p.add_argument("model", metavar="MODEL", help="the policy model directory (e.g. models/sl)")
    p.add_argument("--out", required=True, help="the model directory to write (policy, value.pt, config.json)")
    p.add_argument("--winprob", default="models/winprob/winprob.json",
                   help="the win-probability table of the wp reward (default models/winprob/winprob.json)")
    p.add_argument("--reward", choices=("point", "wp"), default=d["reward"],
                   help=f"the reward the saved model looks ahead with (default {d['reward']})")
    p.add_argument("--scale", type=float_range(1e-9), default=d["scale"],
                   help=f"reward units per P(win) for wp, per point for point (default {d['scale']})")
    p.add_argument("--temperature", type=float_range(1e-9), default=d["temperature"],
                   help=f"reward units per nat of the tilt of the policy (default {d['temperature']}; "
                        "about 1.0 for --reward point)")
    p.add_argument("--prior-weight", type=float_range(0.0), default=d["prior_weight"],
                   help=f"weight of the policy's log-probabilities (default {d['prior_weight']}; "
                        "0: the value's argmax)")
    p.add_argument("--decisions", nargs="+", choices=DECISION_NAMES, default=list(d["decisions"]),
                   help="decision types that look ahead (default koikoi: the only one measured to gain)")
    p.add_argument("--games", type=int_range(1), default=d["games"],
                   help=f"self-play games of the policy (default {d['games']}, about 100 afterstates each)")
    p.add_argument("--width", type=int_range(4), default=d["width"], help=f"value network width (default {d['width']})")
    p.add_argument("--epochs", type=int_range(1), default=d["epochs"],
                   help=f"passes over the data (default {d['epochs']})")
    p.add_argument("--seed", type=int_range(0), default=d["seed"], help="seed of the games, the split and the fit")
    p.add_argument("--workers", type=int_range(0, 64), default=d["workers"], help="self-play processes (default 2)")
    p.add_argument("--bf16", choices=("auto", "true", "false"), default="false",
                   help="bf16-mixed for the value's fit (default false: the backward pass is slower in bf16 on CPUs); "
                        "play runs in the inference setup auto picks")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..value.build import (
        build_lookahead,  # lightning, torch: loaded only when this runs  # lightning, torch: loaded only when this runs
    )
    from ..value.build_spec import BuildSpec

    if args.width % 4:
        raise UserError(f"--width must be a multiple of 4 (the value network's heads), got {args.width}")
    try:
        check_apart(args.out, [args.model, args.winprob])
    except ValueError as e:
        raise UserError(f"--out {e}") from None
    if args.reward == "wp" and not Path(args.winprob).is_file():
        raise UserError(f"--winprob {args.winprob}: no such file (run `dvc repro winprob`, or pass the table)")
    spec = BuildSpec(reward=args.reward, scale=args.scale, temperature=args.temperature,
                     prior_weight=args.prior_weight, decisions=tuple(args.decisions), games=args.games,
                     width=args.width, epochs=args.epochs, seed=args.seed, workers=args.workers,
                     bf16={"auto": cpu_has_bf16(), "true": True, "false": False}[args.bf16])
    try:
        figures = build_lookahead(args.model, args.winprob, args.out, spec, progress="lookahead")
    except (FileNotFoundError, ValueError) as e:  # the policy or the table, named by the loaders
        raise UserError(str(e)) from None
    print(json.dumps({"out": args.out, **figures}))
    return 0
