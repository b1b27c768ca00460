"""A fixed discard benchmark: discard positions of SL's games against itself, each legal discard valued
once by many shared-deal rollouts, so that any later model can be scored against the values cheaply.

- :func:`collect_positions`: SL's greedy self-play, every ``every``-th discard with a choice kept; each
  position is its game seed and the actions from the start (rebuilt exactly by :func:`rebuild`).
- :func:`value_positions`: every legal discard of every position played on ``k`` redeals of the cards
  the deciding player cannot see (the same deals for every action), then greedily to the round's end
  on the rollout engine (``playout``); the round reward of each playout by the point model, and by the
  wp model (win probability, scale 1) when a table is given, from one set of playouts.
- :func:`rank_correlation`: a model's scores of the legal discards against the values: mean Spearman
  correlation over positions and the mean regret of its choice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..agents.base import legal_list
from ..agents.model_agent import NetPlayer
from ..agents.model_loader import load_model_agent
from ..duel.stats import mean_ci
from ..engine import DISCARD, GameState, resample_hidden
from ..net.inference import Inference, resolve_inference
from ..runtime import atomic
from ..selfplay.anchored import AnchoredPlayer
from ..selfplay.executor import Executor
from ..selfplay.playout import branch, play_out
from ..selfplay.policies import NetSpec, worker_player
from ..selfplay.reporting import report_progress
from ..selfplay.rewards import RewardModel
from ..selfplay.rollouts import round_reward
from ..value.winprob import WinProbTable
from .greedy import greedy_decisions

FORMAT = "koikoi-discard-bench/1"


@dataclass
class Position:
    """A discard position: ``GameState(seed=game_seed)`` after ``history``; SL's choice and its logits."""

    game_seed: int
    history: list[int]
    legal: list[int]
    chosen: int
    logits: list[float]
    state: GameState | None = None  # in memory only
    values: dict[str, list[float]] = field(default_factory=dict)  # per reward model: each action's mean
    stderr: dict[str, list[float]] = field(default_factory=dict)  # and its standard error


def rebuild(game_seed: int, history: Sequence[int]) -> GameState:
    """The position ``history`` leads to from the deal of ``game_seed``."""
    s = GameState(seed=game_seed)
    for a in history:
        s.step(int(a))
    return s


def collect_positions(player: NetPlayer, n: int, seed: int, every: int = 3) -> list[Position]:
    """``n`` discard positions with >= 2 legal discards: every ``every``-th such decision of greedy games of
    ``player`` against itself, the games seeded ``seed``, ``seed + 1``, ..."""
    out: list[Position] = []
    seen = 0
    for d in greedy_decisions(player, seed):
        if len(out) == n:
            break
        acts = legal_list(d.obs)
        if d.state.phase == DISCARD and len(acts) > 1:
            seen += 1
            if seen % every == 0:
                out.append(Position(seed + d.game, list(d.history), acts, d.taken, [float(d.values[a]) for a in acts],
                                    d.state.clone()))
    return out


def position_values(player: NetPlayer, s: GameState, actions: Sequence[int], k: int,
                    rewards: Sequence[RewardModel], rng: np.random.Generator) -> list[np.ndarray]:
    """Per reward model, the round rewards ``(len(actions), k)`` of ``s.player``: what ``rollout_values``
    gives for each model on the same deals, from one set of playouts (greedy play ignores the reward)."""
    deals = [resample_hidden(s, s.player, rng) for _ in range(k)]
    items = branch(deals, actions)
    first = play_out([player], items, rewards[0]).reshape(len(actions), k)
    rest = [np.array([round_reward(p.state, p.round, p.me, r) for p in items]).reshape(len(actions), k)
            for r in rewards[1:]]
    return [first, *rest]


def position_rng(seed: int, index: int) -> np.random.Generator:
    """The redeals of position ``index``: the same whichever worker values it."""
    return np.random.default_rng([seed, index])


@dataclass(frozen=True)
class ValueJob:
    """Positions ``(index, game_seed, history)`` valued in one worker."""

    spec: NetSpec
    inference: Inference
    device: str
    positions: tuple[tuple[int, int, tuple[int, ...]], ...]
    k: int
    seed: int
    rewards: tuple[RewardModel, ...]


def value_job(job: ValueJob) -> list[list[tuple[list[float], list[float]]]]:
    """Per position, per reward model: each legal action's mean rollout value and its standard error."""
    player, out = worker_player(job.spec, job.inference, job.device), []
    for index, game_seed, history in job.positions:
        s = rebuild(game_seed, history)
        acts = legal_list(s.observation(s.player))
        per = position_values(player, s, acts, job.k, job.rewards, position_rng(job.seed, index))
        out.append([(m.mean(axis=1).tolist(), (m.std(axis=1, ddof=1) / np.sqrt(job.k)).tolist()) for m in per])
        report_progress(1)
    return out


def reward_models(table: WinProbTable | None) -> dict[str, RewardModel]:
    """Point always; wp (the win probability, 0 to 1) with a table."""
    models = {"point": RewardModel("point")}
    if table is not None:
        models["wp"] = RewardModel("wp", 1.0, table, 0.0)
    return models


