"""rl.algorithm advantage: the anchored player, the advantage network's targets, a learner that learns them, saved
models any agent path plays, no hidden card, same seed same weights (resume: tests/rl/test_training.py)."""

from __future__ import annotations

import json

import numpy as np
import torch
from tiny import TINY, assert_blind, assert_fp32_close

from pipeline.agents.loader import load_agent
from pipeline.engine import GameState
from pipeline.net.advantage_model import LEGAL_ROW, AdvantageNet
from pipeline.net.encoding import encode
from pipeline.net.inference import FP32
from pipeline.net.modelio import load_advantage
from pipeline.params import parse_params
from pipeline.rl.algorithms import algorithm_for
from pipeline.rl.learner import PolicyLearner, SampleBuffer, fit_pass
from pipeline.selfplay.anchored import AnchoredSpec, log_softmax
from pipeline.selfplay.batched import GameSpec, PlayJob, Sample, play_job, play_one_by_one
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, rl_stage


def adv_net(seed: int = 0, trained: bool = False) -> AdvantageNet:
    torch.manual_seed(seed)
    net = AdvantageNet(TINY)
    if trained:  # weights off zero: a tilt that changes choices
        torch.nn.init.normal_(net.adv.weight, std=3.0)
        torch.nn.init.normal_(net.adv.bias, std=3.0)
    return net.eval()


