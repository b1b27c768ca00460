"""``search:<model>?...`` agents: the spec and its one-line errors, the choice of plain
rollouts on its deals, and no hidden information."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import assert_blind, tiny_net

from pipeline.agents.base import legal_list
from pipeline.agents.model_agent import NetPlayer
from pipeline.cli import main
from pipeline.engine import DECISION_NAMES, GameState, determinize, ids_of
from pipeline.lineup.loader import load_agent
from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import save_model
from pipeline.search.player import SearchPlayer
from pipeline.search.spec import THINK_DEALS, SearchOptions, parse_options, parse_search
from pipeline.selfplay.playout import branch, play_out
from pipeline.selfplay.rewards import RewardModel

ALL = tuple(range(len(DECISION_NAMES)))  # discard, pick, koikoi


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny nets: one torch thread (tests/conftest.py)


def rollout_values(player: NetPlayer, actions: list[int], deals: list[GameState],
                   reward: RewardModel) -> np.ndarray:
    """The reference the searcher must match: each action played on each deal, then greedy play to the round's end,
    ``(actions, deals)`` round rewards."""
    return play_out([player], branch(deals, actions), reward).reshape(len(actions), len(deals))


@pytest.fixture(scope="module")
def net() -> KoiKoiNet:
    return tiny_net(0)


@pytest.fixture(scope="module")
def tiny_model(net, tmp_path_factory) -> str:
    return str(save_model(net, tmp_path_factory.mktemp("models") / "tiny", {"kind": "sl"}))


def test_options_parse_with_their_defaults():
    model, o = parse_search("search:models/rl/wp?deals=8&decisions=koikoi,discard&top=3&margin=0.2&reward=point")
    assert model == "models/rl/wp"
    assert o == SearchOptions(deals=8, decisions=(0, 2), top=3, margin=0.2, reward="point")
    assert parse_search("search:models/sl") == ("models/sl", SearchOptions())
    assert parse_options("think=500ms") == SearchOptions(think=0.5, deals=THINK_DEALS)  # a budget, not a count
    assert parse_options("think=0.25s&deals=16").deals == 16
    for o in (SearchOptions(), SearchOptions(deals=4, decisions=ALL, think=0.5, top=2, reward="point")):
        assert parse_options(o.query()) == o  # the query round-trips


@pytest.mark.parametrize("spec, message", [
    ("search:", "a search agent needs a model directory"),
    ("search:?deals=8", "a search agent needs a model directory"),
    ("search:m?deals=0", "search option deals='0': must be an integer >= 1"),
    ("search:m?deals=many", "search option deals='many': must be an integer >= 1"),
    ("search:m?deals=", "search option deals='': must be an integer >= 1"),
    ("search:m?deals", "search options 'deals' must be name=value pairs joined by &"),
    ("search:m?decisions=koikoi,bluff", "search option decisions='koikoi,bluff': must be a comma-separated list of "
                                        "discard, pick, koikoi"),
    ("search:m?think=0s", "search option think='0s': must be a time > 0, e.g. 0.5s or 500ms"),
    ("search:m?think=soon", "search option think='soon': must be a time > 0"),
    ("search:m?top=1", "search option top='1': must be 0 (every legal action) or >= 2"),
    ("search:m?margin=1.5", "search option margin='1.5': must be a number in (0, 1]"),
    ("search:m?reward=elo", "search option reward='elo': must be wp or point"),
    ("search:m?depth=3", "unknown search option 'depth'; use deals, decisions, think"),
    ("search:m?deals=8&deals=9", "search option 'deals' given twice"),
    ("search:m?deals=8&&x", "must be name=value pairs joined by &"),
])
def test_a_bad_spec_is_one_line_naming_it(spec, message):
    with pytest.raises(ValueError) as e:
        parse_search(spec)
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"agent {spec!r}: ") and message in text


def test_loading_names_a_bad_model_or_option(tiny_model, tmp_path):
    for spec, message in ((f"search:{tmp_path / 'none'}", "none': no such model directory"),
                          ("search:random?deals=2", "random is not a model directory"),
                          (f"search:{tiny_model}?winprob={tmp_path / 'no.json'}", "set winprob=PATH or reward=point")):
        with pytest.raises(ValueError) as e:
            load_agent(spec)
        assert "\n" not in str(e.value) and message in str(e.value), str(e.value)


def test_the_duel_command_takes_a_search_spec(tiny_model, capsys):
    assert main(["duel", f"search:{tiny_model}?deals=0", "random", "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("koikoi duel: error: agent ") and err.endswith("deals='0': must be an integer >= 1")
    assert main(["duel", f"search:{tiny_model}?deals=2&decisions=koikoi,discard&reward=point", tiny_model,
                 "--games", "2", "--rounds", "2", "--workers", "0"]) == 0
    out = capsys.readouterr().out
    assert '"games": 2' in out and '"searched": ' in out


def _decisions(seeds: range, rng: np.random.Generator, limit: int):
    """States of random games at decisions with a choice, ``limit`` of them per decision type."""
    seen = {d: 0 for d in ALL}
    for seed in seeds:
        s = GameState(seed=seed, num_rounds=2)
        while not s.is_over:
            obs = s.observation(s.player)
            legal = legal_list(obs)
            if len(legal) > 1 and seen[obs.decision] < limit:
                seen[obs.decision] += 1
                yield s.clone()  # the game goes on
            s.step(int(rng.choice(legal)))
        if min(seen.values()) >= limit:
            return


def test_a_searched_decision_is_the_rollouts_choice(net):
    """On the same deals (the searcher's, from its seed and the observation), plain rollout values are the
    searcher's values, and its choice is the searcher's choice."""
    model, reward, k = NetPlayer(net), RewardModel("point"), 6
    searcher = SearchPlayer(model, reward, SearchOptions(deals=k, decisions=ALL), seed=3)
    types = set()
    for s in _decisions(range(40), np.random.default_rng(1), limit=3):
        obs = s.observation(s.player)
        q = searcher.values([obs])[0]
        rng = searcher.rng(obs)
        deals = [determinize(obs, rng) for _ in range(k)]
        acts = legal_list(obs)
        m = rollout_values(model, acts, deals, reward)
        np.testing.assert_allclose(q[acts], m.mean(axis=1), rtol=1e-6, atol=1e-6)
        assert int(q.argmax()) == acts[int(m.mean(axis=1).argmax())]
        assert np.isneginf(np.delete(q, acts)).all()
        types.add(obs.decision)
    assert types == set(ALL) and searcher.searched >= 9


def test_confidence_leaves_the_model_only_for_a_sure_paired_gain(net):
    """``confidence=z``: on plain rollout values of the same deals, the model's choice keeps its mean and every other
    action is its mean less z standard errors of its per-deal gain over that choice; z=0 is the plain search."""
    model, reward, k, z = NetPlayer(net), RewardModel("point"), 6, 1.5
    plain = SearchPlayer(model, reward, SearchOptions(deals=k, decisions=ALL), seed=3)
    sure = SearchPlayer(model, reward, SearchOptions(deals=k, decisions=ALL, confidence=z), seed=3)
    never = SearchPlayer(model, reward, SearchOptions(deals=k, decisions=ALL, confidence=1e9), seed=3)
    for s in _decisions(range(40), np.random.default_rng(1), limit=3):
        obs = s.observation(s.player)
        acts, base = legal_list(obs), int(model.values([obs])[0].argmax())
        rng = plain.rng(obs)  # the searchers' deals: one generator per decision
        m = rollout_values(model, acts, [determinize(obs, rng) for _ in range(k)], reward)
        gain = m - m[acts.index(base)]
        bound = m.mean(axis=1) - z * gain.std(axis=1, ddof=1) / np.sqrt(k)
        np.testing.assert_allclose(sure.values([obs])[0][acts], bound, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(plain.values([obs])[0][acts], m.mean(axis=1), rtol=1e-5, atol=1e-5)
        assert int(never.values([obs])[0].argmax()) == base  # no gain is sure enough: the model's choice
    # a sure switch is a switch of the plain search too (its best mean beats the model's), not the other way round
    assert sure.searched == plain.searched >= 9 and never.changed == 0 and sure.changed <= plain.changed
    assert parse_options("confidence=2&decisions=discard") == SearchOptions(confidence=2.0, decisions=(0,))
    with pytest.raises(ValueError, match="search option confidence='-1': must be a number >= 0"):
        parse_options("confidence=-1")


def test_the_searcher_sees_only_its_observation(net):
    """Deal the cards its player cannot see again, at every one of its decisions: the searcher's values (and so its
    choice) do not change, so nothing hidden reaches it; its deals are its own, not the true one."""
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, decisions=ALL), seed=0)
    rng = np.random.default_rng(4)
    compared = redealt = peeked = 0
    for seed in range(2):
        s = GameState(seed=seed, num_rounds=2)
        while not s.is_over:
            me = s.player
            obs = s.observation(me)
            if me == 0:
                q, moved = assert_blind(lambda st: searcher.values([st.observation(0)]), s, 0, rng, redeals=2)
                redealt, compared = redealt + moved, compared + 2
                if len(legal_list(obs)) > 1:
                    deal = determinize(obs, searcher.rng(obs))  # the searcher's first deal of this decision
                    peeked += deal.hands[1] == s.hands[1] and list(deal.stock) == list(s.stock)
            else:
                q = searcher.values([obs])
            s.step(int(q[0].argmax()))
    assert compared > 40 and redealt > 0.9 * compared and searcher.searched > 20
    assert peeked == 0  # its deals are not the true one


def test_a_decision_is_the_same_whatever_it_is_batched_with(net):
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, decisions=ALL), seed=2)
    states = list(_decisions(range(10), np.random.default_rng(9), limit=2))
    obs = [s.observation(s.player) for s in states]
    together = searcher.values(obs)
    for o, row in zip(obs, together):
        np.testing.assert_allclose(searcher.values([o])[0], row, rtol=1e-5, atol=1e-5)


def test_a_think_budget_bounds_the_deals(net):
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"),
                            SearchOptions(deals=THINK_DEALS, think=0.05, decisions=ALL), seed=0)
    s = next(iter(_decisions(range(5), np.random.default_rng(0), limit=1)))
    searcher.values([s.observation(s.player)])
    assert searcher.searched == 1 and 8 <= searcher.deals < THINK_DEALS  # a wave at least, far from the cap
    assert ids_of(s.hands[s.player])  # the position was real


def test_a_searcher_plays_the_pettingzoo_env(tiny_model):
    """The PettingZoo env's agents act on ``engine_observation``: a searcher takes a seat like any agent."""
    from pipeline.env.aec import env

    searcher = load_agent(f"search:{tiny_model}?decisions=discard,koikoi&deals=2&reward=point", seed=1)
    other = load_agent("random", seed=2)
    e = env()
    e.reset(seed=3)
    for name in e.agent_iter():
        _, _, terminated, truncated, info = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        agent = searcher if name == "player_0" else other
        e.step(agent.act([e.unwrapped.engine_observation(name)])[0])
    assert "winner" in info and searcher.player.searched > 0
