import json
import math

import pytest

from pipeline.engine import RoundResult
from pipeline.selfplay.batched import GameOutcome
from pipeline.selfplay.rewards import RewardModel
from pipeline.value.winprob import WinProbTable, fit_table, log_loss, plot_table, round_start_samples

# A scripted 3-round game: p1 wins round 1 (5 points) and takes the deal, p0 wins round 2 (2 points),
# round 3 ends on Dealer's Priority (dealer p0 takes 1) and the game: 28 + 1 = 29 vs 31, p1 wins.
RESULTS = [
    RoundResult(1, 0, (0, 0, 0, ()), (), 1, (-5, 5), (25, 35), 5),
    RoundResult(2, 1, (0, 0, 0, ()), (), 0, (3, -3), (28, 32), 3),
    RoundResult(3, 0, (0, 0, 0, ()), (), None, (1, -1), (29, 31), 0),
]
TABLE = WinProbTable(num_rounds=3, init_points=30, coef=[[0.0, 3.0, 0.2], [0.1, 4.0, 0.3], [0.0, 6.0, 0.5]])


def test_point_reward_is_the_round_points_scaled():
    assert RewardModel("point", 0.5).round_rewards(RESULTS, winner=1) == [(-2.5, 2.5), (1.5, -1.5), (0.5, -0.5)]


def test_wp_reward_uses_the_next_round_start_and_the_real_outcome_at_the_end():
    r = RewardModel("wp", 10.0, TABLE).round_rewards(RESULTS, winner=1)
    # after round 1: round 2 starts with p0 at 25 (not dealer), p1 at 35 dealing (the round's winner)
    assert r[0] == pytest.approx((10 * TABLE.prob(2, 25, False), 10 * TABLE.prob(2, 35, True)))
    z = 0.1 + 4.0 * (25 - 30) / 30
    assert r[0][0] == pytest.approx(10 / (1 + math.exp(-z)))
    # after round 2: p0 won it, so p0 deals round 3
    assert r[1] == pytest.approx((10 * TABLE.prob(3, 28, True), 10 * TABLE.prob(3, 32, False)))
    assert r[2] == (0.0, 10.0)  # the game-ending round: the real outcome
    assert RewardModel("wp", 1.0, TABLE).round_rewards(RESULTS, winner=None)[2] == (0.5, 0.5)
    centred = RewardModel("wp", 10.0, TABLE, baseline=0.5).round_rewards(RESULTS, winner=1)
    assert centred[2] == (-5.0, 5.0) and centred[0][1] == pytest.approx(r[0][1] - 5.0)


def test_bad_reward_models():
    with pytest.raises(ValueError, match="unknown reward model 'score'"):
        RewardModel("score")
    with pytest.raises(ValueError, match="needs a win-probability table"):
        RewardModel("wp")


def _outcomes(n: int = 300) -> list[GameOutcome]:
    """Synthetic games: whoever leads after round 1 wins; a game at 30-30 after round 1 is drawn."""
    import random

    rnd = random.Random(0)
    out = []
    for i in range(n):
        d = rnd.randint(-10, 10)
        before2 = (30 + d, 30 - d)
        winner = None if d == 0 else (0 if d > 0 else 1)
        rounds = ((1, i % 2, (30, 30), (d, -d)), (2, rnd.randint(0, 1), before2, (0, 0)))
        out.append(GameOutcome(i, (0, 0), before2, winner, rounds, 10))
    return out


def test_fit_table_learns_that_points_win(tmp_path):
    outcomes = _outcomes()
    assert round_start_samples(outcomes).shape == (4 * len(outcomes), 4)
    table = fit_table(outcomes, num_rounds=3, init_points=30, c=10.0, source="synthetic")
    assert table.prob(2, 40, False) > 0.9 > 0.1 > table.prob(2, 20, False)
    assert abs(table.prob(1, 30, True) - 0.5) < 0.1  # round 1: no information
    assert table.coef[2] == table.coef[1]  # round 3 never started: reuses round 2's fit
    assert table.prob(2, 0, True) == 0.0 and table.prob(2, 60, False) == 1.0
    assert log_loss(table, outcomes) < math.log(2)
    path = table.save(tmp_path / "wp")
    again = WinProbTable.load(tmp_path / "wp")
    assert again.coef == table.coef and again.prob(2, 33, True) == table.prob(2, 33, True)
    doc = json.loads(path.read_text())
    assert len(doc["grid"]) == 2 and len(doc["grid"][1]) == 3 and len(doc["grid"][1][0]) == 61
    assert plot_table(table, tmp_path / "fig" / "winprob.png").stat().st_size > 1000


def test_loading_a_bad_table_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="winprob stage"):
        WinProbTable.load(tmp_path)
    (tmp_path / "winprob.json").write_text('{"num_rounds": 2, "init_points": 30, "coef": [[1, 2, 3]]}')
    with pytest.raises(ValueError, match="winprob.json"):
        WinProbTable.load(tmp_path)
