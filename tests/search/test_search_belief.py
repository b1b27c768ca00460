"""``belief`` and ``exact``: deals weighted by an opponent model's likelihood of the opponent's play this round,
and every deal of an endgame played; both from the searcher's observation alone."""

from __future__ import annotations

import math
from itertools import combinations, permutations

import numpy as np
import pytest
import torch
from tiny import assert_blind

from pipeline.agents import load_agent
from pipeline.agents.base import legal_list
from pipeline.agents.model_agent import NetPlayer
from pipeline.engine import DECISION_NAMES, DISCARD, GameState, Observation, determinize, ids_of
from pipeline.engine.cards import MONTH_MASK
from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.net.modelio import save_model
from pipeline.search.belief import all_deals, deal_count, draws_left, log_weights, opponent_decisions
from pipeline.search.player import SearchPlayer
from pipeline.search.spec import SearchOptions, parse_options, parse_search
from pipeline.selfplay.playout import branch, play_out
from pipeline.selfplay.rewards import RewardModel

ALL = tuple(range(len(DECISION_NAMES)))

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny nets: one torch thread (tests/conftest.py)


@pytest.fixture(scope="module")
def net() -> KoiKoiNet:
    torch.manual_seed(0)
    return KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1, dropout=0.0)).eval()


@pytest.fixture(scope="module")
def other_net() -> KoiKoiNet:
    torch.manual_seed(1)
    return KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1, dropout=0.0)).eval()


class Capturer:
    """An opponent model that discards a capturing card whenever it holds one (logit 60 against 0), else any card;
    uniform at picks and koi-koi calls."""

    def values(self, observations):
        out = np.full((len(observations), 50), -np.inf)
        for r, o in enumerate(observations):
            for a in ids_of(o.legal_mask) + [a for a in (48, 49) if o.legal_mask >> a & 1]:
                out[r, a] = 60.0 if o.decision == DISCARD and o.field & MONTH_MASK[a >> 2] else 0.0
        return out


class Flat:
    """An opponent model that finds every legal action equally likely."""

    def values(self, observations):
        return np.where([[o.legal_mask >> a & 1 for a in range(50)] for o in observations], 0.0, -np.inf)


def _captures(o: Observation) -> bool:
    return any(o.field & MONTH_MASK[c >> 2] for c in ids_of(o.hand))


def _positions(seeds, limit: int, opponent=None, turn: int = 0):
    """(state, the opponent's true decisions so far this round) at the decisions of player 0 with a choice, from
    ``turn`` on, in games of random play (the opponent, player 1, by ``opponent``'s arg-max when given)."""
    rng = np.random.default_rng(7)
    found = 0
    for seed in seeds:
        s = GameState(seed=seed, num_rounds=1)
        history: list[tuple[Observation, int]] = []
        while not s.is_over:
            obs = s.observation(s.player)
            legal = legal_list(obs)
            if s.player == 0 and len(legal) > 1 and s.turn >= turn:
                yield s.clone(), list(history)
                found += 1
                if found >= limit:
                    return
            if s.player == 1 and opponent is not None:
                a = int(np.argmax(opponent.values([obs])[0]))
            else:
                a = int(rng.choice(legal))
            if s.player == 1:
                history.append((obs, a))
            s.step(a)


def test_options_parse_and_round_trip():
    assert parse_options("belief=sl&exact=2000") == SearchOptions(belief="sl", exact=2000)
    assert SearchOptions().belief == "uniform" and SearchOptions().exact == 0  # today's search by default
    o = SearchOptions(deals=4, belief="models/rl/wp", exact=500)
    assert parse_options(o.query()) == o and o.query() == "deals=4&belief=models/rl/wp&exact=500"
    for spec, message in (("search:m?belief=", "search option belief='': must be uniform, sl or a model directory"),
                          ("search:m?exact=-1", "search option exact='-1': must be an integer >= 0"),
                          ("search:m?exact=all", "search option exact='all': must be an integer >= 0")):
        with pytest.raises(ValueError) as e:
            parse_search(spec)
        assert "\n" not in str(e.value) and str(e.value) == f"agent {spec!r}: {message}"


