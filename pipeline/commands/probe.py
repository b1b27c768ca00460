"""``koikoi probe gain|search MODEL``: what one step of rollout improvement gains over a network (README
"Why RL lost to SL, and what fixed it"). Each prints a JSON object as its last line."""

from __future__ import annotations

import argparse
import json

from ..cli import UserError, float_range, int_range
from ..engine import DECISION_NAMES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="measure the one-step rollout improvement available over a network")
    kinds = p.add_subparsers(dest="probe", required=True, metavar="PROBE")
    gain = kinds.add_parser("gain", help="per decision type: split-half gain of the best action by rollout "
                                         "value over the network's choice, and the rollouts' noise")
    search = kinds.add_parser("search", help="the network plus rollouts at some decisions against the plain "
                                             "network, on duplicate deals")
    for q in (gain, search):
        q.add_argument("model", metavar="MODEL", help="a model directory (e.g. models/sl)")
        q.add_argument("--reward", choices=("point", "wp"), default="wp",
                       help="round reward the rollouts are valued by (default wp)")
        q.add_argument("--winprob", default="models/winprob/winprob.json",
                       help="the win-probability table for --reward wp (default models/winprob/winprob.json)")
        q.add_argument("--samples", type=int_range(2), default=32,
                       help="redealt copies each action is played on (default 32)")
        q.add_argument("--seed", type=int, default=0, help="first deal seed; the redeals are seeded from it too")
        q.add_argument("--threads", type=int_range(1), default=1, help="torch threads (default 1)")
    gain.add_argument("--games", type=int_range(1), default=48, help="games of the network against itself")
    gain.add_argument("--fraction", type=float_range(0.0, 1.0), default=0.3,
                      help="share of the decisions with a choice that are probed (default 0.3)")
    search.add_argument("--games", type=int_range(2), default=600, help="games to play, even (default 600)")
    search.add_argument("--decisions", nargs="+", choices=DECISION_NAMES, default=["koikoi"],
                        help="decision types the searcher takes by rollout value (default koikoi)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..agents.model_agent import NetPlayer
    from ..hardware import resolve_bf16
    from ..modelio import load_model
    from ..progress import progress_bar
    from ..rl.probe import rollout_gain, search_duel
    from ..rl.rewards import RewardModel
    from ..rl.winprob import WinProbTable

    if args.probe == "search" and args.games % 2:
        raise UserError(f"--games must be even (each deal is played from both seats), got {args.games}")
    try:
        net, _ = load_model(args.model)
        table = WinProbTable.load(args.winprob) if args.reward == "wp" else None
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    torch.set_num_threads(args.threads)
    player = NetPlayer(net, bf16=resolve_bf16("auto"))
    reward = RewardModel(args.reward, 10.0 if args.reward == "wp" else 1.0, table, 0.5 if table else 0.0)
    out: dict = {"model": args.model, "reward": args.reward, "samples": args.samples, "games": args.games,
                 "seed": args.seed}
    with progress_bar(total=args.games, desc=f"probe {args.probe}", unit="game", leave=False) as bar:
        if args.probe == "gain":
            out["fraction"] = args.fraction
            out["by_decision"] = rollout_gain(player, reward, args.games, args.samples, args.fraction, args.seed,
                                              bar.update)
        else:
            decisions = tuple(DECISION_NAMES.index(d) for d in args.decisions)
            result, searched, changed = search_duel(player, reward, args.games, args.samples, decisions,
                                                    args.seed, bar.update)
            out.update(result.summary(), decisions=args.decisions, searched=searched, changed=changed)
    print(json.dumps(out))
    return 0