def observations(n_games: int = 4, steps: int = 30):
    out = []
    for seed in range(n_games):
        s = GameState(seed=seed)
        for _ in range(steps):
            if not s.legal_actions():  # the game is over
                break
            out.append(s.observation(s.player))
            s.step(s.legal_actions()[len(s.legal_actions()) // 2])
    return out


def test_an_untrained_advantage_plays_exactly_sl(make_net):
    sl = NetSpec.from_net(make_net(0), "sl")
    obs = observations()
    anchored = AnchoredSpec.from_nets("a", sl, adv_net(), tau=0.1).player(FP32, "cpu").values(obs)
    plain = sl.player(FP32, "cpu").values(obs)
    assert np.array_equal(anchored.argmax(1), plain.argmax(1))
    assert_fp32_close(anchored[np.isfinite(anchored)], log_softmax(plain)[np.isfinite(plain)])


def test_scores_are_log_pi_plus_advantage_over_tau_where_it_applies(make_net):
    sl = NetSpec.from_net(make_net(0), "sl")
    net = adv_net(trained=True)
    obs = observations()
    player = AnchoredSpec.from_nets("a", sl, net, tau=0.5, decisions=(0,)).player(FP32, "cpu")
    got = player.values(obs)
    logits = sl.player(FP32, "cpu").values(obs)
    with torch.no_grad():
        a = net(torch.from_numpy(encode(obs)), torch.tensor([o.decision for o in obs])).numpy()
    for i, o in enumerate(obs):
        legal = np.isfinite(logits[i])
        want = log_softmax(logits[i:i + 1])[0] + a[i] / 0.5 if o.decision == 0 else logits[i]
        assert_fp32_close(got[i][legal], want[legal])
        assert np.isneginf(got[i][~legal]).all()
    assert (got.argmax(1) != logits.argmax(1)).any()  # the tilt changes some discards


def test_the_fit_target_is_v_plus_centred_advantage_at_the_taken_action():
    net = adv_net(trained=True)
    obs = observations(1)
    x = torch.from_numpy(encode(obs))
    d = torch.tensor([o.decision for o in obs])
    act = torch.tensor([int(o.legal_mask).bit_length() - 1 for o in obs])  # the highest legal token
    a, v = net.both(x, d)
    legal = x[:, LEGAL_ROW, :] > 0.5
    want = v + a[torch.arange(len(obs)), act] - torch.stack([a[i][legal[i]].mean() for i in range(len(obs))])
    torch.testing.assert_close(net.q_taken(x, d, act), want)


def test_the_learner_learns_which_action_pays_from_noisy_rewards(params):
    """Rewards: +1 for the highest legal token, -1 otherwise, plus noise twice that size; after fitting, the
    advantage ranks the paying action first in most held-out states (targets pooled across states)."""
    p = parse_params({**params, "rl": {**params["rl"], "algorithm": "advantage", "lr": 3e-3}}).rl
    algorithm = algorithm_for(p)
    net = algorithm.initial_net(None, p)
    rng = np.random.default_rng(0)
    obs = [o for o in observations(24, 40) if o.decision == 0 and bin(int(o.legal_mask)).count("1") > 1]
    train, held = obs[:-60], obs[-60:]

    def best(o):
        return int(o.legal_mask).bit_length() - 1

    samples = []
    for o in train:
        for a in [t for t in range(50) if (int(o.legal_mask) >> t) & 1]:
            samples.append(Sample(o, a, float((1.0 if a == best(o) else -1.0) + 2.0 * rng.standard_normal())))
    learner = PolicyLearner(net, lr=p.lr, algorithm=algorithm, augment=False)
    torch.manual_seed(0)
    fit_pass(learner, SampleBuffer(samples), 64, seed=0, epochs=6)
    with torch.no_grad():
        a = net(torch.from_numpy(encode(held)), torch.tensor([o.decision for o in held])).numpy()
    legal = np.array([[(int(o.legal_mask) >> t) & 1 for t in range(50)] for o in held], dtype=bool)
    choice = np.where(legal, a, -np.inf).argmax(1)
    chance = np.mean([1 / legal[i].sum() for i in range(len(held))])
    assert np.mean([c == best(o) for c, o in zip(choice, held)]) > max(0.5, 3 * chance)


def test_no_hidden_card_reaches_the_anchored_player(make_net):
    player = AnchoredSpec.from_nets("a", NetSpec.from_net(make_net(0), "sl"), adv_net(trained=True), 0.3) \
        .player(FP32, "cpu")
    rng = np.random.default_rng(0)
    compared = moved = 0
    for seed in range(3):
        s = GameState(seed=seed)
        for _ in range(12):
            moved += assert_blind(lambda st: player.values([st.observation(st.player)]), s, s.player, rng)[1]
            compared += 1
            s.step(s.legal_actions()[0])
    assert moved > 0.9 * compared


def test_sampled_behaviour_is_reproducible_per_game_and_explores(make_net):
    sl = NetSpec.from_net(make_net(0), "sl")
    me = AnchoredSpec.from_nets("a", sl, adv_net(trained=True), 1.0, sample=True)
    games = tuple(GameSpec(300 + i, (0, 1) if i % 2 else (1, 0), (True, False)) for i in range(6))
    job = PlayJob(players=(me, sl), games=games, concurrency=8, reward=RewardModel("point"), num_rounds=2)
    batched, single = play_job(job), play_one_by_one(job)
    assert batched.mean_batch > 1.2
    assert [(s.action, s.reward) for s in batched.samples] == [(s.action, s.reward) for s in single.samples]
    greedy = play_job(PlayJob(players=(AnchoredSpec.from_nets("a", sl, adv_net(trained=True), 1.0), sl),
                              games=games, concurrency=8, reward=RewardModel("point"), num_rounds=2))
    assert [s.action for s in batched.samples] != [s.action for s in greedy.samples]


def test_phase1_and_phase2_write_models_every_agent_path_plays(project, params):
    params["rl"]["algorithm"] = "advantage"
    summary = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert summary["algorithm"] == "advantage" and summary["games"] == 8
    d1 = project / "models/rl_phase1/point"
    adv = load_advantage(d1)
    assert adv is not None and adv.adv.weight.abs().sum() > 0  # fitted, not the zero start
    assert json.loads((d1 / "config.json").read_text())["meta"]["anchored"]["tau"] == 0.5
    torch.testing.assert_close(torch.load(d1 / "model.pt")["outs.0.weight"],
                               torch.load(project / "models/sl/model.pt")["outs.0.weight"])  # SL frozen
    rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    agent = load_agent(str(project / "models/rl/point"))
    assert isinstance(agent.spec, AnchoredSpec)
    assert len(agent.act(observations(1, 5))) == 5


def test_same_seed_same_advantage_weights(project, params):
    params["rl"]["algorithm"] = "advantage"
    params["rl"]["phase1"]["loops"] = 1
    weights = []
    for _ in range(2):
        paths = PhasePaths.layout(1, "point")
        rl_stage(1, "point", parse_params(params), paths, progress=False, mlflow=False)
        weights.append(torch.load(paths.out / "advantage.pt"))
        (paths.checkpoints / "state.pt").unlink()
    for k in weights[0]:
        torch.testing.assert_close(weights[0][k], weights[1][k])
