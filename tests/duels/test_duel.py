import json
from collections.abc import Sequence

import pytest

from pipeline.agents import Agent, HeuristicAgent, RandomAgent
from pipeline.cli import main
from pipeline.duel.runner import duel_seeds, play_duel, play_duel_states, score_duel
from pipeline.engine import Observation


class Recorder(Agent):
    """Plays like ``inner`` and remembers (seat, full hand) of each round-1 first discard it made."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.dealt: set[tuple[int, int]] = set()

    def act(self, observations: Sequence[Observation]) -> list[int]:
        self.dealt.update((o.player, o.hand) for o in observations if o.round == 1 and o.hand.bit_count() == 8)
        return self.inner.act(observations)


def test_duplicate_deals_repeat_cards_with_seats_swapped():
    a, b = Recorder(HeuristicAgent(0)), Recorder(RandomAgent(1))
    first, second = play_duel_states(a, b, games=6, seed=40)
    assert len(first) == len(second) == 3
    for g0, g1 in zip(first, second):
        r0, r1 = g0.results[0], g1.results[0]
        assert r0.deal == r1.deal  # same hands, field and stock order
        assert r0.dealer == r1.dealer  # same seat deals first, so a different agent does
        hand0, hand1 = r0.deal[0], r0.deal[1]
        # A played hand 0 from seat 0 in the first game and hand 1 from seat 1 in the second; B the reverse
        assert {(0, hand0), (1, hand1)} <= a.dealt and {(1, hand1), (0, hand0)} <= b.dealt
    assert {seat for seat, _ in a.dealt} == {0, 1}
    assert len(a.dealt) == len(b.dealt) == 6  # each agent played both hands of each of the 3 deals
    seeds = duel_seeds(6, 40)
    assert seeds == [40, 41, 42]
    assert len({f.results[0].deal[0] for f in first}) == 3  # distinct deals across pairs
    with pytest.raises(ValueError, match="even"):
        duel_seeds(5, 0)


def test_seats_swap_between_the_two_calls(monkeypatch):
    calls = []
    import pipeline.duel.runner as runner

    real = runner.play_games

    def spy(agents, seeds, **kw):
        calls.append((agents, list(seeds)))
        return real(agents, seeds, **kw)

    monkeypatch.setattr(runner, "play_games", spy)
    a, b = RandomAgent(0), RandomAgent(1)
    play_duel(a, b, games=4, seed=7)
    assert [c[0] for c in calls] == [(a, b), (b, a)]  # A first seat, then second seat
    assert calls[0][1] == calls[1][1] == [7, 8]  # one batched call per seating over all deals


def test_score_duel_counts_from_a_side():
    a, b = HeuristicAgent(0), RandomAgent(1)
    first, second = play_duel_states(a, b, games=10, seed=0)
    r = score_duel(first, second, 30, 1.0)
    assert r.games == 10 and r.wins + r.losses + r.draws == 10
    assert r.diffs[0] == first[0].points[0] - 30 and r.diffs[1] == second[0].points[1] - 30
    assert r.win_rate == pytest.approx((r.wins + 0.5 * r.draws) / 10)
    lo, hi = r.ci95
    assert lo <= r.win_rate <= hi
    # swapping the roles mirrors the result
    back = score_duel([s for s in second], [s for s in first], 30, 1.0)
    assert back.wins == r.losses and back.point_diff == pytest.approx(-r.point_diff)


def test_duel_command_prints_json(capsys):
    assert main(["duel", "heuristic", "random", "--games", "5", "--seed", "3"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out.strip().splitlines()[-1])
    assert out["games"] == 6 and "playing 6 games, not 5" in cap.err
    assert set(out) >= {"games", "win_rate", "draw_rate", "point_diff", "ci95", "wins", "losses", "draws",
                        "seconds", "games_per_s"}
    assert out["wins"] + out["losses"] + out["draws"] == 6


@pytest.mark.parametrize("spec", ["foo", "models/does-not-exist"])
def test_duel_command_bad_spec(spec, capsys):
    assert main(["duel", "heuristic", spec, "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("koikoi duel: error:") and spec in err


def test_model_duel_on_the_selfplay_engine_equals_the_arena_duel():
    """Two networks on the batched self-play engine: the same deals, seats and scores as ``play_duel``."""
    import torch

    from pipeline.agents.model_agent import ModelAgent
    from pipeline.duel.runner import play_duel, play_model_duel
    from pipeline.model import KoiKoiNet, ModelConfig

    nets = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        nets.append(KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1, dropout=0.0)).eval())
    arena = play_duel(ModelAgent(nets[0]), ModelAgent(nets[1]), 8, seed=5, num_rounds=3)
    engine = play_model_duel(nets[0], nets[1], 8, seed=5, num_rounds=3, workers=0, bf16=False)
    assert engine.scores == arena.scores and engine.diffs == arena.diffs
    assert (engine.wins, engine.losses, engine.draws) == (arena.wins, arena.losses, arena.draws)
