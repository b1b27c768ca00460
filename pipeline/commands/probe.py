"""``koikoi probe gain|search|fit|calls MODEL``: what one step of rollout improvement gains over a network,
and how much of it trained models reach (docs/rl-experiments.md); ``koikoi probe discards|discards-score``: the
fixed discard benchmark, made and scored. Each prints a JSON object as its last line."""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path

from ..cli import UserError, float_range, int_range
from ..duel.stats import mean_ci
from ..engine import DECISION_NAMES
from ..net.inference import CHOICES, resolve_inference
from ..runtime.fingerprints import file_fingerprint
from ..runtime.progress import progress_bar
from ..runtime.resumable import Journal, JournalError, header_fields
from ..selfplay.executor import make_executor
from ..selfplay.rewards import RewardModel
from ..value.winprob import WinProbTable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="measure the one-step rollout improvement available over a network")
    kinds = p.add_subparsers(dest="probe", required=True, metavar="PROBE")
    gain = kinds.add_parser("gain", help="per decision type: split-half gain of the best action by rollout "
                                         "value over the network's choice, and the rollouts' noise")
    search = kinds.add_parser("search", help="the network plus rollouts at some decisions against the plain "
                                             "network, on duplicate deals")
    fit = kinds.add_parser("fit", help="the network fitted on the rollout targets of 3 games in 4 (koi-koi calls, "
                                       "or --decisions): the gain of its choice over the network's on the 4th game's")
    calls = kinds.add_parser("calls", help="other models' choices on the decisions of the network's games "
                                           "against itself, valued by their rollouts: gain over the network, pairwise "
                                           "(a model with a value network chooses by its lookahead)")
    for q in (gain, search, fit, calls):
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
    fit.add_argument("--games", type=int_range(4), default=400, help="games of the network against itself "
                     "(default 400, about 3,400 koi-koi calls)")
    fit.add_argument("--epochs", type=int_range(0), default=8, help="passes over the training calls (default 8)")
    fit.add_argument("--temperature", type=float_range(1e-9), nargs="+", default=None,
                     help="reward units per nat of the targets; several: one fit each (default: 0.1 for wp, "
                          "0.25 for point)")
    fit.add_argument("--deals", type=int_range(1), nargs="+", default=[0],
                     help="targets from the first DEALS deals of each call; several: one fit each (default: all)")
    fit.add_argument("--train-states", type=int_range(0), nargs="+", default=[0],
                     help="fit on the first N training calls only; several: one fit each (default 0: all)")
    fit.add_argument("--save", type=Path, default=None, metavar="DIR",
                     help="keep the fitted network as a model directory that plays it at --decisions and MODEL "
                          "elsewhere; several fits: one directory each in DIR, named by the values that vary "
                          "(e.g. states5000, states40000: a scaling curve's models)")
    calls.add_argument("--games", type=int_range(1), default=150,
                       help="games of the network against itself (default 150, about 1,250 koi-koi calls)")
    for q in (fit, calls):
        q.add_argument("--decisions", nargs="+", choices=DECISION_NAMES, default=["koikoi"],
                       help="decision types probed (default koikoi)")
        q.add_argument("--fraction", type=float_range(0.0, 1.0), default=1.0,
                       help="share of those decisions (with a choice) that are probed (default 1)")
        q.add_argument("--journal", type=Path, default=None, metavar="FILE",
                       help="keep each game's probed decisions in FILE (JSON lines) as it ends: the same command "
                            "run again goes on where a killed one stopped, and a larger --games plays on")
        q.add_argument("--also", type=Path, nargs="+", default=[], metavar="FILE",
                       help="other journals of this probe (another --seed, setup or --workers era): their decisions "
                            "join the states after --journal's or the games played, read only")
        q.add_argument("--workers", type=int_range(0), default=0,
                       help="worker processes playing the games, one torch thread each (default 0: this process, "
                            "--threads threads); the same states on any number of worker processes")
        q.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                       help="where the games' forward passes run (default cpu)")
        q.add_argument("--inference", choices=CHOICES, default="auto",
                       help="how the games' forward passes run (default auto: the fastest setup of the device; a "
                            "journal goes on only in the setup it was started in)")
    calls.add_argument("--compare", nargs="+", required=True, metavar="MODEL",
                       help="model directories whose koi-koi choices are valued on the calls; each after the first "
                            "also gets its gain minus the first's, paired on the same calls (minus_first)")
    belief = kinds.add_parser("belief", help="how much the search's belief knows of the opponent's real hand: its "
                                             "likelihood gain over uniform deals and per-card Brier scores")
    belief.add_argument("--opponent", default=None, metavar="MODEL",
                        help="the opponent model that weighs the deals (the searcher's belief=; default MODEL)")
    belief.add_argument("--positions", type=int_range(2), default=300, help="positions scored (default 300)")
    belief.add_argument("--pool", type=int_range(2), default=128,
                        help="deals drawn and weighed per position (the searcher's pool; default 128)")
    belief.add_argument("--temper", type=float_range(1e-9, 1.0), nargs="+", default=[1.0, 0.5],
                        help="log-weight multipliers scored on the same weights (default 1 0.5)")
    hand = kinds.add_parser("hand", help="what knowing the opponent's hand is worth at the searched decisions, and "
                                         "how much of it searchers get: gains over the network valued on oracle deals")
    hand.add_argument("--search", nargs="+", default=["search:models/sl?decisions=koikoi&deals=32"], metavar="SPEC",
                      help="searchers whose choices are scored (agent specs; default the uniform koi-koi searcher)")
    hand.add_argument("--positions", type=int_range(2), default=150, help="positions scored (default 150)")
    hand.add_argument("--deals", type=int_range(1), default=32, help="the oracle searcher's deals (default 32)")
    hand.add_argument("--truth", type=int_range(2), default=256,
                      help="oracle deals each action is valued on (default 256)")
    for q in (belief, hand):  # SL's games against itself, positions of the decision types searched
        q.add_argument("model", metavar="MODEL", help="the network that plays the games (and the playouts of hand)")
        q.add_argument("--decisions", nargs="+", choices=DECISION_NAMES, default=["koikoi"],
                       help="decision types whose positions are scored (default koikoi, what the searcher searches)")
        q.add_argument("--seed", type=int, default=0, help="first game seed; the deals are seeded from it too")
    discards = kinds.add_parser("discards", help="the discard benchmark: SL's discard positions, each legal discard "
                                                 "valued by shared-deal rollouts, written to a file")
    discards.add_argument("model", metavar="MODEL", help="the network that plays the games and the rollouts")
    discards.add_argument("--positions", type=int_range(1), default=300, help="positions (default 300)")
    discards.add_argument("--deals", type=int_range(2), default=128,
                          help="redealt copies each action is played on (default 128)")
    discards.add_argument("--every", type=int_range(1), default=3,
                          help="keep every EVERY-th discard with a choice (default 3)")
    discards.add_argument("--seed", type=int, default=0, help="first game seed; the redeals are seeded from it too")
    discards.add_argument("--out", required=True, help="the benchmark file (JSON) to write")
    discards.add_argument("--winprob", default=None,
                          help="a win-probability table: wp values beside the point values (e.g. "
                               "models/winprob/winprob.json; default: point only)")
    discards.add_argument("--workers", type=int_range(0), default=0,
                          help="worker processes (default 0: this process)")
    discards.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                          help="where the forward passes run (default cpu)")
    discards.add_argument("--inference", default="auto", help="inference setup (default auto)")
    score = kinds.add_parser("discards-score", help="a model's discard choices scored against a discard benchmark")
    score.add_argument("model", metavar="MODEL", help="a model directory")
    score.add_argument("--bench", required=True, help="the benchmark file (koikoi probe discards)")
    score.add_argument("--reward", choices=("point", "wp"), default=None,
                       help="values to score against (default: wp where the benchmark has it, else point)")
    score.add_argument("--advantage", action="store_true",
                       help="score an anchored model's advantage alone (rl.algorithm advantage), not its policy")
    p.set_defaults(func=run)


