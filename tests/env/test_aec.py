"""The PettingZoo environment: PettingZoo's API and seed tests, rewards, nothing hidden in what a player gets."""

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from pipeline.engine import GameState, IllegalActionError
from pipeline.env.aec import AGENTS, env, raw_env
from pipeline.net.encoding import encode


@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
def test_pettingzoo_api_test_passes(make):
    api_test(make(render_mode="ansi"), num_cycles=300)


def test_pettingzoo_seed_test_passes():
    seed_test(env, num_cycles=300)


def test_random_policy_through_the_standard_loop_sums_rewards_to_the_final_points():
    e = env(num_rounds=4, init_points=20)
    totals = dict.fromkeys(AGENTS, 0)
    for seed in range(3):
        e.reset(seed=seed)
        for agent in AGENTS:
            e.action_space(agent).seed(seed)
        totals = dict.fromkeys(AGENTS, 0)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, info = e.last()
            totals[agent] += reward
            if terminated or truncated:
                action = None
            else:
                assert obs["observation"].shape == (270, 50) and obs["observation"].dtype == np.float32
                other = e.observe(AGENTS[1 - AGENTS.index(agent)])
                assert not other["action_mask"].any()  # only the player to act has legal actions
                action = e.action_space(agent).sample(obs["action_mask"])  # a numpy integer
            e.step(action)
        assert e.agents == []
        game = e.unwrapped._game
        assert game.is_over and game.num_rounds == 4
        assert [totals[a] for a in AGENTS] == [game.points[0] - 20, game.points[1] - 20]
        assert info["points"] == game.points[AGENTS.index(agent)]


def test_reset_seed_deals_as_the_engine_does():
    e = raw_env()
    e.reset(seed=9)
    g = GameState(seed=9)
    assert e._game.hands == g.hands and e.agent_selection == AGENTS[g.current_player]


def test_illegal_action_raises_and_changes_nothing():
    e = raw_env()
    e.reset(seed=1)
    agent = e.agent_selection
    obs = e.observe(agent)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        e.step(illegal)
    assert e.agent_selection == agent and np.array_equal(e.observe(agent)["observation"], obs["observation"])
    with pytest.raises(IllegalActionError, match="must be an integer"):
        e.step(1.5)


@pytest.mark.parametrize("kwargs, message", [
    ({"num_rounds": 13}, "num_rounds must be 1..12"),
    ({"init_points": 0}, "init_points"),
    ({"render_mode": "human"}, "render_mode"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**kwargs)


def _swap_hidden(game: GameState, player: int, rng: np.random.Generator) -> GameState:
    """A copy where ``player``'s opponent holds other cards: some of its hand traded with the stock."""
    g = game.clone()
    opp = 1 - player
    hand = [c for c in range(48) if g.hands[opp] >> c & 1]
    for _ in range(min(len(hand), len(g.stock), 3)):
        i, j = int(rng.integers(len(hand))), int(rng.integers(len(g.stock)))
        h, s = hand[i], g.stock[j]
        g.hands[opp] ^= (1 << h) | (1 << s)
        g.stock[j], hand[i] = h, s
    rng.shuffle(g.stock)
    return g


def test_observation_and_render_show_nothing_hidden():
    """Rearranging the opponent's hand and the stock changes neither what an agent observes nor the render."""
    e = raw_env(render_mode="ansi")
    e.action_space(AGENTS[0]).seed(0)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(4):
        e.reset(seed=seed)
        while e.agents and not e.terminations[e.agent_selection]:
            agent = e.agent_selection
            player = AGENTS.index(agent)
            game = e._game
            obs, text = e.observe(agent), e.render()
            e._game = _swap_hidden(game, player, rng)
            swapped_obs, swapped_text = e.observe(agent), e.render()
            e._game = game
            assert np.array_equal(obs["observation"], swapped_obs["observation"])
            assert np.array_equal(obs["action_mask"], swapped_obs["action_mask"])
            assert text == swapped_text
            checked += 1
            e.step(e.action_space(agent).sample(e.observe(agent)["action_mask"]))
    assert checked > 100


def test_observation_is_the_models_encoding():
    e = raw_env()
    e.reset(seed=5)
    agent = e.agent_selection
    expected = encode([e._game.observation(AGENTS.index(agent))])[0]
    assert np.array_equal(e.observe(agent)["observation"], expected)


def test_the_environment_imports_no_torch():
    import subprocess
    import sys

    code = "import sys, pipeline.env.aec; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