def test_loading_names_a_bad_belief(net, tmp_path):
    model = str(save_model(net, tmp_path / "tiny", {"kind": "sl"}))
    for belief, message in ((tmp_path / "none", "none': no such model directory"),
                            ("random", "random is not a model directory")):
        spec = f"search:{model}?belief={belief}&reward=point"
        with pytest.raises(ValueError) as e:
            load_agent(spec)
        text = str(e.value)
        assert "\n" not in text and text.startswith(f"agent {spec!r}: search option belief=") and message in text
    agent = load_agent(f"search:{model}?belief={model}&reward=point&deals=2")
    assert agent.player.belief is not None


def test_the_duel_command_takes_belief_and_exact(net, tmp_path, capsys):
    from pipeline.cli import main

    model = str(save_model(net, tmp_path / "tiny", {"kind": "sl"}))
    spec = f"search:{model}?deals=2&decisions=koikoi,discard&reward=point&belief={model}&exact=100"
    assert main(["duel", spec, model, "--games", "2", "--rounds", "2", "--workers", "0"]) == 0
    out = capsys.readouterr().out
    assert '"games": 2' in out and '"effective_deals": ' in out and '"exact": ' in out


def test_the_opponents_decisions_are_rebuilt_from_the_searchers_view():
    """Replayed on the true opponent hand, the round's public history gives back exactly the observations the
    opponent had at its decisions and the actions it took; on a deal of the searcher's, observations that differ
    only in the opponent's hand."""
    checked = 0
    for s, history in _positions(range(30), limit=60):
        assert opponent_decisions(s, 0) == history
        deal = determinize(s.observation(0), np.random.default_rng(checked))
        rebuilt = opponent_decisions(deal, 0)
        assert [a for _, a in rebuilt] == [a for _, a in history]
        assert [o.field for o, _ in rebuilt] == [o.field for o, _ in history]
        checked += bool(history)
    assert checked > 40


def _deals(searcher: SearchPlayer, obs: Observation) -> list[GameState]:
    """The searcher's deals of a decision (its first wave)."""
    rng = searcher.rng(obs)
    return [determinize(obs, rng) for _ in range(searcher.options.deals)]


def _weights_and_values(searcher: SearchPlayer, belief: NetPlayer, obs: Observation) -> tuple:
    return log_weights(belief, obs, _deals(searcher, obs)), searcher.values([obs])


