"""Branch targets (rl.algorithm: rollout_pi, its ``BranchRecorder``): playouts of the true state asked of the play job,
soft policy-iteration targets."""

from dataclasses import replace

import numpy as np
import pytest
import torch
from tiny import assert_fp32_close

from pipeline.net.encoding import legal_masks
from pipeline.params import parse_params
from pipeline.rl.algorithms.rollout_pi import BranchRecorder, RolloutPolicyIteration
from pipeline.rl.learner import PolicyLearner, SampleBuffer, fit_pass
from pipeline.selfplay.batched import GameSpec, PlayJob, Recorder, play_job, play_one_by_one
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, rl_stage


def _job(make_net, epsilon: float = 0.0, fraction: float = 1.0, temperature: float = 1.0) -> PlayJob:
    a = NetSpec.from_net(make_net(0), "a", epsilon)
    b = NetSpec.from_net(make_net(1), "b")
    games = tuple(GameSpec(300 + i, (0, 1) if i % 2 else (1, 0), (True, False)) for i in range(4))
    games += (GameSpec(400, (0, 0), (True, True)),)
    return PlayJob(players=(a, b), games=games, concurrency=8, reward=RewardModel("point"), num_rounds=2,
                   recorder=BranchRecorder(fraction, temperature))


def test_a_cloned_branch_replays_the_greedy_game(make_net):
    """A greedy game credits its own round to the action it took; a clone of that action must agree.

    epsilon 1e-12 never explores but turns that shortcut off, so every action is played by a clone.
    """
    job = _job(make_net)
    own = play_job(job)
    cloned = play_job(replace(job, players=(job.players[0].with_epsilon(1e-12), job.players[1])))
    plain = play_job(replace(job, recorder=Recorder()))
    assert [o.points for o in own.outcomes] == [o.points for o in cloned.outcomes] == [o.points for o in plain.outcomes]
    multi = [s for s in plain.samples if bin(s.obs.legal_mask).count("1") > 1]
    assert len(own.samples) == len(multi) > 20  # one sample per decision with a choice
    assert [(s.action, s.reward) for s in own.samples] == [(s.action, s.reward) for s in multi]
    assert [(s.action, s.reward) for s in cloned.samples] == [(s.action, s.reward) for s in multi]
    for x, y in zip(own.samples, cloned.samples, strict=True):
        assert_fp32_close(x.target, y.target)


def test_targets_are_distributions_over_the_legal_actions(make_net):
    samples = play_job(_job(make_net, epsilon=0.2)).samples
    legal = legal_masks([s.obs for s in samples])
    targets = np.stack([s.target for s in samples])
    assert np.allclose(targets.sum(1), 1.0, atol=1e-5)
    assert (targets[~legal] == 0).all() and (targets[legal] > 0).all()
    assert {s.obs.decision for s in samples} >= {0, 2}  # discards and koi-koi decisions both branch


def test_a_hot_temperature_keeps_the_prior(make_net):
    """At a huge temperature rewards barely tilt the target: its mode is the greedy player's action."""
    hot = play_job(_job(make_net, temperature=1e6)).samples
    assert all(int(s.target.argmax()) == s.action for s in hot)


def test_batched_branches_equal_one_game_at_a_time(make_net):
    job = _job(make_net, epsilon=0.3, fraction=0.5)
    a, b = play_job(job), play_one_by_one(job)
    assert [(s.action, s.reward) for s in a.samples] == [(s.action, s.reward) for s in b.samples]
    for x, y in zip(a.samples, b.samples, strict=True):
        assert_fp32_close(x.target, y.target)


def test_determinized_branches_average_the_true_deal_and_redealt_ones(make_net):
    """``samples`` k: each branched action is played on the true deal and k - 1 redealt copies; the
    target is built from the mean reward. The games themselves are unchanged, and the batch is reproducible."""
    job = _job(make_net, epsilon=0.0)
    one = play_job(job)
    job3 = replace(job, recorder=replace(job.recorder, samples=3))
    three, again = play_job(job3), play_job(job3)
    assert [o.points for o in three.outcomes] == [o.points for o in one.outcomes]
    assert [(s.action, s.reward) for s in three.samples] == [(s.action, s.reward) for s in again.samples]
    assert [(s.action, s.reward) for s in three.samples] == [
        (s.action, s.reward) for s in play_one_by_one(job3).samples]
    assert len(three.samples) == len(one.samples) > 20
    assert all(abs(s.reward * 3 - round(s.reward * 3)) < 1e-9 for s in three.samples)  # a mean over 3 deals
    assert sum(x.reward != y.reward for x, y in zip(one.samples, three.samples)) > len(one.samples) // 4
    assert np.allclose(np.stack([s.target for s in three.samples]).sum(1), 1.0, atol=1e-5)


def test_cross_entropy_pass_moves_the_policy_towards_the_targets(make_net):
    samples = play_job(_job(make_net, temperature=0.5)).samples
    learner = PolicyLearner(make_net(0), lr=3e-3, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False)
    buffer = SampleBuffer(samples)

    def mean_ce() -> float:
        with torch.no_grad():
            from pipeline.rl.learner import collate

            return float(learner.loss(collate(samples)))

    before = mean_ce()
    losses = fit_pass(learner, buffer, 32, seed=0, epochs=3)
    assert set(losses) <= {"loss/discard", "loss/pick", "loss/koikoi"} and losses
    assert mean_ce() < before


