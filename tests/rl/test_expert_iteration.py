"""expert_it: self-play searched by the all-decision search, the network fitted to its prior tilted by the searched
gains, the rollout policy distilled again from the fitted network, the next loop searching over both."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch

from pipeline.distill.fit import fit_rollout
from pipeline.distill.teacher_games import teacher_positions
from pipeline.net.inference import FP32
from pipeline.params import parse_params
from pipeline.rl.algorithms import algorithm_for
from pipeline.rl.algorithms.expert_iteration import PLAYOUTS, ExpertIteration, SearchRecorder
from pipeline.rl.phase_state import phase_fingerprint
from pipeline.rl.training import STATE_FILE
from pipeline.rollout.network import RolloutConfig, load_rollout_net, save_rollout
from pipeline.search.player import SearchSpec
from pipeline.search.spec import SearchOptions
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, phase_config, rl_stage

T = 0.5  # the test's temperature: reward units per nat


def _searched_job(make_net, deals=4):
    me = NetSpec.from_net(make_net(0), "learner")
    searcher = SearchSpec("searcher", me, RewardModel("point"), SearchOptions(deals=deals, k=3), seed=5)
    return PlayJob(players=(me, searcher), games=(GameSpec(3, (0, 0), (True, True)),), reward=RewardModel("point"),
                   recorder=SearchRecorder(1.0, T, (0, 1, 2), "logit_mse", searcher=1), num_rounds=1)


def test_a_searched_decision_plays_the_search_and_records_its_prior_tilted_by_the_gains(make_net):
    job = _searched_job(make_net)
    samples = play_job(job).samples
    assert len(samples) >= 5 and {s.obs.decision for s in samples} >= {0, 1}
    searcher = job.players[1].player(FP32, "cpu")
    changed = tilted = 0
    for s in samples:  # the same search again, one decision at a time: it depends on the observation only
        scores = searcher.model.values([s.obs])
        if not searcher.searches(s.obs, scores[0]):  # one candidate: the network's move, nothing to fit
            assert s.action == int(scores[0].argmax()) and s.target is None
            continue
        legal = np.isfinite(scores[0])
        assert np.isfinite(s.target[legal]).all() and np.isnan(s.target[~legal]).all()
        x = scores[0, legal] - scores[0, legal].max()
        logp = x - np.log(np.exp(x).sum())
        choice, gains = searcher.improve([s.obs], scores)
        assert s.action == int(choice[0].argmax())
        z = logp + np.nan_to_num(gains[0, legal]) / T
        np.testing.assert_allclose(s.target[legal], z - z.mean(), atol=1e-4)
        assert gains[0, int(scores[0].argmax())] == 0.0  # the anchor, the network's choice, gains nothing
        changed += s.action != int(scores[0].argmax())
        tilted += bool(np.nan_to_num(gains[0]).any())
    assert changed and tilted  # the search is not the network: somewhere it played another move


def _rollout_dir(tmp_path, make_net):
    """A rollout policy distilled from a tiny network (a few games), as the rollout stage writes one."""
    positions, _ = teacher_positions(NetSpec.from_net(make_net(1), "t").player(FP32, "cpu"), 3, seed=0)
    net = fit_rollout(positions, positions, RolloutConfig(hidden=8, layers=1), epochs=1, lr=1e-2, batch_size=64,
                      seed=0)
    return save_rollout(net, tmp_path / "rollout")


def test_phase2_moves_its_expert_and_leaves_its_rollout_policy_beside_its_model(project, params, monkeypatch,
                                                                                 make_net):
    from pipeline.rl import training

    params["rl"]["phase1"]["loops"] = 1
    params["rl"]["phase2"].update(loops={"point": 2, "wp": 0}, algorithm="expert_it", games_per_loop=2)
    params["rl"]["expert"]["rollout"] = str(_rollout_dir(project, make_net))
    params["rollout"].update(hidden=8, layers=1, epochs=1)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    jobs = []
    original_play = training.PhaseRunner.play
    monkeypatch.setattr(training.PhaseRunner, "play",
                        lambda self, job, desc: jobs.append(job) or original_play(self, job, desc))
    out = rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    assert out["loops"] == 2 and out["games"] == 4
    assert json.loads((project / "results/rl/point/run.json").read_text())["algorithm"] == "expert_it"
    searchers = [job.players[job.recorder.searcher] for job in jobs]
    for job, searcher in zip(jobs, searchers):
        assert isinstance(searcher, SearchSpec) and job.recorder.searcher not in {i for g in job.games for i in g.seats}
        assert searcher.base.weights == job.players[0].weights  # it searches over the learner as it is this loop
        assert job.recorder.loss == "logit_mse" and job.recorder.temperature == 0.3  # rl.expert.temperature.point
    assert jobs[0].players[0].weights != jobs[1].players[0].weights  # the second loop searches the fitted net...
    assert searchers[0].rollout.weights != searchers[1].rollout.weights  # ... with a rollout policy distilled again
    one, two = (torch.load(project / f"models/{d}/point/model.pt") for d in ("rl_phase1", "rl"))
    assert any(not torch.equal(one[k], two[k]) for k in one)
    # the last rollout policy, distilled from the final network, beside it: what a search of the model plays out with
    kept = torch.load(project / "checkpoints/rl/point" / STATE_FILE, weights_only=False)["algorithm"]
    last = torch.load(io.BytesIO(kept["weights"]))
    saved = load_rollout_net(project / "models/rl/point" / PLAYOUTS)[0].state_dict()
    assert saved.keys() == last.keys() and all(torch.equal(saved[k], last[k]) for k in saved)
    assert kept["weights"] != searchers[1].rollout.weights  # distilled again after the last loop's fit
    assert isinstance(algorithm_for(parse_params(params).rl, 2, parse_params(params).rollout), ExpertIteration)


def test_a_phase2_without_loops_leaves_its_experts_rollout_policy_beside_its_model(project, params, make_net):
    """rl.phase2.loops 0 (the default for point): the model still searches with a rollout policy, the expert's."""
    params["rl"]["phase1"]["loops"] = 1
    params["rl"]["phase2"].update(loops={"point": 0, "wp": 0}, algorithm="expert_it", games_per_loop=2)
    params["rl"]["expert"]["rollout"] = str(_rollout_dir(project, make_net))
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    expert = load_rollout_net(params["rl"]["expert"]["rollout"])[0].state_dict()
    saved = load_rollout_net(project / "models/rl/point" / PLAYOUTS)[0].state_dict()
    assert saved.keys() == expert.keys() and all(torch.equal(saved[k], expert[k]) for k in saved)


