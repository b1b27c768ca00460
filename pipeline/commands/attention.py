"""``koikoi attention --model DIR --seed S --turn T --out FILE.png``: attention maps and action values."""

import argparse
import json
from pathlib import Path

from ..cli_args import UserError, as_user_error, int_range
from ..net.model_dir import is_model_dir
from ..runtime.paths import check_apart


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attention", help="draw a model's attention between card tokens at a chosen discard")
    p.add_argument("--model", required=True, help="model directory (models/sl, models/rl/point, ...)")
    p.add_argument("--seed", type=int, default=0, help="game seed (the model plays itself greedily)")
    p.add_argument("--turn", type=int_range(1, 16), default=3, help="round 1's turn whose discard is drawn (default 3)")
    p.add_argument("--out", required=True, help="PNG file to write, in an existing directory")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..duel.attention import AttentionError, render_attention  # matplotlib: loaded only when this runs
    if not is_model_dir(args.model):
        raise UserError(f"--model {args.model}: not a model directory (needs model.pt and config.json)")
    if not args.out.lower().endswith(".png"):
        raise UserError(f"--out {args.out}: must be a .png file")
    with as_user_error(prefix="--out "):
        check_apart(args.out, [args.model])
    if not Path(args.out).parent.is_dir():
        raise UserError(f"--out {args.out}: no such directory {Path(args.out).parent}")
    with as_user_error((AttentionError, ValueError)):
        out = render_attention(args.model, args.seed, args.turn, args.out)
    print(json.dumps({"out": str(out), "model": args.model, "seed": args.seed, "turn": args.turn}))
    return 0
