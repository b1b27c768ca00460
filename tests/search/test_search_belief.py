"""``belief``, ``pool`` and ``exact``: deals weighted (or resampled from a larger pool) by an opponent model's
likelihood of the opponent's play this round, and every deal of an endgame played; all from the searcher's
observation alone."""

from __future__ import annotations

import math
from itertools import combinations, permutations

import numpy as np
import pytest
import torch
from tiny import assert_blind, assert_fp32_close

from pipeline.agents.base import legal_list
from pipeline.agents.loader import load_agent
from pipeline.agents.model_agent import NetPlayer
from pipeline.engine import DECISION_NAMES, DISCARD, GameState, Observation, determinize, ids_of
from pipeline.engine.cards import MONTH_MASK
from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.net.modelio import save_model
from pipeline.search.belief import all_deals, deal_count, draws_left, log_weights, opponent_decisions, systematic
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


def test_the_duel_command_takes_belief_exact_and_pool(net, tmp_path, capsys):
    from pipeline.cli import main

    model = str(save_model(net, tmp_path / "tiny", {"kind": "sl"}))
    spec = f"search:{model}?deals=2&decisions=koikoi,discard&reward=point&belief={model}&exact=100&pool=6"
    assert main(["duel", spec, model, "--games", "2", "--rounds", "2", "--workers", "0"]) == 0
    out = capsys.readouterr().out
    assert '"games": 2' in out and '"effective_deals": ' in out and '"exact": ' in out
    assert '"distinct_deals": ' in out


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
        out = np.array([_ruled_out(d) for d in deals])
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
        assert_fp32_close(q[acts], v @ w / w.sum())
        n += 1
    assert n == 3 and searcher.exact == 3


def test_exact_leaves_larger_positions_to_sampling(net):
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, decisions=ALL, exact=50))
    s, _ = next(_positions(range(3), limit=1))
    assert deal_count(s.observation(0)) > 50 and all_deals(s.observation(0), 50) is None
    searcher.values([s.observation(0)])
    assert searcher.exact == 0 and searcher.deals == 3


def test_pool_and_temper_parse_and_name_a_bad_value():
    o = parse_options("belief=sl&pool=128&temper=0.5")
    assert o == SearchOptions(belief="sl", pool=128, temper=0.5) and parse_options(o.query()) == o
    assert SearchOptions().pool == 0 and SearchOptions().temper == 1.0  # weighting, as before, by default
    assert parse_options("think=0.5s&belief=sl&pool=512").pool == 512  # more than the 256 deals of a budget
    for spec, message in (
            ("search:m?belief=sl&pool=32", "search option pool='32': must be 0 or more than deals (32)"),
            ("search:m?belief=sl&think=1s&pool=100", "search option pool='100': must be 0 or more than deals (256)"),
            ("search:m?belief=sl&pool=-1", "search option pool='-1': must be an integer >= 0"),
            ("search:m?pool=64", "search option pool='64': needs a belief (belief=sl or a model directory)"),
            ("search:m?temper=0.5", "search option temper='0.5': needs a belief"),
            ("search:m?belief=sl&temper=0", "search option temper='0': must be a number in (0, 1]"),
            ("search:m?belief=sl&temper=2", "search option temper='2': must be a number in (0, 1]")):
        with pytest.raises(ValueError) as e:
            parse_search(spec)
        assert "\n" not in str(e.value) and str(e.value).startswith(f"agent {spec!r}: {message}")


@pytest.mark.parametrize("seed", range(5))
def test_systematic_resampling_counts_follow_the_weights(seed):
    rng = np.random.default_rng(seed)
    weights = rng.exponential(size=40) ** 3 * (rng.random(40) > 0.3)  # skewed, some zero
    n = 64
    for u in (0.0, float(rng.random()), float(np.nextafter(1.0, 0.0))):
        at = systematic(weights, n, u)
        counts = np.bincount(at, minlength=len(weights))
        assert len(at) == n and (np.diff(at) >= 0).all()
        assert (np.abs(counts - n * weights / weights.sum()) < 1).all()  # n * w_i rounded up or down
        assert not counts[weights == 0].any()
    last = np.array([0.0, 1.0, 0.0, 0.0])  # whatever the rounding, never a zero weight past the last one
    assert (systematic(last, 5, float(np.nextafter(1.0, 0.0))) == 1).all()


def _resampler(net, belief, deals: int = 4, pool: int = 16, temper: float = 1.0, **kw) -> SearchPlayer:
    options = SearchOptions(deals=deals, decisions=ALL, pool=pool, temper=temper, **kw)
    return SearchPlayer(NetPlayer(net), RewardModel("point"), options, seed=5, belief=belief)


