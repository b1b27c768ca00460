import random

from pipeline.engine import GameState
from pipeline.engine.aec import KoiKoiAEC


def test_standard_aec_loop_plays_a_game_and_rewards_sum_to_the_points():
    env = KoiKoiAEC()
    env.reset(seed=4)
    rng = random.Random(0)
    totals = {a: 0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        legal = [i for i, m in enumerate(obs["action_mask"]) if m]
        assert obs["observation"].player == env.possible_agents.index(agent)
        env.step(rng.choice(legal))
    assert env.agents == []
    points = env.state.points
    assert [totals[a] for a in env.possible_agents] == [points[0] - 30, points[1] - 30]


def test_aec_reset_seed_matches_the_engine():
    env = KoiKoiAEC()
    env.reset(seed=9)
    assert env.state.hands == GameState(seed=9).hands