def value_positions(spec: NetSpec, positions: Sequence[Position], k: int, seed: int,
                    rewards: dict[str, RewardModel], executor: Executor, inference: Inference,
                    progress: Callable[[int], None] | None = None) -> None:
    """Fill each position's ``values[name]`` and ``stderr[name]`` per reward model (in place), the positions
    split over the executor's workers; the values do not depend on the split."""
    if k < 2:
        raise ValueError(f"value_positions needs at least 2 deals per action for a standard error, got {k}")
    items = [(i, p.game_seed, tuple(p.history)) for i, p in enumerate(positions)]
    chunk = max(1, -(-len(items) // (4 * executor.workers)))
    jobs = [ValueJob(spec, inference, executor.device, tuple(items[i:i + chunk]), k, seed, tuple(rewards.values()))
            for i in range(0, len(items), chunk)]
    results = [r for part in executor.map(value_job, jobs, progress) for r in part]
    for p, per in zip(positions, results):
        p.values = {name: v for name, (v, _) in zip(rewards, per)}
        p.stderr = {name: e for name, (_, e) in zip(rewards, per)}


def bench_document(model: str, seed: int, k: int, every: int, positions: Sequence[Position]) -> dict:
    """The benchmark as written to its file (no pickles: positions are rebuilt from seed and history)."""
    return {"format": FORMAT, "model": model, "seed": seed, "deals": k, "every": every,
            "rewards": list(positions[0].values) if positions else [],
            "positions": [{"game_seed": p.game_seed, "history": p.history, "legal": p.legal, "chosen": p.chosen,
                           "logits": p.logits, "values": p.values, "stderr": p.stderr} for p in positions]}


def write_bench(path: str | Path, doc: dict) -> Path:
    return atomic.write_text(path, json.dumps(doc, separators=(",", ":")) + "\n")


def read_bench(path: str | Path) -> dict:
    """A benchmark file; ValueError if it is not one."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a readable discard benchmark ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a discard benchmark (format {FORMAT})")
    return doc


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (ties ranked by their mean); nan where either side is constant."""
    from scipy.stats import spearmanr  # scikit-learn's dependency

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def rank_correlation(bench: dict, scores: Sequence[Sequence[float]], reward: str | None = None) -> dict:
    """A model's ``scores`` of each position's legal discards (in the benchmark's order) against the rollout
    values of ``reward`` (default the benchmark's last: wp where it has it): the mean Spearman correlation over
    the positions where neither side is constant, and the mean regret of the model's argmax against the best
    action by value (reward units), with 95% intervals; how often its choice is the best."""
    reward = reward or bench["rewards"][-1]
    positions = bench["positions"]
    if len(scores) != len(positions):
        raise ValueError(f"{len(scores)} score rows for {len(positions)} positions")
    rhos, regrets, best = [], [], 0
    for p, sc in zip(positions, scores):
        v, sc = np.asarray(p["values"][reward], dtype=float), np.asarray(sc, dtype=float)
        if sc.shape != v.shape:
            raise ValueError(f"scores of {len(sc)} actions for a position with {len(v)} legal discards")
        rho = spearman(sc, v)
        if not np.isnan(rho):
            rhos.append(rho)
        choice = int(sc.argmax())
        regrets.append(float(v.max() - v[choice]))
        best += v[choice] == v.max()
    rho, rho_ci = mean_ci(rhos)
    regret, regret_ci = mean_ci(regrets)
    return {"reward": reward, "positions": len(positions), "ranked": len(rhos), "spearman": rho,
            "spearman_ci95": rho_ci, "regret": regret, "regret_ci95": regret_ci,
            "best_rate": best / len(positions) if positions else float("nan")}


def score_model(model_dir: str | Path, bench: dict, reward: str | None = None, advantage: bool = False,
                inference: Inference | None = None) -> dict:
    """``rank_correlation`` of a saved model's scores of the benchmark's discards: its policy's (what it plays by),
    or with ``advantage`` an anchored model's advantage alone (``ValueError`` for a model without one)."""
    view = "advantage" if advantage else "policy"
    return score_views(model_dir, bench, (view,), reward, inference)[view]


def score_views(model_dir: str | Path, bench: dict, views: Sequence[str] = ("policy", "advantage"),
                reward: str | None = None, inference: Inference | None = None) -> dict[str, dict]:
    """``score_model`` per view ("policy", "advantage"), the model loaded and the positions rebuilt once."""
    player = load_model_agent(model_dir, str(model_dir)).spec.player(inference or resolve_inference("auto"), "cpu")
    if "advantage" in views and not isinstance(player, AnchoredPlayer):
        raise ValueError(f"{model_dir} has no advantage network (advantage.pt)")
    states = [rebuild(p["game_seed"], p["history"]) for p in bench["positions"]]
    obs = [s.observation(s.player) for s in states]
    out = {}
    for view in views:
        score = player.advantages if view == "advantage" else player.values
        q = score(obs) if obs else []
        out[view] = rank_correlation(bench, [row[p["legal"]] for row, p in zip(q, bench["positions"])], reward)
    return out