def test_the_weights_see_only_the_searchers_observation(net, other_net):
    """(a) Deal the hidden cards of the true state again: the searcher's deals, their weights and its values (so its
    choice) do not change."""
    belief = NetPlayer(other_net)
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=4, decisions=ALL), seed=5,
                            belief=belief)
    rng = np.random.default_rng(3)
    compared = 0
    for s, _ in _positions(range(4), limit=12, turn=4):
        (w, _), moved = assert_blind(lambda st: _weights_and_values(searcher, belief, st.observation(0)), s, 0, rng)
        assert moved == 1
        calls, samples = belief.forward_calls, belief.forward_samples
        searcher.values([s.observation(0)])  # the weights of all its deals: passes of 64 observations, no more
        assert belief.forward_calls - calls == -(-(belief.forward_samples - samples) // 64)
        assert np.ptp(w) > 0  # the belief does tell deals apart
        compared += 1
    assert compared == 12


def test_the_opponents_play_rules_hands_out():
    """(b) Against an opponent that always captures when it can, a deal where it held a capturing card at a decision
    where it discarded without capturing gets no weight; the deals that explain its play share all of it, and the
    true hand is among them."""
    model = Capturer()
    checked = 0
    for s, _ in _positions(range(40), limit=40, opponent=model, turn=6):
        obs = s.observation(0)
        deals = [determinize(obs, np.random.default_rng(i)) for i in range(64)] + [s]
        logw = log_weights(model, obs, deals)
        w = np.exp(logw - logw.max())
        w /= w.sum()

        def ruled_out(d: GameState) -> bool:
            return any(o.decision == DISCARD and not o.field & MONTH_MASK[a >> 2] and _captures(o)
                       for o, a in opponent_decisions(d, 0))

        out = np.array([ruled_out(d) for d in deals])
        assert not out[-1] and logw[-1] > -25  # the true hand explains the play (ruled out: below -60)
        assert w[out].sum() < 1e-9
        if out.any():
            checked += 1
    assert checked >= 10


def test_uniform_is_todays_search(net):
    """(c) ``belief=uniform`` is the search without weights, bit for bit (the same seed, the same deals); an opponent
    model that finds every action equally likely gives the same values."""
    reward = RewardModel("point")
    plain = SearchPlayer(NetPlayer(net), reward, SearchOptions(deals=5, decisions=ALL), seed=2)
    flat = SearchPlayer(NetPlayer(net), reward, SearchOptions(deals=5, decisions=ALL), seed=2, belief=Flat())
    n = 0
    for s, _ in _positions(range(6), limit=20):
        obs = s.observation(0)
        deals = _deals(plain, obs)
        acts = legal_list(obs)
        v = play_out([plain.rollout], branch(deals, acts), reward).reshape(len(acts), 5)
        q = plain.values([obs])[0]
        np.testing.assert_array_equal(q[acts], (v.sum(axis=1) / 5).astype(np.float32))  # today's mean
        np.testing.assert_allclose(flat.values([obs])[0][acts], q[acts], rtol=1e-6, atol=1e-6)
        n += 1
    assert n == 20 and plain.effective == 5 * plain.searched


def _late(limit: int):
    """Late-round positions of player 0 with a choice and few deals left."""
    for s, _ in _positions(range(200), limit=10_000, turn=14):
        if deal_count(s.observation(0)) <= 400:
            yield s
            limit -= 1
            if not limit:
                return


def test_an_endgame_is_enumerated_and_equals_brute_force(net, other_net):
    """``exact``: every (opponent hand, next draws) deal once, as many as the combinatorial count; the searcher's
    values are the belief-weighted mean over all of them computed here by brute force from the true state."""
    reward = RewardModel("point")
    belief = NetPlayer(other_net)
    searcher = SearchPlayer(NetPlayer(net), reward, SearchOptions(deals=3, decisions=ALL, exact=400), seed=0,
                            belief=belief)
    n = 0
    for s in _late(3):
        obs = s.observation(0)
        hidden = ids_of(s.hands[1]) + list(s.stock)
        k, d = len(ids_of(s.hands[1])), draws_left(obs)
        deals = all_deals(obs, 400)
        assert len(deals) == math.comb(len(hidden), k) * math.perm(len(hidden) - k, d) == deal_count(obs)
        keys = {(x.hands[1], tuple(x.stock[::-1][:d])) for x in deals}
        assert len(keys) == len(deals) and all(x.observation(0) == obs for x in deals)
        # brute force: from the true state, every opponent hand and every order of the next draws
        brute = []
        for hand in combinations(hidden, k):
            rest = [c for c in hidden if c not in hand]
            for top in permutations(rest, d):
                x = s.clone()
                x.hands[1] = sum(1 << c for c in hand)
                x.stock = sorted(set(rest) - set(top), reverse=True) + list(top[::-1])  # the undrawn in any order
                brute.append(x)
        acts = legal_list(obs)
        v = play_out([searcher.rollout], branch(brute, acts), reward).reshape(len(acts), len(brute))
        logw = log_weights(belief, obs, brute)
        w = np.exp(logw - logw.max())
        q = searcher.values([obs])[0]
        np.testing.assert_allclose(q[acts], v @ w / w.sum(), rtol=1e-5, atol=1e-5)
        n += 1
    assert n == 3 and searcher.exact == 3


def test_exact_leaves_larger_positions_to_sampling(net):
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, decisions=ALL, exact=50))
    s, _ = next(_positions(range(3), limit=1))
    assert deal_count(s.observation(0)) > 50 and all_deals(s.observation(0), 50) is None
    searcher.values([s.observation(0)])
    assert searcher.exact == 0 and searcher.deals == 3
