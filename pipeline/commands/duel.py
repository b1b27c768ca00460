"""``koikoi duel A B``: duplicate-deal games of agent A against agent B, a fixed number or until ``--sprt`` decides."""

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
    p.add_argument("a", metavar="A", help="random, heuristic, a model directory or search:<model>?<options>")
    p.add_argument("b", metavar="B", help="agent spec, as A")
    p.add_argument("--games", type=int_range(1), default=200, help="games, even (default 200); with --sprt the most")
    p.add_argument("--sprt", type=float_range(0.0, 1.0), nargs=2, default=None, metavar=("H0", "H1"),
                   help=f"test A's win rate H0 against H1 (e.g. 0.50 0.55) every {SPRT_BLOCK} deals; stop when decided")
    p.add_argument("--alpha", type=float_range(0.0, 0.5), default=0.05, help="--sprt: P(accept H1 | H0) (default 0.05)")
    p.add_argument("--beta", type=float_range(0.0, 0.5), default=0.05, help="--sprt: P(accept H0 | H1) (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="first deal seed; agents are seeded from it too")
    p.add_argument("--rounds", type=int_range(1, MAX_ROUNDS), default=8, help="rounds per game (default 8)")
    p.add_argument("--points", type=int_range(1, MAX_POINTS), default=30, help="initial points per player (default 30)")
    p.add_argument("--workers", type=int_range(0, 64), default=2,
                   help="worker processes when an agent is a model (default 2; 0: play in this process)")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch threads for model agents (default 1)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                   help="where model agents on --workers run (default cpu; auto: cuda, unless a rollout policy plays)")
    p.add_argument("--inference", choices=INFERENCE_CHOICES, default="auto",
                   help="model agents' inference setup (default auto: this machine's fastest)")
    p.add_argument("--inference-b", choices=INFERENCE_CHOICES, default=None, help="B's setup, if not --inference's")
    p.add_argument("--journal", type=Path, default=None, metavar="FILE",
                   help=f"record each {2 * BLOCK} games ({2 * SPRT_BLOCK} with --sprt) in FILE; run again to resume")
    p.add_argument("--records", type=Path, default=None, metavar="DIR",
                   help="write each game as a record in DIR (SEED-A1.json, SEED-A2.json: A's seat), in this process")
    p.add_argument("--paired", type=Path, nargs="+", default=[], metavar="FILE",
                   help="journals of other duels against B on these deals: A's win rate minus each (needs --journal)")
    p.set_defaults(func=run)


def _record_writer(args: argparse.Namespace) -> Callable[[int, int, GameState], None] | None:
    if args.records is None:
        return None
    with as_user_error(OSError, f"--records {args.records}: ", strerror=True):
        args.records.mkdir(parents=True, exist_ok=True)

    def write(seat: int, deal: int, state: GameState) -> None:
        names = (args.a, args.b) if seat == 0 else (args.b, args.a)
        write_record(state, args.records / f"{deal}-A{seat + 1}.json", names)

    return write


def run(args: argparse.Namespace) -> int:
    with as_user_error(prefix="--sprt: "):
        sprt = None if args.sprt is None else Sprt(*args.sprt, alpha=args.alpha, beta=args.beta)
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