def test_a_tuned_phase2_leaves_phase1s_fingerprint(params):
    before = parse_params(params).rl
    params["rl"]["phase2"].update(games_per_loop=8, algorithm="expert_it")
    params["rl"]["expert"]["deals"] = 16
    after = parse_params(params).rl
    assert before.fingerprint(1, "point") == after.fingerprint(1, "point")  # phase 1 resumes, finished
    assert before.fingerprint(2, "point") != after.fingerprint(2, "point")  # phase 2 starts afresh


@pytest.mark.parametrize("change", ["rollout_file", "rollout_param"])
def test_phase2s_fingerprint_holds_its_rollout_policy_and_how_it_distils_it(project, params, make_net, change):
    """Retraining the rollout policy, or changing a rollout.* param phase 2 distils with, trains phase 2 again."""
    params["rl"]["phase2"]["algorithm"] = "expert_it"
    rollout = _rollout_dir(project, make_net)
    params["rl"]["expert"]["rollout"] = str(rollout)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    cfg = phase_config(2, "point", parse_params(params), PhasePaths.layout(2, "point"))
    before = phase_fingerprint(cfg)
    if change == "rollout_file":
        w = torch.load(rollout / "model.pt")
        w = {k: v + 1.0 for k, v in w.items()}
        torch.save(w, rollout / "model.pt")
    else:
        params["rollout"]["epochs"] += 1
    after = phase_fingerprint(phase_config(2, "point", parse_params(params), PhasePaths.layout(2, "point")))
    assert before != after
