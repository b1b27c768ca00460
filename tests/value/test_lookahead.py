"""The afterstate value and the one-step lookahead player: targets, exact terminals, no hidden card."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny import TINY as TINY_VALUE
from tiny import assert_blind

from pipeline.engine import GAME_OVER, KOIKOI_DECISION, STOP, GameState
from pipeline.net.inference import FP32
from pipeline.net.value_model import ValueNet
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from pipeline.value.lookahead import LookaheadPlayer, LookaheadSpec
from pipeline.value.samples import round_targets, value_samples
from pipeline.value.winprob import WinProbTable

TABLE = WinProbTable(num_rounds=8, init_points=30, coef=[[0.0, 3.0, 0.2]] * 8)



def value_net(seed: int = 0) -> ValueNet:
    torch.manual_seed(seed)
    return ValueNet(TINY_VALUE).eval()


def states_with_a_call(n: int = 3):
    """Koi-koi decisions of random games (where STOP's reward is exact)."""
    rng = np.random.default_rng(0)
    for seed in range(200):
        s = GameState(seed=seed)
        while s.phase != GAME_OVER:
            if s.phase == KOIKOI_DECISION:
                yield s
                n -= 1
                if not n:
                    return
            legal = s.legal_actions()
            s.step(legal[int(rng.integers(len(legal)))])


def test_values_depend_only_on_the_observation(make_net):
    point = RewardModel("point", 1.0)
    player = LookaheadPlayer(NetSpec.from_net(make_net(0), "p").player(FP32, "cpu"), value_net(), point, 0.5, 1.0)
    rng = np.random.default_rng(1)
    compared = moved = 0
    for seed in range(5):
        s = GameState(seed=seed)
        for _ in range(10):
            moved += assert_blind(lambda st: player.values([st.observation(st.player)]), s, s.player, rng)[1]
            compared += 1
            s.step(s.legal_actions()[0])
    assert moved > 0.9 * compared


def test_stop_is_valued_exactly(make_net):
    point = RewardModel("point", 1.0)
    player = LookaheadPlayer(NetSpec.from_net(make_net(0), "p").player(FP32, "cpu"), value_net(), point, 1.0, 0.0)
    for s in states_with_a_call():
        q = player.action_scores([s.observation(s.player)])[0]
        assert q[STOP] == s.yaku_points(s.player)  # stopping takes the yaku points, no estimate
        assert np.isfinite(q[STOP + 1]) and np.isnan(q[:STOP]).all()


def test_value_samples_are_afterstates_with_their_rounds_rewards(make_net):
    point = RewardModel("point", 1.0)
    job = PlayJob(players=(NetSpec.from_net(make_net(0), "p"),), games=(GameSpec(7, (0, 0), (True, True)),),
                  reward=point, concurrency=1)
    result = play_job(job)
    wp = RewardModel("wp", 10.0, TABLE, 0.5)
    samples = value_samples(result, point, wp, seed=0)
    targets = round_targets(result, (point, wp))[0]
    assert samples and len(samples) < len(result.samples)  # round-ending afterstates are left out
    assert all(not s.obs.to_act or s.obs.decision in (1, 2) for s in samples)
    rewards = {(r, p): t[0] for (r, p), t in targets.items()}
    assert sum(rewards[(r, 0)] for r in range(1, len(result.outcomes[0].rounds) + 1)) == \
        result.outcomes[0].points[0] - 30
    for s in samples:
        assert s.point == rewards[(s.obs.round, s.obs.player)]
        assert s.wp == targets[(s.obs.round, s.obs.player)][1]
    last = len(result.outcomes[0].rounds)
    winner = result.outcomes[0].winner
    assert targets[(last, 0)][1] == 10 * ((0.5 if winner is None else float(winner == 0)) - 0.5)


@pytest.mark.parametrize("prior_weight", [0.0, 1.0])
def test_a_lookahead_player_plays_on_the_selfplay_engine(make_net, prior_weight):
    point = RewardModel("point", 1.0)
    net = NetSpec.from_net(make_net(0), "p")
    la = LookaheadSpec.from_nets("la", net, value_net(), point, 0.5, prior_weight)
    games = (GameSpec(1, (0, 1)), GameSpec(1, (1, 0)))
    a = play_job(PlayJob(players=(la, net), games=games, concurrency=2))
    b = play_job(PlayJob(players=(la, net), games=games, concurrency=2))
    assert [o.points for o in a.outcomes] == [o.points for o in b.outcomes]  # same games: reproducible


def test_a_saved_model_with_a_value_looks_ahead_wherever_it_plays(make_net, tmp_path):
    """``load_agent`` of a model directory with ``value.pt`` plays by lookahead, in this process and on the
    self-play engine alike (the same games), and its meta says how."""
    from pipeline.agents.loader import load_agent
    from pipeline.duel.runner import duel_agents, play_duel
    from pipeline.net.modelio import save_model
    from pipeline.value.lookahead import lookahead_meta

    wp = RewardModel("wp", 10.0, TABLE, 0.5)
    save_model(make_net(0), tmp_path / "rl", {"kind": "rl", "lookahead": lookahead_meta(wp, 0.1, 1.0, (0, 1, 2))},
               value=value_net(3))
    save_model(make_net(1), tmp_path / "sl", {"kind": "sl"})
    a, b = load_agent(str(tmp_path / "rl")), load_agent(str(tmp_path / "sl"))
    assert isinstance(a.spec, LookaheadSpec) and isinstance(a.player, LookaheadPlayer)
    from pipeline.agents.model_agent import ModelAgent

    plain = ModelAgent(a.net)  # the same network without its value
    obs = [GameState(seed=s).observation(GameState(seed=s).player) for s in range(4)]
    assert not np.array_equal(a.action_scores(obs), plain.action_scores(obs))  # the value changes the scores
    arena = play_duel(a, b, 4, seed=2, num_rounds=2)
    engine = duel_agents(a, b, 4, seed=2, num_rounds=2, workers=1)
    assert (engine.wins, engine.losses, engine.draws, engine.points) == (
        arena.wins, arena.losses, arena.draws, arena.points)
    save_model(make_net(0), tmp_path / "rl", {"kind": "rl"})  # rewritten without a value: plays plainly again
    assert not isinstance(load_agent(str(tmp_path / "rl")).spec, LookaheadSpec)