def run_discards(args: argparse.Namespace) -> int:
    from ..net.modelio import load_model  # torch: loaded only when this runs
    from ..probes.discard_bench import (
        bench_document,
        collect_positions,
        rank_correlation,
        reward_models,
        value_positions,
        write_bench,
    )  # torch: loaded only when this runs
    from ..selfplay.policies import NetSpec  # torch: loaded only when this runs

    try:
        net, _ = load_model(args.model)
        table = WinProbTable.load(args.winprob) if args.winprob else None
        inference = resolve_inference(args.inference, args.device)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    if not Path(args.out).resolve().parent.is_dir():
        raise UserError(f"--out {args.out}: no such directory {Path(args.out).parent}")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA device here")
    spec = NetSpec.from_net(net, args.model)
    t0 = time.perf_counter()
    positions = collect_positions(spec.player(inference, args.device), args.positions, args.seed, args.every)
    rewards = reward_models(table)
    with make_executor(args.workers, device=args.device) as ex, \
            progress_bar(total=len(positions), desc="probe discards", unit="position", leave=False) as bar:
        value_positions(spec, positions, args.deals, args.seed, rewards, ex, inference, bar.update)
    seconds = time.perf_counter() - t0
    doc = bench_document(args.model, args.seed, args.deals, args.every, positions)
    write_bench(args.out, doc)
    actions = sum(len(p.legal) for p in positions)
    sl = rank_correlation(doc, [p.logits for p in positions])
    print(json.dumps({"out": args.out, "positions": len(positions), "actions": actions,
                      "playouts": actions * args.deals, "seconds": round(seconds, 1),
                      "playouts_per_s": round(actions * args.deals / seconds, 1), "rewards": list(rewards),
                      "sl_best_rate": sl["best_rate"], "sl_regret": sl["regret"], "sl_regret_ci95": sl["regret_ci95"],
                      "reward": sl["reward"]}))
    return 0


