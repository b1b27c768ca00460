"""expert_it: self-play searched by the all-decision search, the network fitted to its improved policy with an
anchor, the next loop searching over the fitted network."""

from __future__ import annotations

import json

import numpy as np
import torch

from pipeline.net.inference import FP32
from pipeline.params import parse_params
from pipeline.params.rl import Expert
from pipeline.rl.algorithms import algorithm_for
from pipeline.rl.algorithms.expert_iteration import ExpertIteration, anchored_loss
from pipeline.rl.learner import collate
from pipeline.search.player import SearchSpec
from pipeline.search.spec import SearchOptions
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job
from pipeline.selfplay.branches import BranchSpec
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, rl_stage


def _searched_job(make_net, deals=4):
    me = NetSpec.from_net(make_net(0), "learner")
    searcher = SearchSpec("searcher", me, RewardModel("point"), SearchOptions(deals=deals, k=3), seed=5)
    return PlayJob(players=(me, searcher), games=(GameSpec(3, (0, 0), (True, True)),), reward=RewardModel("point"),
                   branches=BranchSpec(1.0, 1.0, (0, 1, 2), loss="cross_entropy", search=1), num_rounds=1)


def test_a_searched_decision_plays_the_search_and_records_softmax_of_its_improved_policy(make_net):
    job = _searched_job(make_net)
    samples = play_job(job).samples
    assert len(samples) >= 5 and {s.obs.decision for s in samples} >= {0, 1}
    searcher = job.players[1].player(FP32, "cpu")
    changed = 0
    for s in samples:  # the same search again, one decision at a time: it depends on the observation only
        scores = searcher.model.values([s.obs])
        choice, policy = searcher.improve([s.obs], scores)
        legal = np.isfinite(policy[0])
        assert s.action == int(choice[0].argmax())
        p = np.exp(policy[0, legal] - policy[0, legal].max())
        np.testing.assert_allclose(s.target[legal], p / p.sum(), rtol=1e-5, atol=1e-7)
        assert (s.target[~legal] == 0).all() and abs(float(s.target.sum()) - 1.0) < 1e-5
        changed += s.action != int(scores[0].argmax())
    assert changed  # the search is not the network: somewhere it played another move


def test_the_anchor_term_keeps_the_fit_near_its_anchor(make_net):
    from pipeline.engine import GameState
    from pipeline.selfplay.batched import Sample

    rng = np.random.default_rng(0)
    samples = []
    for seed in range(8):
        s = GameState(seed=seed)
        obs = s.observation(s.current_player)
        t = np.zeros(50, np.float32)
        legal = s.legal_actions()
        t[legal] = rng.dirichlet(np.full(len(legal), 0.3)).astype(np.float32) + 1e-6  # far from the network's
        samples.append(Sample(obs, legal[0], 0.0, t / t.sum()))
    batch = collate(samples)
    x, d, legal = batch[0], batch[1], batch[5]

    def fitted_kl(weight: float) -> float:
        net = make_net(0)
        algo = ExpertIteration(Expert(decisions=["discard"], fraction=1.0, deals=2, k=2, z=2.0, gap=4.0, rollout="self",
                                      anchor="start", anchor_weight=weight))
        algo.start_loop(net, make_net(1))
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        for _ in range(60):
            opt.zero_grad()
            algo.loss(net, batch).backward()
            opt.step()
        with torch.no_grad():
            _, _, kl = anchored_loss(net(x, d).float(), batch[4], legal, algo.anchor_net(x, d).float(), 1.0)
        assert set(algo.fit_metrics()) == {"expert/cross_entropy", "expert/kl_anchor"}
        return float(kl)

    free, anchored = fitted_kl(0.0), fitted_kl(10.0)
    assert anchored < 0.5 * free  # the anchor holds the fitted policy near the loop's start
    out = make_net(0)(x, d).float()  # no anchor drift at the anchor itself
    loss, ce, kl = anchored_loss(out, batch[4], legal, out, 3.0)
    assert float(kl) == 0.0 and torch.equal(loss, ce)


def test_phase2_of_expert_iteration_end_to_end(project, params, monkeypatch):
    from pipeline.rl import training

    params["rl"]["phase1"]["loops"] = 1
    params["rl"]["phase2"].update(loops=2, algorithm="expert_it", games_per_loop=2)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    jobs, results = [], []
    original_play = training.PhaseRunner.play

    def play(self, job, desc):
        jobs.append(job)
        results.append(original_play(self, job, desc))
        return results[-1]

    monkeypatch.setattr(training.PhaseRunner, "play", play)
    out = rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    assert out["loops"] == 2 and out["games"] == 4
    assert json.loads((project / "results/rl/point/run.json").read_text())["algorithm"] == "expert_it"
    for job, (result, _) in zip(jobs, results):
        searcher = job.players[job.branches.search]
        assert isinstance(searcher, SearchSpec) and job.branches.search not in {i for g in job.games for i in g.seats}
        assert searcher.base.weights == job.players[0].weights  # it searches over the learner as it is this loop
        assert result.samples and all(s.target is not None for s in result.samples)
    assert jobs[0].players[0].weights != jobs[1].players[0].weights  # the second loop searches the fitted net
    one, two = (torch.load(project / f"models/{d}/point/model.pt") for d in ("rl_phase1", "rl"))
    assert any(not torch.equal(one[k], two[k]) for k in one)
    assert algorithm_for(parse_params(params).rl, 2).__class__ is ExpertIteration


def test_a_tuned_phase2_leaves_phase1s_fingerprint(params):
    before = parse_params(params).rl
    params["rl"]["phase2"].update(games_per_loop=8, algorithm="expert_it", gate_games=4)
    params["rl"]["expert"]["deals"] = 16
    after = parse_params(params).rl
    assert before.fingerprint(1, "point") == after.fingerprint(1, "point")  # phase 1 resumes, finished
    assert before.fingerprint(2, "point") != after.fingerprint(2, "point")  # phase 2 starts afresh
