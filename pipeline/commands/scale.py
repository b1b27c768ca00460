"""``koikoi scale``: the scaling study of an RL algorithm: train through budgets of games, duel each against SL
(``pipeline.rl.scaling``; docs/rl.md, "The scaling curve")."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import UserError, int_range, param_overrides, worker_device
from ..params import check_variant, parse_params, read_doc, with_overrides
from ..runtime.paths import check_apart


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scale", help="train one RL run through budgets of games on a log scale and duel each "
                                     "budget's model against SL: the scaling curve")
    p.add_argument("--variant", default="wp", help="reward model: point | wp (default wp)")
    p.add_argument("--budgets", type=int_range(1), nargs="+", required=True,
                   help="training games at which the model is dueled, ascending, multiples of rl.games_per_loop")
    p.add_argument("--out", type=Path, required=True, help="the study's directory (a killed study resumes there)")
    p.add_argument("--params", default="params.yaml", help="params file; its rl and winprob sections are used")
    p.add_argument("--set", "-S", action="append", default=[], metavar="KEY=VALUE",
                   help="override an rl param, e.g. -S algorithm=advantage -S games_per_loop=500 (repeatable)")
    p.add_argument("--duel-games", type=int_range(2), default=2000,
                   help="duplicate games of each budget's duel against SL (default 2000)")
    p.add_argument("--duel-seed", type=int_range(0), default=900_000_000,
                   help="first deal of the duels: the same deals for every budget (default 900000000)")
    p.add_argument("--workers", type=int_range(0, 64), default=2, help="duel worker processes (default 2)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                   help="where the duels' forward passes run (training's: -S learner_device, -S selfplay.device)")
    p.add_argument("--bench", type=Path, default=Path("results/discard_bench/sl.json"),
                   help="discard benchmark the advantage is scored on (koikoi probe discards)")
    p.add_argument("--taus", type=float, nargs="*", default=[],
                   help="rl.algorithm advantage: also duel the largest budget's model at these tau (the policy's "
                        "reward units per nat); its discard-only duel takes the best tau")
    p.add_argument("--no-mlflow", action="store_true", help="log no MLflow runs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..rl.scaling import StudyConfig, check_budgets, run_study  # torch: loaded only when this runs

    params = parse_params(with_overrides(read_doc(args.params), param_overrides(args.set, "rl")), args.params)
    check_variant(args.variant)
    budgets = tuple(args.budgets)
    if any(t <= 0 for t in args.taus):
        raise UserError(f"--taus must be positive, got {args.taus}")
    try:
        check_budgets(budgets, params.rl.games_per_loop)
    except ValueError as e:
        raise UserError(f"--budgets: {e}") from None
    device = worker_device(args.device, args.workers)
    cfg = StudyConfig(args.variant, budgets, args.out, duel_games=args.duel_games + args.duel_games % 2,
                      duel_seed=args.duel_seed, workers=args.workers, device=device, bench=args.bench,
                      mlflow=not args.no_mlflow, taus=tuple(args.taus))
    try:
        check_apart(args.out, [cfg.sl_dir, args.bench, args.params])
    except ValueError as e:
        raise UserError(f"--out {e}") from None
    try:
        study = run_study(params, cfg)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(json.dumps(study))
    return 0
