"""The RL algorithms: one module each behind ``Algorithm``, one registry line each, one name in the params; what
their games record is their own ``Recorder``, which the play engine calls without naming any."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
import torch

from pipeline.params import parse_params
from pipeline.params.rl import ALGORITHMS as PARAM_NAMES
from pipeline.rl.algorithms import ALGORITHMS, algorithm_for
from pipeline.rl.algorithms.expert_iteration import ExpertIteration
from pipeline.rl.algorithms.mc_dqn import MonteCarloDQN
from pipeline.rl.algorithms.rollout_pi import RolloutPolicyIteration
from pipeline.rl.learner import collate
from pipeline.search.player import SearchSpec
from pipeline.selfplay.batched import GameSpec, PlayJob, Recorder
from pipeline.selfplay.rewards import RewardModel


def test_every_params_name_has_its_algorithm():
    assert tuple(ALGORITHMS) == PARAM_NAMES


def test_the_params_pick_the_algorithm_and_its_branches(params, make_net):
    from pipeline.selfplay.policies import NetSpec

    sl = NetSpec.from_net(make_net(1), "sl")
    me = NetSpec.from_net(make_net(0), "learner")
    for name in ALGORITHMS:
        params["rl"]["algorithm"] = name
        algorithm = algorithm_for(parse_params(params).rl)
        players, recorder = algorithm.recorder((me,), sl, "point", reward=RewardModel("point"), seed=3)
        if name == "mc_dqn":
            assert isinstance(algorithm, MonteCarloDQN) and players == (me,) and type(recorder) is Recorder
        elif name == "expert_it":  # a searcher over the learner rides along unseated; it picks no branch
            assert isinstance(algorithm, ExpertIteration) and players[:1] == (me,) and recorder.searcher == 1
            assert isinstance(players[1], SearchSpec) and players[1].base == me and players[1].seed == 3
        else:  # the SL net rides along unseated as the branch targets' prior (rl.branch.prior: sl)
            assert isinstance(algorithm, RolloutPolicyIteration) and players == (me, sl) and recorder.anchor == 1
        assert set(algorithm.loss_units(parse_params(params).rl, "mse")) == {"discard", "pick", "koikoi"}
        # the hook travels in the play job to every worker: a small frozen dataclass that pickles
        job = PlayJob(players=players, games=(GameSpec(1),), reward=RewardModel("point"), recorder=recorder)
        assert pickle.loads(pickle.dumps(job)) == job
        with pytest.raises(FrozenInstanceError):
            recorder.x = 1
        assert len(pickle.dumps(recorder)) < 1000  # no network in it: the job's players carry those


def test_the_play_engine_names_no_algorithm():
    """What a game records is its recorder's: the play engine's modules name no algorithm."""
    engine = Path(__file__).resolve().parents[2] / "pipeline/selfplay"
    named = {(f.name, a) for f in engine.glob("*.py") for a in ALGORITHMS if a in f.read_text()}
    assert not named


def test_a_decision_without_branches_keeps_the_monte_carlo_loss(make_net):
    from pipeline.engine import GameState
    from pipeline.selfplay.batched import Sample

    s = GameState(seed=0)
    obs = s.observation(s.current_player)
    batch = collate([Sample(obs, s.legal_actions()[0], 1.0)])
    net = make_net(0)
    assert torch.equal(MonteCarloDQN().loss(net, batch), RolloutPolicyIteration("logit_mse").loss(net, batch))
