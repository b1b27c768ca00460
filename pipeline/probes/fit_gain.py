"""How well the network learns the koi-koi rollout targets: the gain of the fitted choice on unseen states.

``koikoi probe search`` gives the ceiling of distilling rollout values into the network (the search
itself); this probe measures how much of it a fit reaches, and what it takes (``koikoi probe fit``):

- :func:`decision_states`: the koi-koi calls (or other decisions) of the network's greedy games against itself
  (both seats), each action valued on ``k`` redealt deals (:func:`rollout_gain.rollout_values`).
- :func:`fit_gain`: the network fitted on the states of three games in four with ``rollout_pi``'s
  ``logit_mse`` targets (SL prior + mean reward / temperature), then, on the fourth game's states, the
  gain per call of its choice over the original network's, valued by the ``k``-deal means. The fit never
  saw those states, so their means value its choice without bias. The search's own gain is measured on
  the same held-out states, split-half (chosen on half the deals, valued on the other half).
- :func:`choice_gain` and :func:`search_gain`: the same per-call measures for any network's choices on
  the calls (``koikoi probe calls``: trained models compared on the calls of SL's games, pairwise).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..agents.base import legal_list
from ..agents.model_agent import NetPlayer
from ..duel.stats import mean_ci
from ..engine import KOIKOI_DECISION, GameState
from ..net.inference import FP32, Inference
from ..net.model import KoiKoiNet
from ..rl.algorithms.rollout_pi import RolloutPolicyIteration
from ..rl.learner import PolicyLearner, SampleBuffer, fit_pass
from ..runtime.resumable import Journal, JournalError
from ..selfplay.batched import Sample
from ..selfplay.executor import Executor
from ..selfplay.policies import NetSpec, worker_player
from ..selfplay.reporting import report_progress
from ..selfplay.rewards import RewardModel
from ..selfplay.rollouts import Pending, target
from .greedy import greedy_decisions
from .rollout_gain import rollout_values

HOLDOUT = 4  # every 4th game's states are held out


@dataclass(frozen=True)
class ProbeJob:
    """Games of the probe played in one worker: their indices, and what each probes."""

    spec: NetSpec
    inference: Inference
    device: str
    games: tuple[int, ...]
    seed: int
    k: int
    reward: RewardModel
    decisions: tuple[int, ...]
    fraction: float


def probe_job(job: ProbeJob) -> list[dict]:
    """Each game's row (:func:`probe_game`), in the order of ``job.games``."""
    player = worker_player(job.spec, job.inference, job.device)
    return [probe_game(player, job.reward, job.seed, g, job.k, job.decisions, job.fraction) for g in job.games]


def probe_game(player: NetPlayer, reward: RewardModel, seed: int, game: int, k: int, decisions: tuple[int, ...],
               fraction: float) -> dict:
    """Game ``game`` of the probe (deal ``seed + game``, greedy both seats): its actions, and at each decision of
    the types ``decisions`` with a choice (a ``fraction`` of them, drawn at random) its step, the network's values
    of the legal actions and their rewards ``(actions, k)``. The game's own random streams (seeded by ``seed`` and
    ``game``) draw the decisions and the redeals, so a game is the same whichever worker plays it, and when."""
    rng, pick = np.random.default_rng((seed, game)), np.random.default_rng((seed, game, 1))
    states = []
    for d in greedy_decisions(player, seed + game, 1):
        acts = legal_list(d.obs)
        if d.obs.decision in decisions and len(acts) > 1 and (fraction >= 1.0 or pick.random() < fraction):
            values = rollout_values(player, d.state, acts, k, reward, rng)
            states.append([len(d.history), d.values[acts].tolist(), values.tolist()])
    report_progress(1)
    return {"game": game, "actions": list(d.history), "states": states}  # the list grew to the whole game


def decision_states(spec: NetSpec, reward: RewardModel, games: int, k: int, seed: int, executor: Executor,
                    inference: Inference = FP32, progress: Callable[[int], None] | None = None,
                    decisions: tuple[int, ...] = (KOIKOI_DECISION,), fraction: float = 1.0,
                    journal: Journal | None = None) -> list[dict]:
    """The decisions with a choice of the types ``decisions`` (a ``fraction`` of them) in ``games`` greedy games of
    ``spec`` against itself (:func:`probe_game`), played on ``executor``'s workers: obs, legal actions, the network's
    values of them, rewards ``(actions, k)`` and the game's index. By default every koi-koi call.

    ``journal``: each game's row is appended (in game order, a batch of games at a time) as its batch ends, and the
    games it holds are rebuilt from it instead of played: a probe killed midway goes on where it stopped, and a
    larger ``games`` plays on; the states are those of the probe run straight, on any number of workers."""
    rows = list(journal.rows[:games]) if journal is not None else []
    if any(row["game"] != i for i, row in enumerate(rows)):
        raise JournalError(f"{journal.path}: its games are not 0, 1, 2, ... in order")
    if rows and progress:
        progress(len(rows))
    batch = 4 * executor.workers  # games per worker between two journal writes
    for first in range(len(rows), games, batch):
        todo = range(first, min(first + batch, games))
        jobs = [ProbeJob(spec, inference, executor.device, tuple(todo[w::executor.workers]), seed, k, reward,
                         decisions, fraction) for w in range(min(executor.workers, len(todo)))]
        played = sorted((row for part in executor.map(probe_job, jobs, progress) for row in part),
                        key=lambda row: row["game"])
        if journal is not None:
            for row in played:
                journal.append(row)
        rows += played
    return journal_states(rows, seed)


