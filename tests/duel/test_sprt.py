"""The sequential test on duplicate pairs (``duel.sprt``): its LLR by hand, its bounds, its interval, and its error
rates and game counts in simulation."""

import math

import numpy as np
import pytest

from pipeline.duel.sprt import Sprt, llr, pair_category, pair_interval
from pipeline.duel.stats import DuelResult, wilson_interval


def test_a_pair_scores_its_two_games():
    assert [pair_category(a, b) for a, b in ((0, 0), (0, 0.5), (1, 0), (0.5, 0.5), (1, 0.5), (1, 1))] == \
        [0, 1, 2, 2, 3, 4]


def _likeliest(q, mean):
    """The likeliest distribution over the five categories with this per-game mean, by a general optimizer."""
    from scipy.optimize import minimize

    cons = ({"type": "eq", "fun": lambda p: p.sum() - 1},
            {"type": "eq", "fun": lambda p: p @ np.array([0, 0.25, 0.5, 0.75, 1]) - mean})
    r = minimize(lambda p: -np.dot(q, np.log(p)), np.full(5, 0.2), constraints=cons, bounds=[(1e-12, 1)] * 5,
                 method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    return r.x


def test_the_llr_compares_the_likeliest_distributions_with_each_mean():
    counts = [1, 2, 3, 4, 5]  # 15 pairs scoring 0, 0.25, 0.5, 0.75 and 1 per game
    q = np.array(counts) / 15
    p0, p1 = _likeliest(q, 0.50), _likeliest(q, 0.55)
    want = 15 * float(np.dot(q, np.log(p1 / p0)))
    assert llr(counts, 0.50, 0.55) == pytest.approx(want, abs=1e-4) and want == pytest.approx(0.8739, abs=1e-3)
    assert llr(counts[::-1], 0.50, 0.55) < 0
    assert llr([0] * 5, 0.5, 0.55) == 0.0
    # many pairs: the normal approximation N (s1 - s0)(2 mean - s0 - s1) / (2 var) says nearly the same
    many = [57, 23, 708, 50, 162]
    n, a = sum(many), np.array([0, 0.25, 0.5, 0.75, 1])
    mean = np.dot(many, a) / n
    var = np.dot(many, (a - mean) ** 2) / n
    assert llr(many, 0.50, 0.53) == pytest.approx(n * 0.03 * (2 * mean - 1.03) / (2 * var), rel=0.05)


def test_pairs_that_all_scored_alike_are_weak_evidence():
    # 16 pairs of two networks that nearly always play alike, each pair one win a side: the normal approximation
    # divided by a variance near zero (-184, a stop at H0 after 32 games); the likeliest distributions differ little
    assert -1.5 < llr([0, 0, 16, 0, 0], 0.50, 0.53) < -0.5
    assert Sprt(0.50, 0.53).decide([0, 0, 16, 0, 0])["decision"] == "none"
    # ten pairs won twice: an empty category counts a thousandth of a pair, so each mean can be fitted
    assert llr([0, 0, 0, 0, 10], 0.5, 0.55) == pytest.approx(10 * math.log(0.55 / 0.5), rel=0.05)


def test_wald_bounds_and_the_decisions():
    t = Sprt(0.50, 0.55)
    assert t.lower == pytest.approx(math.log(0.05 / 0.95)) and t.upper == pytest.approx(math.log(0.95 / 0.05))
    assert Sprt(0.5, 0.55, alpha=0.01, beta=0.1).upper == pytest.approx(math.log(0.9 / 0.01))
    assert t.decide([3, 6, 9, 12, 15])["decision"] == "none"  # 2.622 < 2.944
    assert t.decide([4, 8, 12, 16, 20]) == {"h0": 0.5, "h1": 0.55, "alpha": 0.05, "beta": 0.05, "llr": 3.4955,
                                            "lower": -2.9444, "upper": 2.9444, "decision": "H1"}
    assert t.decide([15, 12, 9, 6, 3])["decision"] == "H0"
    for bad in ((0.55, 0.5), (0.5, 0.5), (0.0, 0.5)):
        with pytest.raises(ValueError, match="0 < H0 < H1 < 1"):
            Sprt(*bad)
    with pytest.raises(ValueError, match="alpha must be in"):
        Sprt(0.5, 0.55, alpha=0.5)


def test_the_interval_comes_from_the_pairs_spread():
    counts = [1, 2, 3, 4, 5]
    values = np.repeat([0, 0.25, 0.5, 0.75, 1], counts)
    half = 2.1447866879169273 * values.std(ddof=1) / np.sqrt(15)  # Student's t(14) at 97.5%
    assert pair_interval(counts) == pytest.approx((2 / 3 - half, 2 / 3 + half))
    assert pair_interval([0, 0, 3, 0, 0]) is None and pair_interval([0, 0, 0, 0, 1]) is None
    # a duel of such pairs: the interval from them, not Wilson's over its 30 games
    r = DuelResult(games=30, wins=20, losses=10, pairs=counts)
    assert r.paired and r.ci95 == pair_interval(counts)
    alike = DuelResult(games=32, wins=32, pairs=[0, 0, 0, 0, 16])  # no spread: Wilson's over the 16 pairs
    assert alike.ci95[1] == 1.0 and alike.ci95[0] == pytest.approx(0.8064, abs=1e-4)
    unpaired = DuelResult(games=30, wins=20, losses=10)
    assert not unpaired.paired and unpaired.ci95 == wilson_interval(20, 30)


H0_PAIRS = (0.12, 0.06, 0.64, 0.06, 0.12)  # per-game mean 0.50
H1_PAIRS = (0.08, 0.06, 0.62, 0.06, 0.18)  # per-game mean 0.55


def _run(rng: np.random.Generator, probs: tuple, test: Sprt, block: int = 16, cap: int = 5000) -> tuple[str, int]:
    """One sequential duel of pairs drawn from ``probs``, looked at every ``block`` pairs: (decision, pairs)."""
    draws = rng.choice(5, size=cap, p=probs)
    counts = [0] * 5
    for i in range(0, cap, block):
        for c in draws[i:i + block]:
            counts[c] += 1
        decision = test.decide(counts)["decision"]
        if decision != "none":
            return decision, i + block
    return "none", cap


def test_in_simulation_the_test_keeps_its_error_rates_and_stops_early():
    assert sum(s * p for s, p in zip((0, 0.25, 0.5, 0.75, 1), H0_PAIRS)) == pytest.approx(0.50)
    assert sum(s * p for s, p in zip((0, 0.25, 0.5, 0.75, 1), H1_PAIRS)) == pytest.approx(0.55)
    rng = np.random.default_rng(68)
    test = Sprt(0.50, 0.55)
    at_h1 = [_run(rng, H1_PAIRS, test) for _ in range(300)]
    at_h0 = [_run(rng, H0_PAIRS, test) for _ in range(300)]
    h1_rate = sum(d == "H1" for d, _ in at_h1) / 300
    false_h1 = sum(d == "H1" for d, _ in at_h0) / 300
    assert h1_rate >= 0.90 and false_h1 <= 0.09  # 1 - beta and alpha, with room for 300 runs' noise
    # far fewer games than a fixed duel that tells 0.55 from 0.50 (2,000)
    assert np.mean([2 * n for _, n in at_h1]) < 1000 and np.mean([2 * n for _, n in at_h0]) < 1000
    # a clear difference stops within the first looks
    assert _run(rng, (0.0, 0.0, 0.02, 0.08, 0.90), test)[1] <= 48