def _picks(searcher: SearchPlayer, obs: Observation) -> tuple[list[GameState], np.ndarray]:
    """The searcher's resampled deals of a decision, one per pick (as resampled, before duplicates are merged), and
    their indices in its pool."""
    pk = searcher.resampled([obs], [searcher.rng(obs)], [None])[0]
    first = list(dict.fromkeys(pk.at.tolist()))
    assert len(pk.deals) == len(first) and pk.counts.tolist() == [np.count_nonzero(pk.at == i) for i in first]
    return [pk.deals[first.index(i)] for i in pk.at], pk.at


def test_pool_zero_is_weighting_as_before(net, other_net):
    """``pool=0`` (or a pool no larger than ``deals``) weighs the searcher's ``deals`` deals by the belief, as
    before: the weighted mean of their playouts, the same values bit for bit whatever such pool."""
    reward, belief = RewardModel("point"), NetPlayer(other_net)
    weighting = _resampler(net, belief, deals=4, pool=0)
    small = _resampler(net, belief, deals=4, pool=4)
    n = 0
    for s, _ in _positions(range(4), limit=8, turn=4):
        obs = s.observation(0)
        deals = _deals(weighting, obs)
        acts = legal_list(obs)
        v = play_out([weighting.rollout], branch(deals, acts), reward).reshape(len(acts), 4)
        logw = log_weights(belief, obs, deals)
        w = np.exp(logw - logw.max())
        q = weighting.values([obs])[0]
        assert_fp32_close(q[acts], v @ w / w.sum())
        np.testing.assert_array_equal(small.values([obs])[0], q)
        n += 1
    assert n == 8 and weighting.distinct == 4 * weighting.searched


def test_resampled_deals_are_played_alike(net, other_net):
    """With ``pool``: ``pool`` deals from the decision's generator, ``deals`` of them by systematic resampling on the
    belief's weights (offset and order from the same generator), each played with the same weight; a time budget
    that never runs out plays the same deals in waves."""
    reward, belief = RewardModel("point"), NetPlayer(other_net)
    searcher = _resampler(net, belief, deals=12, pool=36)
    waves = _resampler(net, belief, deals=12, pool=36, think=1000.0)
    n = 0
    for s, _ in _positions(range(4), limit=4, turn=4):
        obs = s.observation(0)
        rng = searcher.rng(obs)
        pool = [determinize(obs, rng) for _ in range(36)]
        logw = log_weights(belief, obs, pool)
        at = rng.permutation(systematic(np.exp(logw - logw.max()), 12, float(rng.random())))
        deals, picked = _picks(searcher, obs)
        np.testing.assert_array_equal(picked, at)
        assert all(d.deal == pool[i].deal for d, i in zip(deals, at))
        acts = legal_list(obs)
        v = play_out([searcher.rollout], branch(deals, acts), reward).reshape(len(acts), 12)
        q = searcher.values([obs])[0]
        np.testing.assert_allclose(q[acts], v.mean(axis=1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(waves.values([obs])[0][acts], q[acts], rtol=1e-5, atol=1e-5)
        n += 1
    assert n == 4 and searcher.deals == 12 * 4 and waves.deals == 12 * 4
    assert searcher.effective <= searcher.distinct <= searcher.deals and waves.distinct == searcher.distinct


def test_resampling_sees_only_the_searchers_observation(net, other_net):
    """Deal the hidden cards of the true state again: the same pool, the same picks, the same values."""
    searcher = _resampler(net, NetPlayer(other_net))
    rng = np.random.default_rng(3)
    moved = 0
    for s, _ in _positions(range(4), limit=8, turn=4):
        _, m = assert_blind(lambda st: (_picks(searcher, st.observation(0))[1], searcher.values([st.observation(0)])),
                            s, 0, rng)
        moved += m
    assert moved >= 7


def test_resampling_keeps_the_hands_that_explain_the_play(net):
    """Against an opponent that always captures when it can, the pool holds hands its play rules out; the resampled
    deals hold none of them (all the mass on the consistent hands) and repeat the likely ones. ``temper`` flattens:
    at 0.01 the ruled-out hands come back."""
    model = Capturer()
    sharp = _resampler(net, model, deals=16, pool=64)
    flat = _resampler(net, model, deals=16, pool=64, temper=0.01)
    checked = repeated = 0
    for s, _ in _positions(range(40), limit=40, opponent=model, turn=6):
        obs = s.observation(0)
        rng = sharp.rng(obs)
        pool = [determinize(obs, rng) for _ in range(64)]
        out = np.array([_ruled_out(d) for d in pool])
        deals, picked = _picks(sharp, obs)
        assert not any(_ruled_out(d) for d in deals) and not out[picked].any()
        repeated += len(set(picked)) < len(picked)
        if 0.25 < out.mean() < 0.75:  # a pool of both kinds
            assert out[_picks(flat, obs)[1]].any()
            checked += 1
    assert checked >= 5 and repeated >= 5


def _ruled_out(d: GameState) -> bool:
    """Whether the Capturer opponent, holding this deal's hand, discarded without capturing where it could have."""
    return any(o.decision == DISCARD and not o.field & MONTH_MASK[a >> 2] and _captures(o)
               for o, a in opponent_decisions(d, 0))