def run_discards_score(args: argparse.Namespace) -> int:
    from ..probes.discard_bench import read_bench, score_model  # torch: loaded only when this runs

    try:
        bench = read_bench(args.bench)
        if args.reward and args.reward not in bench["rewards"]:
            raise ValueError(f"{args.bench}: no {args.reward} values (it has {', '.join(bench['rewards'])})")
        scores = score_model(args.model, bench, args.reward, args.advantage)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(json.dumps({"model": args.model, "bench": args.bench, **scores}))
    return 0


def run_report(args: argparse.Namespace) -> int:
    """``probe belief`` and ``probe hand``: the report of ``probes.belief_probe``, one JSON line."""
    from ..probes.belief_probe import belief_report, hand_report  # torch: loaded only when this runs

    try:
        if args.probe == "belief":
            out = belief_report(args.model, args.opponent, args.positions, args.pool, args.temper, args.decisions,
                                args.seed)
        else:
            out = hand_report(args.model, args.search, args.positions, args.deals, args.truth, args.decisions,
                              args.seed)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(json.dumps(out))
    return 0


def _journal(args: argparse.Namespace, probe: dict, parse: Callable[[dict], dict]) -> Journal:
    """``--journal``: the probed games of the same decisions of the same network (by its weights), rewards and
    deals; ``parse`` checks a row (``fit_gain.journal_row``)."""
    header = {**probe, "seed": args.seed,
              "streams": "per game"}  # a journal written before (one stream for all games) is refused
    return _open_journal(args.journal, header, parse, "--journal")


def _also(args: argparse.Namespace, probe: dict, parse: Callable[[dict], dict]) -> list[tuple[Journal, int]]:
    """``--also``: other journals of the same probe but for their seed, setup and streams (read: their games are
    not played on), each with its seed."""
    out = []
    for path in args.also:
        if args.journal is not None and path.resolve() == args.journal.resolve():
            raise UserError(f"--also {path}: the --journal itself (its decisions would count twice)")
        try:  # streams: "per game", absent in a journal of one stream
            own = header_fields(path, ("seed", "inference"), "probe", optional=("streams",))
        except JournalError as e:
            raise UserError(f"--also {e}") from None
        header = {**probe, **own}
        out.append((_open_journal(path, header, parse, "--also"), own["seed"]))
    return out


def _header(args: argparse.Namespace, setup: str) -> dict:
    """What names a probe in its journals' headers: the network (by its weights), rewards, samples, decisions."""
    return {"weights": file_fingerprint(Path(args.model) / "model.pt"), "reward": args.reward,
            "table": file_fingerprint(args.winprob) if args.reward == "wp" else "-", "samples": args.samples,
            "decisions": args.decisions, "fraction": args.fraction, "inference": setup}


def _open_journal(path: Path, header: dict, parse: Callable[[dict], dict], option: str) -> Journal:
    try:
        return Journal(path, "koikoi probe", header, parse)
    except (JournalError, OSError) as e:
        raise UserError(f"{option} {e}" if isinstance(e, JournalError) else f"{option} {path}: {e}") from None


def _minus_first(summary: dict, gains, first):
    """Add ``minus_first`` to ``summary`` (its gains minus the first's, paired on the same states: their luck is
    shared, and states both choose alike add 0) and return the first's gains (these, for the first)."""
    if first is None:
        return gains
    summary["minus_first"], summary["minus_first_ci95"] = mean_ci((gains - first).tolist())
    return first


def _fit_name(args: argparse.Namespace, fit: dict) -> str:
    """A fit's directory under ``--save``: the grid's values that vary, the training states as counted
    (``--train-states 0``: all of them)."""
    axes = (("states", args.train_states, fit["train_states"]), ("deals", args.deals, fit["deals"]),
            ("t", args.temperature or [0], fit["temperature"]))
    return "_".join(f"{name}{value if isinstance(value, int) else f'{value:g}'}" for name, values, value in axes
                    if len(values) > 1)


