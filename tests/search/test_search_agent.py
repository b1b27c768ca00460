"""``search:<model>?...`` agents: the spec and its one-line errors, the choice of plain
playouts on its deals, and no hidden information."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import assert_blind, tiny_net

from pipeline.agents.base import legal_list
from pipeline.agents.model_agent import NetPlayer
from pipeline.cli import main
from pipeline.engine import DECISION_NAMES, GameState, determinize
from pipeline.lineup.loader import load_agent
from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import save_model
from pipeline.search.player import SearchPlayer, anchored_scores, log_prior
from pipeline.search.spec import SearchOptions, parse_options, parse_search
from pipeline.selfplay.rewards import RewardModel

ALL = tuple(range(len(DECISION_NAMES)))  # discard, pick, koikoi


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny nets: one torch thread (tests/conftest.py)


def reference_values(player: NetPlayer, actions: list[int], deals: list[GameState]) -> np.ndarray:
    """The reference the searcher must match, written apart from its code (no ``branch``/``play_out``): each action
    played on a copy of each deal, then the player's arg-max for both seats to the round's end; the round's points
    for the player to act, ``(actions, deals)``."""
    out = np.zeros((len(actions), len(deals)))
    for i, a in enumerate(actions):
        for j, d in enumerate(deals):
            s, me, rnd = d.clone(), d.player, d.round
            s.step(a)
            while s.round == rnd and not s.is_over:
                s.step(int(player.values([s.observation(s.player)])[0].argmax()))
            out[i, j] = s.results[rnd - 1].points[me]
    return out


@pytest.fixture(scope="module")
def net() -> KoiKoiNet:
    return tiny_net(0)


@pytest.fixture(scope="module")
def tiny_model(net, tmp_path_factory) -> str:
    return str(save_model(net, tmp_path_factory.mktemp("models") / "tiny", {"kind": "sl"}))


def test_options_parse_with_their_defaults():
    model, o = parse_search("search:models/rl/wp?deals=8&decisions=koikoi,discard&k=3&z=1.5&reward=point")
    assert model == "models/rl/wp"
    assert o == SearchOptions(deals=8, decisions=(0, 2), k=3, z=1.5, reward="point")
    assert parse_search("search:models/sl") == ("models/sl", SearchOptions())
    assert SearchOptions().decisions == ALL and SearchOptions().rollout == "own"  # every decision type by default
    assert parse_options("deals=0").deals == 0 and parse_options("rollout=models/rollout").rollout == "models/rollout"
    assert parse_options("gap=0.75").gap == 0.75
    other = SearchOptions(deals=4, decisions=(2,), k=0, z=3.0, gap=3.0, rollout="r", reward="point")
    for o in (SearchOptions(), other):
        assert parse_options(o.query()) == o  # the query round-trips


def test_a_searcher_plays_out_with_the_rollout_policy_beside_its_model_by_default(tmp_path, tiny_model):
    import shutil

    from pipeline.rollout.network import RolloutConfig, RolloutNet, save_rollout
    from pipeline.search.spec import rollout_path

    model = tmp_path / "m"
    shutil.copytree(tiny_model, model)
    assert rollout_path(str(model), "own") is None  # none beside it: the network plays its own playouts
    agent = load_agent(f"search:{model}?reward=point")
    assert agent.player.rollout is agent.player.model
    save_rollout(RolloutNet(RolloutConfig(hidden=4, layers=1)), model / "rollout")
    assert rollout_path(str(model), "own") == str(model / "rollout")
    assert rollout_path(str(model), "self") is None and rollout_path(str(model), "r") == "r"
    agent = load_agent(f"search:{model}?reward=point")
    assert agent.player.rollout is not agent.player.model  # the rollout policy distilled from it plays them
    forced = load_agent(f"search:{model}?reward=point&rollout=self").player
    assert forced.rollout is forced.model


@pytest.mark.parametrize("spec, message", [
    ("search:", "a search agent needs a model directory"),
    ("search:?deals=8", "a search agent needs a model directory"),
    ("search:m?deals=-1", "search option deals='-1': must be an integer >= 0"),
    ("search:m?deals=many", "search option deals='many': must be an integer >= 0"),
    ("search:m?deals=", "search option deals='': must be an integer >= 0"),
    ("search:m?deals", "search options 'deals' must be name=value pairs joined by &"),
    ("search:m?decisions=koikoi,bluff", "search option decisions='koikoi,bluff': must be a comma-separated list of "
                                        "discard, pick, koikoi"),
    ("search:m?k=1", "search option k='1': must be 0 (every legal action) or >= 2"),
    ("search:m?z=0", "search option z='0': must be a number > 0"),
    ("search:m?z=nan", "search option z='nan': must be a number > 0"),
    ("search:m?rollout=", "search option rollout='': must be a file path"),
    ("search:m?reward=elo", "search option reward='elo': must be wp or point"),
    ("search:m?think=1s", "unknown search option 'think'; use deals, k, z, gap, rollout"),
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
                          (f"search:{tiny_model}?rollout={tmp_path / 'nope'}&reward=point", "search option rollout="),
                          (f"search:{tiny_model}?winprob={tmp_path / 'no.json'}", "set winprob=PATH or reward=point")):
        with pytest.raises(ValueError) as e:
            load_agent(spec)
        assert "\n" not in str(e.value) and message in str(e.value), str(e.value)


def test_the_duel_command_takes_a_search_spec(tiny_model, capsys):
    assert main(["duel", f"search:{tiny_model}?deals=-2", "random", "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("koikoi duel: error: agent ") and err.endswith("deals='-2': must be an integer >= 0")
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


def test_every_candidate_plays_every_deal_and_the_prior_anchors_the_choice(net):
    """With two candidates (one round, no halving), the searcher's score of each is the reference's: its log-prior
    plus its mean paired gain over the anchor on the searcher's deals, in units of z standard errors; the choice
    is its arg-max, and the legal actions it did not keep rank below, in prior order."""
    model, k, z = NetPlayer(net), 6, 1.5
    searcher = SearchPlayer(model, RewardModel("point"), SearchOptions(deals=k, k=2, z=z, reward="point"), seed=3)
    types = set()
    for s in _decisions(range(40), np.random.default_rng(1), limit=3):
        obs = s.observation(s.player)
        scores = model.values([obs])[0]
        logp = log_prior(scores)
        q = searcher.values([obs])[0]
        cands = searcher.candidates(obs, scores)
        if len(cands) < 2:
            assert int(q.argmax()) == int(scores.argmax())
            continue
        rng = searcher.rng(obs)
        m = reference_values(model, cands, [determinize(obs, rng) for _ in range(k)])
        gain = m[1] - m[0]
        se = max(gain.std(ddof=1) / np.sqrt(k), 1e-6)
        np.testing.assert_allclose(q[cands], [logp[cands[0]], logp[cands[1]] + gain.mean() / (z * se)],
                                   rtol=1e-4, atol=1e-4)
        others = [a for a in legal_list(obs) if a not in cands]
        assert all(q[a] < q[cands].min() for a in others)
        assert [a for a in sorted(others, key=lambda a: -q[a])] == sorted(others, key=lambda a: (-logp[a], a))
        types.add(obs.decision)
    assert types == set(ALL) and searcher.searched >= 6


def test_the_candidates_are_the_likeliest_within_gap_nats_of_the_anchor(net):
    """An action more than ``gap`` nats below the network's likeliest is no candidate; a decision left with one
    candidate is not searched (the network's move)."""
    model = NetPlayer(net)
    seen = 0
    for gap in (0.25, 1.5, 40.0):
        searcher = SearchPlayer(model, RewardModel("point"), SearchOptions(deals=2, k=0, gap=gap, reward="point"))
        for s in _decisions(range(10), np.random.default_rng(4), limit=5):
            obs = s.observation(s.player)
            scores = model.values([obs])[0]
            logp = log_prior(scores)
            cands = searcher.candidates(obs, scores)
            assert cands[0] == int(scores.argmax())
            assert sorted(cands) == sorted(a for a in legal_list(obs) if logp[cands[0]] - logp[a] <= gap)
            assert searcher.searches(obs, scores) == (len(cands) > 1 and obs.decision in ALL)
            seen += len(cands) > 1
    assert seen > 0


def test_with_zero_deals_it_plays_exactly_its_network(net):
    """``deals=0``: the searcher's values are its network's, so its every move is the network's move."""
    model = NetPlayer(net)
    searcher = SearchPlayer(model, RewardModel("point"), SearchOptions(deals=0, k=0, reward="point"), seed=0)
    states = list(_decisions(range(20), np.random.default_rng(3), limit=5))
    obs = [s.observation(s.player) for s in states]
    np.testing.assert_array_equal(searcher.values(obs), model.values(obs))
    assert searcher.searched == 0


def test_a_gain_within_the_noise_keeps_the_prior():
    """The anchored score on made-up rewards: a gain under z standard errors per nat of prior keeps the anchor, a
    gain beyond it wins; a close second (the network unsure) needs less; one deal gives no evidence."""
    anchor = np.random.default_rng(0).normal(0, 1, 64)  # the deals' luck, shared by both candidates
    pattern = np.r_[np.full(32, 0.5), np.full(32, -0.5)]  # the paired difference's spread about its mean
    se = pattern.std(ddof=1) / 8  # its standard error over 64 deals
    logp = np.log([0.6, 0.6 / np.e])  # the second one nat below the anchor
    for gain, z, wins in ((1.5 * se, 2.0, False), (2.5 * se, 2.0, True), (1.5 * se, 1.0, True)):
        v = np.stack([anchor, anchor + gain + pattern])
        s = anchored_scores(logp, v, 0, z)
        assert (int(np.argmax(s)) == 1) == wins, (gain / se, z, s)
    close = np.log([0.5, 0.49])
    v = np.stack([anchor, anchor + 0.5 * se + pattern])
    assert int(np.argmax(anchored_scores(close, v, 0, 2.0))) == 1  # unsure network: half a standard error decides
    assert int(np.argmax(anchored_scores(logp, v[:, :1] + [[0.0], [9.0]], 0, 2.0))) == 0  # one deal: the prior


def test_sequential_halving_keeps_the_anchor_and_spends_the_deals(net):
    """k=4 over 16 deals: two rounds of 8 deals, four candidates then two, the anchor among them; the deals spent
    are the budget and the playouts 4 x 8 + 2 x 8."""
    model = NetPlayer(net)
    searcher = SearchPlayer(model, RewardModel("point"), SearchOptions(deals=16, k=4, reward="point"), seed=1)
    for s in _decisions(range(60), np.random.default_rng(5), limit=40):
        obs = s.observation(s.player)
        scores = model.values([obs])[0]
        if obs.decision == 0 and len(searcher.candidates(obs, scores)) == 4:
            before = searcher.stats()
            q = searcher.values([obs])[0]
            kept = [a for a in legal_list(obs) if q[a] > -1e5]
            assert len(kept) == 2 and int(scores.argmax()) in kept
            assert searcher.deals - before["deals"] == 16 and searcher.playouts - before["playouts"] == 4 * 8 + 2 * 8
            return
    pytest.fail("no discard with four candidates in 60 games")


def test_the_searcher_sees_only_its_observation(net):
    """Deal the cards its player cannot see again, at every one of its decisions: the searcher's values (and so its
    choice) do not change, so nothing hidden reaches it; its deals are its own, not the true one."""
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, k=0, reward="point"), seed=0)
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
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, k=0, reward="point"), seed=2)
    states = list(_decisions(range(10), np.random.default_rng(9), limit=2))
    obs = [s.observation(s.player) for s in states]
    together = searcher.values(obs)
    for o, row in zip(obs, together):
        np.testing.assert_allclose(searcher.values([o])[0], row, rtol=1e-5, atol=1e-5)


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


def test_with_zero_deals_a_duel_against_its_network_is_a_mirror(tiny_model):
    """``deals=0`` end to end: on duplicate deals the searcher and its network make the same moves from either seat,
    so each deal's two games split evenly: exactly half the points, whatever the deals."""
    searcher = load_agent(f"search:{tiny_model}?deals=0&reward=point", seed=0)
    network = load_agent(tiny_model, seed=1)
    from pipeline.duel.runner import play_duel

    r = play_duel(searcher, network, games=8, seed=11, num_rounds=2)
    assert r.games == 8 and r.win_rate == 0.5 and r.point_diff == 0.0 and searcher.player.searched == 0
