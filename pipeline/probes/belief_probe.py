"""Does the belief know the opponent's hand? A probe of ``search.belief`` on its own, before any duel.

A network plays greedy games against itself; at chosen decisions of the player to act (its turn 3 on, so the
opponent has played this round) the probe draws ``pool`` deals from the player's observation alone
(``engine.determinize``), weighs them with the opponent model (``belief.batched_log_weights``, as a search
does) and scores what the weights say about the opponent's real hand, which only the probe sees:

- ``gain_nats``: the log-likelihood of the real hand under the belief minus under uniform deals,
  ``log L(real) - log mean_i L(deal_i)`` (the pool's mean likelihood estimates the normaliser), with its
  95% interval over positions. Above 0: the belief puts more mass than uniform on the hand that was held.
- ``brier`` and ``brier_uniform``: per unseen card, the squared error of the chance that it is in the
  opponent's hand (the weighted share of the pool's hands holding it; uniform: ``k / n``), averaged.
- ``effective``: ``(sum w)^2 / sum w^2`` of the pool, what weighting alone leaves of it.

Each ``temper`` (the log weights' multiplier of a searcher's ``temper``) is scored on the same weights.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..agents.base import legal_list
from ..agents.loader import load_agent
from ..agents.model_agent import NetPlayer
from ..duel.stats import mean_ci
from ..engine import DECISION_NAMES, GameState, Observation, determinize
from ..net.inference import resolve_inference
from ..net.modelio import load_model
from ..runtime.progress import progress_bar
from ..search.belief import batched_log_weights, log_weights, seen_cards
from ..search.player import SearchPlayer
from ..selfplay.playout import branch, play_out
from .greedy import greedy_decisions

MIN_TURN = 3  # from the round's third turn the opponent has made decisions this round


def collect(player: NetPlayer, n: int, seed: int, decisions: Sequence[str]) -> list[tuple[Observation, GameState]]:
    """``n`` (observation, true state) pairs: the decisions of ``decisions`` types with a choice, from the
    round's turn ``MIN_TURN`` on, of greedy games of ``player`` against itself seeded ``seed``, ``seed + 1``..."""
    kinds = {DECISION_NAMES.index(d) for d in decisions}
    out: list[tuple[Observation, GameState]] = []
    for d in greedy_decisions(player, seed):
        if len(out) == n:
            break
        if d.state.phase in kinds and d.state.turn >= MIN_TURN and len(legal_list(d.obs)) > 1:
            out.append((d.obs, d.state.clone()))
    return out


def score(model: NetPlayer, positions: Sequence[tuple[Observation, GameState]], pool: int, seed: int,
          tempers: Sequence[float], batch: int = 4, progress: bool = False) -> dict:
    """The figures of the module's docstring per temper, over ``positions``; ``batch`` positions per model call."""
    per: dict[float, dict[str, list[float]]] = {t: {"gain": [], "brier": [], "effective": []} for t in tempers}
    brier_uniform: list[float] = []
    with progress_bar(total=len(positions), desc="belief probe", unit="position", enabled=progress) as bar:
        for start in range(0, len(positions), batch):
            chunk = positions[start:start + batch]
            rows = []
            for i, (obs, _) in enumerate(chunk):
                rng = np.random.default_rng([seed, start + i])
                rows.append((obs, [determinize(obs, rng) for _ in range(pool)]))
            logws = batched_log_weights(model, rows)
            for (obs, true), (_, deals), logw in zip(chunk, rows, logws, strict=True):
                real = float(log_weights(model, obs, [true])[0])  # the real hand's, as any deal's
                opp = obs.player ^ 1
                seen = seen_cards(obs)
                unseen = [c for c in range(48) if not seen >> c & 1]
                held = np.array([[d.hands[opp] >> c & 1 for c in unseen] for d in deals], dtype=np.float64)
                truth = np.array([true.hands[opp] >> c & 1 for c in unseen], dtype=np.float64)
                brier_uniform.append(float(np.mean((obs.opp_hand_count / len(unseen) - truth) ** 2)))
                for t in tempers:
                    lw = t * logw
                    top = lw.max()
                    w = np.exp(lw - top)
                    p = w @ held / w.sum()
                    per[t]["gain"].append(t * real - (top + np.log(w.mean())))
                    per[t]["brier"].append(float(np.mean((p - truth) ** 2)))
                    per[t]["effective"].append(float(w.sum() ** 2 / (w ** 2).sum()))
            bar.update(len(chunk))
    out = {"positions": len(positions), "pool": pool, "brier_uniform": round(float(np.mean(brier_uniform)), 5)}
    for t in tempers:
        gain, half = mean_ci(per[t]["gain"])
        ci = [round(gain - half, 4), round(gain + half, 4)]
        out[f"temper={t:g}"] = {"gain_nats": round(gain, 4), "gain_ci95": ci,
                                "brier": round(float(np.mean(per[t]["brier"])), 5),
                                "effective": round(float(np.mean(per[t]["effective"])), 1)}
    return out