def run(args: argparse.Namespace) -> int:
    if args.probe in ("belief", "hand"):
        return run_report(args)
    if args.probe == "discards":
        return run_discards(args)
    if args.probe == "discards-score":
        return run_discards_score(args)
    import torch

    from ..agents.model_agent import NetPlayer  # torch: loaded only when this runs
    from ..agents.model_loader import load_model_agent  # torch: loaded only when this runs
    from ..net.modelio import load_model, save_model  # torch: loaded only when this runs
    from ..probes.fit_gain import (  # torch: loaded only when this runs
        choice_gain,
        decision_states,
        fit_gain,
        journal_row,
        journal_states,
        search_gain,
    )
    from ..probes.rollout_gain import (  # torch: loaded only when this runs
        rollout_gain,
        search_duel,
    )
    from ..selfplay.policies import NetSpec  # torch: loaded only when this runs

    if args.probe == "search" and args.games % 2:
        raise UserError(f"--games must be even (each deal is played from both seats), got {args.games}")
    if args.probe == "fit" and args.save is not None and args.save.exists() and not args.save.is_dir():
        raise UserError(f"--save {args.save}: not a directory")
    try:
        net, _ = load_model(args.model)
        others = {m: load_model_agent(m, m).spec for m in getattr(args, "compare", [])}
        table = WinProbTable.load(args.winprob) if args.reward == "wp" else None
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    torch.set_num_threads(args.threads)
    device = getattr(args, "device", "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA device here")
    # the games' setup (fit, calls); gain and search play this player
    player = NetPlayer(net, inference=resolve_inference(getattr(args, "inference", "auto"), device))
    reward = RewardModel(args.reward, 10.0 if args.reward == "wp" else 1.0, table, 0.5 if table else 0.0)
    probe = _header(args, player.inference.setup) if args.probe in ("fit", "calls") else {}  # the files hashed once
    journal = _journal(args, probe, journal_row) if getattr(args, "journal", None) else None
    also = _also(args, probe, journal_row) if getattr(args, "also", None) else []
    out: dict = {"model": args.model, "reward": args.reward, "samples": args.samples, "games": args.games,
                 "seed": args.seed}
    with progress_bar(total=args.games, desc=f"probe {args.probe}", unit="game", leave=False) as bar:
        if args.probe in ("fit", "calls"):  # the same decisions, valued alike: one journal serves both
            try:
                with make_executor(args.workers, device=device) as ex:
                    states = decision_states(NetSpec.from_net(net, args.model), reward, args.games, args.samples,
                                             args.seed, ex, player.inference, bar.update,
                                             tuple(DECISION_NAMES.index(d) for d in args.decisions), args.fraction,
                                             journal)
            except JournalError as e:
                raise UserError(f"--journal {e}") from None
            states += [st for j, seed in also for st in journal_states(j.rows, seed)]
        if args.probe == "fit":
            temperatures = args.temperature or [0.1 if args.reward == "wp" else 0.25]
            out.update(epochs=args.epochs, decisions=args.decisions, fraction=args.fraction, fits=[])
            first, saved = None, []
            grid = list(dict.fromkeys(itertools.product(args.train_states, args.deals, temperatures)))  # once each
            # every fit on the same states, so that they compare pairwise (minus the first fit)
            for n, deals, temperature in grid:
                try:
                    done = fit_gain(net, states, temperature, args.epochs, deals=deals or None, train_states=n,
                                    seed=args.seed, inference=player.inference,
                                    precision="bf16-mixed" if player.inference.bf16 else "32-true")
                except ValueError as e:
                    raise UserError(str(e)) from None
                fit = done.summary
                first = _minus_first(fit, done.gains, first)
                out["fits"].append(fit)
                if args.save is not None:  # each fit as it ends: a long grid killed keeps the fits done
                    where = args.save / _fit_name(args, fit) if len(grid) > 1 else args.save
                    meta = {"kind": "probe-fit", "split": {"decisions": list(args.decisions)},
                            "probe": {**{k: v for k, v in out.items() if k != "fits"}, **fit},
                            "base_weights": probe["weights"]}
                    save_model(done.net, where, meta, elsewhere=net)
                    saved.append(str(where))
            if saved:
                out["saved"] = saved[0] if len(grid) == 1 else saved
        elif args.probe == "calls":
            if not states:
                raise UserError(f"no {'/'.join(args.decisions)} decision with a choice in {args.games} games: "
                                "play more games")
            out.update(calls=len(states), decisions=args.decisions, **search_gain(states), models={})
            first, obs = None, [s["obs"] for s in states]
            for m, other in others.items():
                t0 = time.perf_counter()
                summary, gains = choice_gain(states, other.player(player.inference, "cpu").values(obs))
                summary["decisions_per_s"] = len(obs) / (time.perf_counter() - t0)
                first = _minus_first(summary, gains, first)
                out["models"][m] = summary
        elif args.probe == "gain":
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
