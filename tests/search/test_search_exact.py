"""``exact``: every deal of an endgame played, each once, from the searcher's observation alone."""

from __future__ import annotations

import math
from itertools import combinations, permutations

import numpy as np
import pytest
import torch

from pipeline.agents.base import legal_list
from pipeline.agents.model_agent import NetPlayer
from pipeline.engine import DECISION_NAMES, GameState, ids_of
from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.net.modelio import save_model
from pipeline.search.exact_deals import all_deals, deal_count, draws_left
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


def _positions(seeds, limit: int, turn: int = 0):
    """States at the decisions of player 0 with a choice, from ``turn`` on, in games of random play."""
    rng = np.random.default_rng(7)
    found = 0
    for seed in seeds:
        s = GameState(seed=seed, num_rounds=1)
        while not s.is_over:
            legal = legal_list(s.observation(s.player))
            if s.player == 0 and len(legal) > 1 and s.turn >= turn:
                yield s.clone()
                found += 1
                if found >= limit:
                    return
            s.step(int(rng.choice(legal)))


def test_options_parse_and_round_trip():
    assert parse_options("exact=2000") == SearchOptions(exact=2000)
    assert SearchOptions().exact == 0  # sampling by default
    o = SearchOptions(deals=4, exact=500)
    assert parse_options(o.query()) == o and o.query() == "deals=4&exact=500"
    for spec, message in (("search:m?exact=-1", "search option exact='-1': must be an integer >= 0"),
                          ("search:m?exact=all", "search option exact='all': must be an integer >= 0")):
        with pytest.raises(ValueError) as e:
            parse_search(spec)
        assert "\n" not in str(e.value) and str(e.value) == f"agent {spec!r}: {message}"


def test_the_duel_command_takes_exact(net, tmp_path, capsys):
    from pipeline.cli import main

    model = str(save_model(net, tmp_path / "tiny", {"kind": "sl"}))
    spec = f"search:{model}?deals=2&decisions=koikoi,discard&reward=point&exact=100"
    assert main(["duel", spec, model, "--games", "2", "--rounds", "2", "--workers", "0"]) == 0
    out = capsys.readouterr().out
    assert '"games": 2' in out and '"exact": ' in out


def _late(limit: int):
    """Late-round positions of player 0 with a choice and few deals left."""
    for s in _positions(range(200), limit=10_000, turn=14):
        if deal_count(s.observation(0)) <= 400:
            yield s
            limit -= 1
            if not limit:
                return


def test_an_endgame_is_enumerated_and_equals_brute_force(net):
    """``exact``: every (opponent hand, next draws) deal once, as many as the combinatorial count; the searcher's
    values are the mean over all of them computed here by brute force from the true state."""
    reward = RewardModel("point")
    searcher = SearchPlayer(NetPlayer(net), reward, SearchOptions(deals=3, decisions=ALL, exact=400), seed=0)
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
        v = play_out([searcher.model], branch(brute, acts), reward).reshape(len(acts), len(brute))
        q = searcher.values([obs])[0]
        np.testing.assert_allclose(q[acts], v.mean(axis=1), rtol=1e-5, atol=1e-5)
        n += 1
    assert n == 3 and searcher.exact == 3


def test_exact_leaves_larger_positions_to_sampling(net):
    searcher = SearchPlayer(NetPlayer(net), RewardModel("point"), SearchOptions(deals=3, decisions=ALL, exact=50))
    s = next(_positions(range(3), limit=1))
    assert deal_count(s.observation(0)) > 50 and all_deals(s.observation(0), 50) is None
    searcher.values([s.observation(0)])
    assert searcher.exact == 0 and searcher.deals == 3