def oracle_deals(s: GameState, k: int, rng: np.random.Generator) -> list[GameState]:
    """``k`` copies of ``s`` with the stock shuffled and the opponent's real hand kept: what a player who knew
    that hand would search on (the probe's oracle; no agent ever gets these)."""
    out = []
    for _ in range(k):
        d = s.clone()
        d.stock = [d.stock[i] for i in rng.permutation(len(d.stock))]
        out.append(d)
    return out


def hand_value(rollout: NetPlayer, searchers: dict[str, object], reward, positions: Sequence[tuple[Observation,
               GameState]], deals: int, truth: int, seed: int, progress: bool = False) -> dict:
    """What knowing the opponent's hand is worth at ``positions``, and how much of it each searcher gets.

    Each position's actions are valued on ``truth`` oracle deals (its real hand, the stock shuffled; greedy
    playouts of ``rollout`` scored by ``reward``): ``Q(a)``. Each searcher's choice (``searchers``: name -> a
    player whose ``values`` arg-max is its choice, from the observation alone), the network's, and an oracle
    searcher's (the arg-max over ``deals`` other oracle deals) are scored ``Q(choice) - Q(network's choice)``:
    the mean per position with its 95% interval, and for each after the first its gain minus the first's (paired);
    ``oracle`` bounds what any reading of the hand can gain at that number of deals."""
    gains: dict[str, list[float]] = {name: [] for name in (*searchers, "oracle")}
    with progress_bar(total=len(positions), desc="hand value", unit="position", enabled=progress) as bar:
        for i, (obs, true) in enumerate(positions):
            rng = np.random.default_rng([seed, i])
            actions = legal_list(obs)
            q = play_out([rollout], branch(oracle_deals(true, truth, rng), actions), reward)
            q = q.reshape(len(actions), truth).mean(axis=1)
            net = actions.index(int(rollout.values([obs])[0].argmax()))
            seen = play_out([rollout], branch(oracle_deals(true, deals, rng), actions), reward)
            choice = {"oracle": int(seen.reshape(len(actions), deals).mean(axis=1).argmax())}
            for name, player in searchers.items():
                choice[name] = actions.index(int(player.values([obs])[0].argmax()))
            for name, c in choice.items():
                gains[name].append(float(q[c] - q[net]))
            bar.update(1)
    out: dict = {"positions": len(positions), "deals": deals, "truth": truth}
    first = np.asarray(next(iter(gains.values())))
    for name, g in gains.items():
        out[name] = {**_mean_ci(g), "changed": round(float(np.mean([x != 0 for x in g])), 3)}
        if name != next(iter(gains)):  # paired on the same positions: the luck of the deals is shared
            out[name]["minus_first"] = _mean_ci(np.asarray(g) - first)
    return out


def _mean_ci(x: Sequence[float]) -> dict:
    mean, half = mean_ci(x)
    return {"gain": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}


def belief_report(model: str, opponent: str | None, positions: int, pool: int, tempers: Sequence[float],
                  decisions: Sequence[str], seed: int) -> dict:
    """``koikoi probe belief``: ``model``'s games, ``opponent`` (default ``model``) weighing the deals; the JSON
    fields. FileNotFoundError or ValueError naming a model directory that does not load."""
    net, _ = load_model(model)
    other = net if opponent in (None, model) else load_model(opponent)[0]
    inference = resolve_inference("auto")
    player = NetPlayer(net, inference=inference)
    t0 = time.perf_counter()
    found = collect(player, positions, seed, decisions)
    out = score(player if other is net else NetPlayer(other, inference=inference), found, pool, seed, tempers,
                progress=True)
    return {"model": model, "opponent": opponent or model, "decisions": list(decisions), "seed": seed, **out,
            "seconds": round(time.perf_counter() - t0, 1)}


def hand_report(model: str, specs: Sequence[str], positions: int, deals: int, truth: int,
                decisions: Sequence[str], seed: int) -> dict:
    """``koikoi probe hand``: ``model``'s games and playouts, the searchers of ``specs`` scored; the JSON fields.
    FileNotFoundError or ValueError naming what does not load or is not a ``search:`` spec."""
    net, _ = load_model(model)
    agents = {spec: load_agent(spec, seed=seed) for spec in specs}
    searchers = {spec: a.player for spec, a in agents.items() if isinstance(getattr(a, "player", None), SearchPlayer)}
    if len(searchers) < len(agents):
        raise ValueError(f"--search {' '.join(s for s in agents if s not in searchers)}: not a search: agent")
    reward = next(iter(searchers.values())).reward
    player = NetPlayer(net, inference=resolve_inference("auto"))
    t0 = time.perf_counter()
    found = collect(player, positions, seed, decisions)
    out = hand_value(player, searchers, reward, found, deals, truth, seed, progress=True)
    return {"model": model, "decisions": list(decisions), "seed": seed, "reward": reward.kind, **out,
            "seconds": round(time.perf_counter() - t0, 1)}