def journal_states(rows: list[dict], seed: int) -> list[dict]:
    """The probed decisions of a journal's rows (:func:`probe_game`'s), their deals seeded from ``seed``."""
    return [st for row in rows for st in _rebuilt(row, seed)]


def journal_row(row: dict) -> dict:
    """A probe journal's row, checked for what :func:`decision_states` reads of it (a ``Journal``'s ``parse``)."""
    if not {"game", "actions", "states"} <= row.keys() or not isinstance(row["game"], int) \
            or not all(len(st) == 3 for st in row["states"]):
        raise ValueError("not a probed game")
    return row


def _rebuilt(row: dict, seed: int) -> list[dict]:
    """A journalled game's probed decisions: its deal replayed through its actions (the engine, no network)."""
    at = {step: (prior, values) for step, prior, values in row["states"]}
    s, out = GameState(seed=seed + row["game"]), []
    for step, action in enumerate(row["actions"]):
        if step in at:
            obs = s.observation(s.player)
            out.append({"obs": obs, "acts": legal_list(obs), "prior": np.asarray(at[step][0], dtype=np.float32),
                        "values": np.asarray(at[step][1], dtype=np.float64), "game": row["game"]})
        s.step(action)
    return out


def _target(st: dict, temperature: float, deals: int) -> np.ndarray:
    """``rollout_pi``'s ``logit_mse`` target of a call, from its first ``deals`` deals."""
    p = Pending(st["acts"], st["prior"], deals)
    p.rewards = st["values"][:, :deals].sum(axis=1).tolist()
    return target(p, temperature, "logit_mse")


def choice_gain(states: list[dict], values: list[np.ndarray]) -> tuple[dict, np.ndarray]:
    """The gain per call of the choices by ``values`` (a network's outputs, one array per call) over the
    calls' own network's choice, valued by the calls' k-deal means; and the per-call gains (to pair)."""
    gains, flips = np.zeros(len(states)), 0
    for i, (s, q) in enumerate(zip(states, values)):
        v, mine = s["values"], int(np.argmax(s["prior"]))
        choice = int(np.argmax(np.asarray(q)[s["acts"]]))
        gains[i] = v[choice].mean() - v[mine].mean()
        flips += choice != mine
    g, ci = mean_ci(gains.tolist())
    return {"gain": g, "gain_ci95": ci, "flip_rate": flips / len(states)}, gains


def search_gain(states: list[dict]) -> dict:
    """The search's gain per call: the best action by its k-deal mean (in sample, which counts the luck of
    the deals a little), and split-half (chosen on half the deals, valued on the other half)."""
    half, in_sample = [], []
    for s in states:
        v, mine = s["values"], int(np.argmax(s["prior"]))
        k = v.shape[1]
        best = int(np.argmax(v[:, : k // 2].mean(axis=1)))
        half.append(float(v[best, k // 2:].mean() - v[mine, k // 2:].mean()))
        in_sample.append(float(v[int(np.argmax(v.mean(axis=1)))].mean() - v[mine].mean()))
    (h, h_ci), (g, g_ci) = mean_ci(half), mean_ci(in_sample)
    return {"search_gain": h, "search_gain_ci95": h_ci, "search_in_sample": g, "search_in_sample_ci95": g_ci}


@dataclass
class Fit:
    """One fit of the probe: its figures (``summary``), the held-out per-decision gains (to pair fits on the same
    states) and the fitted network (``koikoi probe fit --save``)."""

    summary: dict
    gains: np.ndarray
    net: KoiKoiNet


def fit_gain(net: KoiKoiNet, states: list[dict], temperature: float, epochs: int = 8, lr: float = 3e-4,
             batch_size: int = 64, deals: int | None = None, train_states: int = 0, seed: int = 0,
             precision: str = "32-true", inference: Inference = FP32) -> Fit:
    """Fit a copy of ``net`` on the training states (targets from their first ``deals`` deals), and measure
    the held-out gain per call of its choice over ``net``'s, and the split-half gain of the search."""
    train = [s for s in states if s["game"] % HOLDOUT]
    test = [s for s in states if s["game"] % HOLDOUT == 0]
    if len(test) < 2 or not train:
        raise ValueError(f"probe fit: {len(states)} decisions probed, {len(test)} held out: play more games")
    train = train[:train_states] if train_states else train
    k = test[0]["values"].shape[1]
    deals = min(deals or k, k)
    learner = PolicyLearner(copy.deepcopy(net), lr=lr, algorithm=RolloutPolicyIteration("logit_mse"), augment=False)
    if epochs:
        samples = [Sample(s["obs"], s["acts"][0], 0.0, _target(s, temperature, deals)) for s in train]
        fit_pass(learner, SampleBuffer(samples), batch_size, seed, precision, epochs=epochs)
    fit, gains = choice_gain(test, NetPlayer(learner.net, inference=inference).values([s["obs"] for s in test]))
    search = search_gain(test)
    summary = {"train_states": len(train), "test_states": len(test), "deals": deals, "temperature": temperature,
               "fit_gain": fit["gain"], "fit_gain_ci95": fit["gain_ci95"], "fit_flip_rate": fit["flip_rate"],
               "search_gain": search["search_gain"], "search_gain_ci95": search["search_gain_ci95"]}
    return Fit(summary, gains, learner.net.eval())