def test_logit_targets_are_the_prior_plus_reward_over_temperature_centred(make_net):
    """``logit_mse`` targets: prior + reward / temperature on the branched actions, centred; NaN elsewhere.

    The same branches as the distribution targets, whose softmax they are."""
    job = _job(make_net, epsilon=0.2, temperature=2.0)
    dist = play_job(job).samples
    logit = play_job(replace(job, recorder=replace(job.recorder, loss="logit_mse"))).samples
    assert len(dist) == len(logit) > 20
    for d, lg in zip(dist, logit, strict=True):
        support = ~np.isnan(lg.target)
        assert (support == (d.target > 0)).all() and abs(float(lg.target[support].sum())) < 1e-4
        z = np.exp(lg.target[support] - lg.target[support].max())
        np.testing.assert_allclose(z / z.sum(), d.target[support], rtol=1e-4, atol=1e-6)


def test_a_logit_mse_pass_moves_the_outputs_towards_the_targets(make_net):
    from pipeline.rl.learner import collate

    job = _job(make_net, temperature=0.5)
    samples = play_job(replace(job, recorder=replace(job.recorder, loss="logit_mse"))).samples
    learner = PolicyLearner(make_net(0), lr=3e-3, algorithm=RolloutPolicyIteration("logit_mse"), augment=False)
    with torch.no_grad():
        before = float(learner.loss(collate(samples)))
    fit_pass(learner, SampleBuffer(samples), 32, seed=0, epochs=3)
    with torch.no_grad():
        assert float(learner.loss(collate(samples))) < before


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["logit_mse", "koikoi"])
def test_rollout_pi_phases_resume_and_reproduce(project, params, loss):
    """``koikoi``: the shape of the defaults (koi-koi decisions only, on redealt copies, logit targets, both
    seats of phase 1 recording, a replay of past loops, month relabelling). The cross-entropy loss (the tiny
    params') resumes in tests/rl/test_training.py's kill test."""
    # two games a loop, one from each seat: every decision of a game branches, the cost of these phases
    params["rl"].update(algorithm="rollout_pi", epochs=2, games_per_loop=2)
    params["rl"]["branch"]["loss"] = "logit_mse" if loss == "koikoi" else loss
    if loss == "koikoi":
        params["rl"]["branch"].update(decisions=["koikoi"], samples=3)
        params["rl"].update(games_per_loop=8, replay=2, augment=True)
        params["rl"]["phase1"]["record_sl"] = True
    params["rl"]["phase1"]["loops"] = 1
    first = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    w1 = torch.load(project / "models/rl_phase1/point/model.pt")
    (project / "checkpoints/rl_phase1/point/state.pt").unlink()
    again = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    for k, v in torch.load(project / "models/rl_phase1/point/model.pt").items():
        torch.testing.assert_close(v, w1[k])  # the same seed gives the same weights
    first.pop("train_seconds"), again.pop("train_seconds")  # wall clock
    assert first == again and first["loops"] == 1
    sl = torch.load(project / "models/sl/model.pt")
    assert any(not torch.equal(v, sl[k]) for k, v in w1.items())  # the loop had samples to learn from
    params["rl"]["phase1"]["loops"] = 2  # a raised budget resumes after loop 1
    assert rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"),
                    progress=False, mlflow=False)["loops"] == 2
    p2 = rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    assert p2["global_loops"] == 3


def test_an_anchor_prior_tilts_the_anchor_not_the_player(make_net):
    """With the other net as anchor, a hot target's mode is the anchor's greedy choice, not the player's."""
    job = _job(make_net, temperature=1e6)
    job = replace(job, recorder=replace(job.recorder, anchor=1))
    samples = play_job(job).samples
    anchor = job.players[1].build()
    from pipeline.agents.model_agent import NetPlayer

    best = NetPlayer(anchor).values([s.obs for s in samples]).argmax(1)
    assert [int(s.target.argmax()) for s in samples] == best.tolist()
    assert any(s.action != b for s, b in zip(samples, best))  # the two nets disagree somewhere


def test_flat_targets_are_the_rewards_alone(make_net):
    """``prior: none``: the logit target is reward / temperature, centred; the prior's tilt is gone.

    The tilted target minus the flat one is the recording player's centred outputs: all the prior added."""
    from pipeline.agents.model_agent import NetPlayer

    job = _job(make_net, temperature=2.0)
    job = replace(job, recorder=replace(job.recorder, loss="logit_mse"))
    tilted = play_job(job).samples
    flat = play_job(replace(job, recorder=replace(job.recorder, flat=True))).samples
    assert len(tilted) == len(flat) > 20
    nets = [NetPlayer(spec.build()) for spec in job.players]
    moved = 0
    for t, f in zip(tilted, flat, strict=True):
        support = ~np.isnan(f.target)
        assert (support == ~np.isnan(t.target)).all() and abs(float(f.target[support].sum())) < 1e-4
        added = t.target[support] - f.target[support]
        moved += float(np.abs(added).max()) > 1e-3
        centred = [v[support] - v[support].mean() for v in (n.values([t.obs])[0] for n in nets)]
        assert any(np.allclose(added, c, atol=1e-4) for c in centred)
    assert moved > len(flat) // 2
