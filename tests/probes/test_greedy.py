"""The probes' walk over greedy self-play: every decision once, rebuildable from its game's seed and history."""

from itertools import islice

from pipeline.agents.model_agent import NetPlayer
from pipeline.engine import GameState
from pipeline.probes.greedy import greedy_decisions


def test_decisions_rebuild_from_seed_and_history_and_games_end(make_net):
    player, games, seen = NetPlayer(make_net()), [], []
    for d in greedy_decisions(player, seed=11, games=2, on_game=games.append):
        s = GameState(seed=11 + d.game)
        for a in d.history:  # the actions so far, read before the walk goes on
            s.step(a)
        assert s.observation(s.player) == d.obs == d.state.observation(d.state.player)
        assert d.taken == int(d.values.argmax())
        seen.append(d.obs)
    assert games == [1, 1] and len(seen) > 20
    endless = list(islice(greedy_decisions(player, seed=11), len(seen) + 1))  # no number of games: it goes on
    assert [d.obs for d in endless[:len(seen)]] == seen and endless[-1].game == 2
