"""``koikoi duel A B --games N --seed S [--sprt H0 H1]``: duplicate-deal games of agent A against agent B, a fixed
number or, with ``--sprt``, until a sequential test on the pairs decides (``--games`` its cap)."""

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from ..cli_args import UserError, as_user_error, float_range, int_range, worker_device
from ..duel.journal import BLOCK, DuelJournal, other_blocks
from ..duel.runner import SPRT_BLOCK, duel_agents, journal_block, set_torch_threads
from ..duel.sprt import Sprt
from ..duel.stats import paired_difference
from ..engine import GameState, write_record
from ..lineup.loader import load_agent
from ..net.encoding import MAX_POINTS, MAX_ROUNDS
from ..net.inference import checked, resolve_inference
from ..runtime.hardware import INFERENCE_CHOICES, Placement, announce
from ..runtime.resumable import JournalError
from ..search.spec import play_device_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("duel", help="play agent A against agent B on duplicate deals and print A's results")
    p.add_argument("a", metavar="A", help="agent spec: random, heuristic, a model directory or "
                                          "search:<model>?<options> (docs/search.md)")
    p.add_argument("b", metavar="B", help="agent spec, as A")
    p.add_argument("--games", type=int_range(1), default=200,
                   help="games to play, even: each deal twice (default 200); with --sprt the most to play")
    p.add_argument("--sprt", type=float_range(0.0, 1.0), nargs=2, default=None, metavar=("H0", "H1"),
                   help="a sequential test of A's win rate H0 against H1 (e.g. 0.50 0.55) on the duplicate pairs, "
                        f"looked at after each block of {SPRT_BLOCK} deals: the duel stops when it decides "
                        "(docs/duels.md)")
    p.add_argument("--alpha", type=float_range(0.0, 0.5), default=0.05,
                   help="--sprt: the chance of accepting H1 when H0 holds (default 0.05)")
    p.add_argument("--beta", type=float_range(0.0, 0.5), default=0.05,
                   help="--sprt: the chance of accepting H0 when H1 holds (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="first deal seed; agents are seeded from it too")
    p.add_argument("--rounds", type=int_range(1, MAX_ROUNDS), default=8,
                   help=f"rounds per game, 1..{MAX_ROUNDS}: what the observation encoding covers (default 8)")
    p.add_argument("--points", type=int_range(1, MAX_POINTS), default=30,
                   help=f"initial points of each player, 1..{MAX_POINTS} (default 30)")
    p.add_argument("--workers", type=int_range(0, 64), default=2,
                   help="worker processes when an agent is a model (default 2; 0: play in this process)")
    p.add_argument("--threads", type=int_range(1), default=1,
                   help="torch threads for model agents (default 1: small batches gain nothing from more, "
                        "and extra threads stall badly on a busy machine)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                   help="where the model agents run their forward passes on --workers processes (default cpu; "
                        "auto: cuda when torch sees a GPU, except for a searcher with a rollout policy, whose "
                        "playouts the CPUs serve faster)")
    p.add_argument("--inference", choices=INFERENCE_CHOICES, default="auto",
                   help="how model agents run their forward passes (default auto: the fastest setup of this CPU or "
                        "GPU; docs/benchmarks.md)")
    p.add_argument("--inference-b", choices=INFERENCE_CHOICES, default=None,
                   help="B's setup, when it differs from --inference: the same weights in two setups duel "
                        "(`koikoi duel models/sl models/sl --inference bf16 --inference-b fp32`)")
    p.add_argument("--journal", type=Path, default=None, metavar="FILE",
                   help=f"record each block of {2 * BLOCK} games ({2 * SPRT_BLOCK} with --sprt) in FILE as it ends; "
                        "the same command run again goes on where it stopped (a duel with a model agent only)")
    p.add_argument("--records", type=Path, default=None, metavar="DIR",
                   help="write each game in DIR as a game record (SEED-A1.json: A as player 1, SEED-A2.json: A as "
                        "player 2), for koikoi analyse (docs/analysis.md); the duel then plays in this process, "
                        "whose games keep their moves (no --journal)")
    p.add_argument("--paired", type=Path, nargs="+", default=[], metavar="FILE",
                   help="journals of other agents' duels against the same B on the same deals (--seed, --rounds, "
                        "--points): A's win rate minus each one's, paired by the journals' blocks (needs --journal)")
    p.set_defaults(func=run)


def _record_writer(args: argparse.Namespace) -> Callable[[int, int, GameState], None] | None:
    """With ``--records``: what writes each game of the duel as a record there, named by its players' specs."""
    if args.records is None:
        return None
    try:
        args.records.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--records {args.records}: {e.strerror}") from None

    def write(seat: int, deal: int, state: GameState) -> None:
        names = (args.a, args.b) if seat == 0 else (args.b, args.a)
        write_record(state, args.records / f"{deal}-A{seat + 1}.json", names)

    return write


def run(args: argparse.Namespace) -> int:
    sprt = None
    if args.sprt is not None:
        with as_user_error(prefix="--sprt: "):
            sprt = Sprt(*args.sprt, alpha=args.alpha, beta=args.beta)
    with as_user_error():
        a = load_agent(args.a, seed=args.seed, inference=args.inference)
        b = load_agent(args.b, seed=args.seed + 1, inference=args.inference_b or args.inference)
    set_torch_threads(args.threads)

    device = play_device_of((args.a, args.b), worker_device(args.device, args.workers), args.device == "auto")
    # a compiled setup that fails on an agent's network runs (and is recorded) uncompiled
    setups = [checked(resolve_inference(value, device), agent.net, device) if hasattr(agent, "net")
              else resolve_inference(value, device) for agent, value in ((a, args.inference),
                                                                         (b, args.inference_b or args.inference))]
    if any(x not in ("random", "heuristic") for x in (args.a, args.b)):
        announce("koikoi duel", [Placement(role, device, s.setup, s.auto) for role, s in zip(("A", "B"), setups)])
    games = args.games + args.games % 2
    if games != args.games:
        print(f"koikoi duel: playing {games} games, not {args.games}: each deal is played twice", file=sys.stderr)
    journal, others = None, {}
    if args.records is not None and args.journal is not None:
        raise UserError("--records plays the duel in this process, which keeps no --journal: give one of them")
    if args.paired and args.journal is None:
        raise UserError("--paired needs --journal: the comparison is by the journals' blocks")
    if args.journal is not None:
        duel = {"b": args.b, "seed": args.seed, "rounds": args.rounds, "points": args.points}
        header = {"a": args.a, **duel, "inference": [s.setup for s in setups]}
        try:
            journal = DuelJournal(args.journal, header, journal_block(sprt is not None))
        except (JournalError, OSError) as e:
            raise UserError(f"--journal {e}" if isinstance(e, JournalError) else f"--journal {args.journal}: {e}") \
                from None
        for path in args.paired:  # read before any game: a wrong file costs nothing
            if path.resolve() == args.journal.resolve():
                raise UserError(f"--paired {path}: the --journal itself")
            with as_user_error(JournalError, "--paired "):
                others[str(path)] = other_blocks(path, duel, journal.block)
        if journal.done:
            print(f"koikoi duel: {sum(r.games for r, _ in journal.done.values())} games already in {args.journal}",
                  file=sys.stderr)
    try:  # with a journal, a pairing that cannot keep one fails here, before any game or line is written
        result = duel_agents(a, b, games, args.seed, num_rounds=args.rounds, init_points=args.points,
                             workers=args.workers, progress=f"{args.a} vs {args.b}", device=device,
                             inference=setups[0], inference_b=setups[1] if args.inference_b else None,
                             journal=journal, sprt=sprt, on_game=_record_writer(args))
    except ValueError as e:
        if journal is None:
            raise
        raise UserError(str(e)) from None
    out = result.summary()
    if any(x not in ("random", "heuristic") for x in (args.a, args.b)):  # what the model agents ran
        out["inference"] = [setup.setup for setup in setups]
    out.update(seconds=round(result.seconds, 2), games_per_s=round(result.games / max(result.seconds, 1e-9), 1))
    if result.search:  # a search agent played: its searched decisions, their time and deals
        out["search"] = result.search
    if others:  # this duel's blocks only (a journal may hold a longer one's)
        mine = {b: r for b, (r, _) in journal.done.items() if args.seed <= b < args.seed + result.games // 2}
        out["paired"] = {path: {"a": a, **paired_difference(mine, blocks)} for path, (a, blocks) in others.items()}
    print(json.dumps(out))
    return 0
