"""The ``duels`` stage's work (``stages/duels.py`` is its script): the round-robin of ``duels.agents``, the
searchers of ``duels.search`` and the phase pairings, their Table II and Bradley-Terry ratings, the champion decided
by sequential duels and its confirmation on fresh deals, the figures, one MLflow run.

``duels_stage`` writes ``metrics.json`` (numbers), ``run.json`` (each pairing's games, draw rate and, where it
decided, its test), ``table.md``, ``ratings.json``, ``champion.json`` (``duel.champion``) and the figures into its
folder, logs one MLflow run and, when asked (``registry.register``), points each played model's ``rated`` alias at
its registered version, tagged with its rating, and registers the champion as ``koikoi-champion@champion``.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import closing
from pathlib import Path

from ..agents.specs import BUILTIN, duel_keys, is_model_spec, is_search, key_name, model_of
from ..net.inference import Inference, checked, resolve_inference
from ..net.model_dir import is_model_dir
from ..net.modelio import load_model
from ..params.sections import STRONGEST, DuelsParams
from ..runtime import atomic
from ..runtime.hardware import Placement, announce, play_device
from ..runtime.phase_pairs import phase_pair
from ..runtime.results import write_results
from ..search.spec import parse_options, play_device_of
from ..tracking.lifecycle import tracked_run
from ..tracking.registry import CHAMPION, CHAMPION_MODEL, RATED, register_champion, set_rated
from ..tracking.store import setup_experiment
from .attention import AttentionError, render_attention
from .champion import CHAMPION_FILE, candidates_of, champion_doc, pick_champion, sl_of
from .duel_report import oriented, table_markdown
from .plots import rl_curves, winrate_matrix
from .sprt import Sprt
from .tournament import (
    SL,
    Arena,
    metrics_of,
    phase_duels,
    ratings_of,
    round_robin,
    search_duel,
    search_spec,
    strongest_model,
)

STAGE = "duels"


class DuelsError(ValueError):
    """A missing model directory, or an attention figure no seed can draw (one line, names the culprit)."""


def check_models(cfg: DuelsParams) -> None:
    """Before any game, what the stage would otherwise fail on later: every model directory missing (all named) and
    the searchers' reward table. (A phase pairing the ratings cannot reach, or the searchers' strongest model with
    no model among the agents, ``DuelsParams`` refuses when the params load.)"""
    needed = _played_models(cfg)
    if cfg.attention is not None:
        needed.append(cfg.attention.model)
    if cfg.search is not None:
        needed += [m for m in cfg.search.models if m != STRONGEST]
    missing = sorted({d for d in needed if not is_model_dir(d)})
    if missing:
        raise DuelsError(f"missing model director{'y' if len(missing) == 1 else 'ies'} "
                         f"{', '.join(missing)} (model.pt + config.json): run the training stages first "
                         "(dvc repro sl_train rl_phase2) or change duels.agents")
    if cfg.search is not None:
        check_search_reward(cfg)


def check_search_reward(cfg: DuelsParams) -> None:
    """A searcher rewards by the win-probability table (unless its options say ``reward=point``): say that the
    table is missing now, not after the round-robin."""
    options = parse_options(cfg.search.options)
    models = _search_models(cfg)
    table = Path(options.winprob)
    if options.reward != "point" and not table.is_file() and models:
        raise DuelsError(f"duels.search: the searcher's wp reward needs the win-probability table {table} "
                         "(run the winprob stage first), or add reward=point to duels.search.options")


def checked_setup(cfg: DuelsParams, device: str) -> Inference:
    """``duels.inference`` for ``device``, compile-checked on the first model the stage plays (its networks share
    the architecture): the setup recorded is the one every duel runs (``net.inference.checked``)."""
    setup = resolve_inference(cfg.inference, device, "duels.inference")
    models = _played_models(cfg)
    return checked(setup, load_model(models[0])[0], device) if models else setup


def _played_models(cfg: DuelsParams) -> list[str]:
    """The model directories of ``duels.agents`` (searchers' included) and of the phase pairings, in that order."""
    return [model_of(a) for a in cfg.agents if a not in BUILTIN] + [m for v in cfg.phase_pairs for m in phase_pair(v)]


def _search_models(cfg: DuelsParams) -> list[str]:
    """The models ``duels.search`` may search with before the ratings pick: ``strongest`` stands for every model
    among the agents."""
    return [m for s in cfg.search.models
            for m in ([a for a in cfg.agents if is_model_spec(a)] if s == STRONGEST else [s])]


def _searchers(cfg: DuelsParams) -> list[str]:
    """Every searcher the stage may play: those of ``duels.agents`` and ``duels.search``'s over any model."""
    specs = [a for a in cfg.agents if is_search(a)]
    if cfg.search is not None:
        specs += [search_spec(m, cfg.search.options) for m in _search_models(cfg)]
    return specs


def _keys(cfg: DuelsParams) -> dict[str, str]:
    """Every spec's key, the searchers the stage may play included: ``strongest`` is any model of the agents, so
    that a key never changes once results are stored under it."""
    return duel_keys([*cfg.agents, *_searchers(cfg)])


def duels_stage(cfg: DuelsParams, out_dir: str | Path, track: bool = True, register: bool = False) -> dict:
    """Play the round-robin and the phase pairings (``duels.phase_pairs``), decide the champion among the models
    and the searchers (``duels.search``) and confirm it, and write every output into
    ``out_dir``; returns the metrics. ``register`` (with ``track``) sets the ``rated`` aliases and registers the
    champion."""
    check_models(cfg)
    device = play_device(cfg.device, "duels.device")
    setup = checked_setup(cfg, device)
    places = [Placement("play", device, setup.setup, cfg.device == "auto")]
    cpu_setup = None  # searchers with a rollout policy play on the CPUs where auto chose a GPU (Arena.cpu_inference)
    if play_device_of(_searchers(cfg), device, cfg.device == "auto") == "cpu" and device == "cuda":
        cpu_setup = checked_setup(cfg, "cpu")
        places.append(Placement("search_play", "cpu", cpu_setup.setup, True))
    placement = announce(STAGE, places)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = cfg.sprt
    arena = Arena(cfg.seed, cfg.rounds, cfg.points, cfg.workers, device, setup, Sprt(s.h0, s.h1, s.alpha, s.beta),
                  s.max_games, cpu_inference=cpu_setup)
    with closing(arena):
        results, order, searchers, champion, seconds = _play(cfg, arena)
    ratings = ratings_of(order, results, cfg.anchor)
    metrics = metrics_of(results)
    if champion["spec"] is not None:
        metrics["champion"] = {k: champion[k] for k in ("win_rate", "point_diff", "ci95", "games")}
        print(f"duels: champion {champion['spec']}: win rate {champion['win_rate']:.3f} "
              f"[{champion['ci95'][0]:.3f}, {champion['ci95'][1]:.3f}] against SL over {champion['games']} games "
              f"of its confirmation (deals from {cfg.confirm_seed})", file=sys.stderr)
    else:
        print(f"duels: no champion: {champion['reason']}", file=sys.stderr)
    # per pairing: win rate, point difference and interval in metrics.json; games, draw rate and test in run.json
    write_results(out, metrics, info_keys=("games", "draw_rate", "sprt"))
    atomic.write_text(out / CHAMPION_FILE, json.dumps(champion, indent=2) + "\n")
    atomic.write_text(out / "ratings.json", json.dumps({
        "model": "Bradley-Terry, draws as half wins; 95% intervals from the Fisher information; "
                 "elo = strength * 400 / ln 10",
        "anchor": cfg.anchor, "games_per_pairing": cfg.games, "sprt": s.model_dump(),
        "search": {"agents": searchers} if searchers else None, "ratings": ratings}, indent=2) + "\n")
    atomic.write_text(out / "table.md", table_markdown(order, results, ratings))
    winrate_matrix(order, results, out / "winrate_matrix.png")
    _, missing = rl_curves(cfg.rl_curves, out / "rl_curves.png")
    if cfg.attention is not None:
        _attention(cfg, out)
    if track:
        _log_run(cfg, metrics, ratings, champion, out, seconds, missing, register, placement)
    return metrics


def _play(cfg: DuelsParams, arena: Arena) -> tuple[dict, list[str], list[str], dict, float]:
    """Every duel of the stage: the round-robin, the searchers', the phase pairings and the champion's; returns
    the results, the order of their rows, the searchers, champion.json's document and the seconds it took."""
    keys = _keys(cfg)
    t0 = time.perf_counter()
    results = round_robin(cfg.agents, cfg.games, arena, keys, cfg.torch_threads)
    order = [keys[a] for a in cfg.agents]
    ratings = ratings_of(order, results, cfg.anchor)
    searchers, sl = [], sl_of(cfg.agents)
    if cfg.search is not None:
        models = [strongest_model(cfg.agents, ratings) if m == STRONGEST else m for m in cfg.search.models]
        for model in dict.fromkeys(models):  # strongest may name a model listed too: it plays once
            spec = search_spec(model, cfg.search.options)
            searchers.append(spec)
            if spec not in cfg.agents:  # else the round-robin played it
                if sl is None:  # with SL its duels are the champion's (_champion)
                    results.update(search_duel(spec, model, cfg.games, arena, keys))
                order.append(keys[spec])
    if cfg.phase_pairs:
        results.update(phase_duels(cfg.phase_pairs, arena))
        order += [key_name(phase_pair(v)[1]) for v in cfg.phase_pairs]
    elo = {a: ratings[keys[a]]["elo"] for a in cfg.agents if keys[a] in ratings}
    champion = _champion(cfg, arena, keys, results, candidates_of(cfg.agents, searchers, elo))
    return results, order, searchers, champion, time.perf_counter() - t0


def _champion(cfg: DuelsParams, arena: Arena, keys: dict[str, str], results: dict, candidates: list[str]) -> dict:
    """Each of ``candidates`` (``champion.candidates_of``) against the best so far (against SL: its round-robin
    duel where it played one), then the champion's confirmation against SL on the deals of ``duels.confirm_seed``:
    champion.json.

    Only the games a decision needs are played (a searched game costs several of two networks'). Each duel of a
    pairing the round-robin did not play joins ``results``, so that the table and the ratings hold it; the
    confirmation then takes the champion's row against SL where the pick played it (its fixed
    ``duels.confirm_games`` on fresh deals say more than a sequential duel's few hundred)."""
    sl = sl_of(cfg.agents)
    if sl is None:
        return champion_doc(None, None, [], None, cfg.confirm_seed, None)
    played = dict(results)  # the round-robin's and the phase pairings' rows: the pick's join them below

    def decide(spec: str, best: str):
        pair = (keys[spec], keys[best])
        if best == sl and pair in results:
            return results[pair]
        r = arena.duel(spec, best, 0, cfg.seed + 3000 + 2 * candidates.index(spec), decide=True, label=pair)
        if oriented(results, *pair) is None:  # a pairing the round-robin did not play
            results[pair] = r
        return r

    spec, rows = pick_champion(candidates, sl, decide)
    if spec is None:
        return champion_doc(None, sl, rows, None, cfg.confirm_seed, None)
    # the champion plays it seeded confirm_seed (A's agent seed): its registered model plays so too (_log_run)
    confirmation = arena.duel(spec, sl, cfg.confirm_games, cfg.confirm_seed, seed=cfg.confirm_seed,
                              label=(keys[spec], SL))
    if oriented(played, keys[spec], SL) is None:
        results[(keys[spec], SL)] = confirmation
    return champion_doc(spec, sl, rows, confirmation, cfg.confirm_seed, arena.placement(spec, sl)[1])


def _attention(cfg: DuelsParams, out: Path) -> None:
    a = cfg.attention
    # A seed whose round 1 ends before the chosen turn cannot show it: try the next seeds.
    for s in range(a.seed, a.seed + 50):
        try:
            render_attention(a.model, s, a.turn, out / "attention.png")
            return
        except AttentionError:
            continue
    raise DuelsError(f"duels.attention: no seed in {a.seed}..{a.seed + 49} reaches turn {a.turn} "
                     "of round 1; choose an earlier turn")


def _log_run(cfg: DuelsParams, metrics: dict, ratings: dict, champion: dict, out: Path, seconds: float,
             missing: list[str], register: bool, placement: dict) -> None:
    import mlflow  # loaded only when the stage tracks

    exp = setup_experiment("duels")
    with tracked_run(experiment_id=exp, run_name="duels") as run:
        mlflow.log_params({"agents": ",".join(cfg.agents), "games": cfg.games, "seed": cfg.seed,
                           "rounds": cfg.rounds, "points": cfg.points, "anchor": cfg.anchor, **placement,
                           **{f"sprt.{k}": v for k, v in cfg.sprt.model_dump().items()},
                           "confirm_games": cfg.confirm_games, "confirm_seed": cfg.confirm_seed})
        if cfg.search is not None:
            mlflow.log_params({"search.models": ",".join(cfg.search.models), "search.options": cfg.search.options})
        mlflow.log_params({"phase_pairs": ",".join(cfg.phase_pairs)})
        if champion["spec"] is not None:
            mlflow.set_tag("champion", champion["spec"])
        flat = {f"{pair}/{k}": v for pair, m in metrics.items() for k, v in m.items() if k not in ("ci95", "sprt")}
        flat.update({f"{pair}/sprt_llr": m["sprt"]["llr"] for pair, m in metrics.items() if m.get("sprt")})
        flat.update({f"{pair}/ci95_lo": m["ci95"][0] for pair, m in metrics.items()})
        flat.update({f"{pair}/ci95_hi": m["ci95"][1] for pair, m in metrics.items()})
        flat.update({f"elo/{k}": v["elo"] for k, v in ratings.items()})
        flat["seconds"] = seconds
        mlflow.log_metrics(flat)
        if missing:
            mlflow.set_tag("rl_curves_missing", ", ".join(missing))
        mlflow.log_artifacts(str(out))
        if register:
            rated = _set_rated(cfg, ratings, run.info.run_id)
            mlflow.set_tags({f"{RATED}/{name}": version for name, version in rated.items()})
            if champion["spec"] is not None:
                tags = {k: champion[k] for k in ("spec", "win_rate", "ci95", "games", "point_diff", "against")}
                played = champion["confirmation"]  # the seed and setup its figures were measured with
                version = register_champion(model_of(champion["spec"]), {**tags, "duels.run_id": run.info.run_id},
                                            played["seed"], Inference(**played["inference"]))
                if version is not None:
                    mlflow.set_tag(f"{CHAMPION}/{CHAMPION_MODEL}", version)
                    print(f"duels: {CHAMPION_MODEL}@{CHAMPION} -> version {version} ({champion['spec']})",
                          file=sys.stderr)


def _set_rated(cfg: DuelsParams, ratings: dict, run_id: str) -> dict[str, str]:
    """``rated`` on the registered version of every model played, tagged with its rating and rank."""
    ranked = sorted(ratings, key=lambda k: -ratings[k]["elo"])
    tags = {a: {"duels.elo": ratings[key_name(a)]["elo"], "duels.run_id": run_id,
                "duels.rank": f"{ranked.index(key_name(a)) + 1} of {len(ranked)}"}
            for a in cfg.agents if is_model_spec(a)}  # a searcher is no model; phase 1 registers none
    rated = set_rated(tags)
    for name, version in rated.items():
        print(f"duels: {name}@{RATED} -> version {version}", file=sys.stderr)
    return rated
