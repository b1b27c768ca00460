"""Distillation: the teacher's games give labelled positions split by game, a fit learns the teacher's choices far
above chance, and the rollout stage writes its model directory, metrics and MLflow run."""

from __future__ import annotations

import json

import mlflow
import numpy as np
import pytest
import torch
from tiny import ROOT, tiny_net

from pipeline.agents.model_agent import NetPlayer
from pipeline.distill.distill import train_game_count
from pipeline.distill.fit import fit_rollout, judge_net
from pipeline.distill.teacher_games import teacher_positions
from pipeline.net.encoding import CANONICAL_TOKEN
from pipeline.params import dotted, params_with
from pipeline.rollout.network import RolloutConfig, RolloutNet
from pipeline.rollout.rollout_player import load_rollout
from stages.rollout import rollout_stage

TINY_ROLLOUT = {"games": 4, "epochs": 1, "hidden": 16, "layers": 1, "inference": "fp32", "threads": 1,
                "concurrency": 8, "timing_positions": 64, "val_fraction": 0.25}


@pytest.fixture(scope="module")
def positions():
    kept = []
    p, obs = teacher_positions(NetPlayer(tiny_net(2)), 12, seed=1, epsilon=0.1, concurrency=12,
                               keep_observations=lambda game: game == 11, on_game=lambda: kept.append(1))
    return p, obs, len(kept)


def chance(p) -> float:
    """The agreement of a uniform legal choice with the teacher's arg-max (interchangeable cards count as one)."""
    canon = CANONICAL_TOKEN[p.tokens]
    best = np.take_along_axis(canon, p.target.argmax(1)[:, None], axis=1)
    return float((((canon == best) & p.valid).sum(1) / p.valid.sum(1)).mean())


def test_positions_are_labelled_by_the_teacher_and_kept_by_game(positions):
    p, obs, games = positions
    assert games == 12 and len(p) > 500 and set(np.unique(p.game)) == set(range(12))
    assert (p.valid.sum(1) >= 2).all()  # no position without a choice
    np.testing.assert_allclose(p.target.sum(1), 1.0, rtol=1e-5)
    assert (p.target[~p.valid] == 0).all()
    assert len(obs) == (p.game == 11).sum()  # the observations of the games asked for, one per position
    # the label is the teacher's softmax over the legal tokens of that very observation
    teacher = NetPlayer(tiny_net(2)).values(obs[:20])
    logits = np.take_along_axis(teacher, p.tokens[p.game == 11][:20], axis=1)
    valid = p.valid[p.game == 11][:20]
    want = np.exp(logits - np.where(valid, logits, -np.inf).max(1, keepdims=True)) * valid
    np.testing.assert_allclose(p.target[p.game == 11][:20], want / want.sum(1, keepdims=True), atol=1e-5)
    assert train_game_count(12, 0.25) == 9 and train_game_count(3, 0.01) == 2 and train_game_count(2, 0.99) == 1


def test_a_fit_learns_the_teachers_choices(positions):
    p, _, _ = positions
    train, val = p.subset(p.game < 10), p.subset(p.game >= 10)
    net = fit_rollout(train, val, RolloutConfig(hidden=32, layers=2), epochs=12, lr=3e-3, batch_size=64, seed=0)
    fit = judge_net(net, train)
    torch.manual_seed(0)
    before = judge_net(RolloutNet(RolloutConfig(hidden=32, layers=2)), train)
    base = chance(train)
    assert base < 0.5 and before["agreement"] < base + 0.1 and fit["agreement"] > base + 0.25, (fit, before, base)
    assert fit["kl"] < 0.5 * before["kl"], (fit, before)


def test_the_stage_writes_the_model_metrics_and_run(project):
    params = params_with(dotted({**TINY_ROLLOUT, "teacher": "models/sl"}, "rollout"), ROOT / "params.yaml")
    metrics = rollout_stage(params, "models/rollout", "results/rollout", progress=False)
    spec = load_rollout("models/rollout")
    assert spec.config["hidden"] == 16 and spec.config["layers"] == 1
    on_disk = json.loads((project / "results/rollout/metrics.json").read_text())
    assert on_disk == metrics
    assert 0 <= metrics["val"]["agreement"] <= 1 and metrics["val"]["kl"] >= 0
    assert metrics["us_per_decision"]["teacher"]["all"] > 0 and metrics["us_per_decision"]["rollout"]["all"] > 0
    assert metrics["speedup"] > 0 and metrics["positions"]["train"] > metrics["positions"]["val"] > 0
    run = json.loads((project / "results/rollout/run.json").read_text())
    assert run["teacher"] == "models/sl" and run["games"] == 4 and run["teacher_inference"] == "fp32"
    tracked = mlflow.get_run(run["mlflow_run_id"])
    assert tracked.data.params["rollout.games"] == "4" and "final/val.agreement" in tracked.data.metrics
    assert "val/loss" in tracked.data.metrics  # the epochs' curve, through Lightning


def test_the_stage_names_a_missing_teacher(project):
    params = params_with(dotted({**TINY_ROLLOUT, "teacher": "models/none"}, "rollout"), ROOT / "params.yaml")
    with pytest.raises(FileNotFoundError, match="rollout.teacher models/none is not a model directory"):
        rollout_stage(params, "models/rollout", "results/rollout", progress=False)
