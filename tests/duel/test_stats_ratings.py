import math

import pytest

from pipeline.duel.ratings import ELO_PER_UNIT, fit_bradley_terry
from pipeline.duel.stats import wilson_interval


def test_wilson_known_values():
    lo, hi = wilson_interval(90, 100)  # statsmodels proportion_confint(90, 100, method="wilson")
    assert lo == pytest.approx(0.8256, abs=1e-4) and hi == pytest.approx(0.9448, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(50, 100)
    assert 0.5 - lo == pytest.approx(hi - 0.5) and lo == pytest.approx(0.4038, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def _expected(a: float, b: float, n: int) -> float:
    return n / (1.0 + math.exp(-(a - b)))


def test_bradley_terry_recovers_strengths():
    true = {"random": 0.0, "sl": 1.0, "rl": 1.5, "heuristic": 2.5}
    names = list(true)
    games = [(a, b, _expected(true[a], true[b], 2000), 2000)
             for i, a in enumerate(names) for b in names[i + 1:]]
    r = fit_bradley_terry(names, games, anchor="random")
    assert r["random"] == {k: 0.0 for k in r["random"]}
    assert sorted(names, key=lambda k: r[k]["strength"]) == ["random", "sl", "rl", "heuristic"]
    for k, v in true.items():
        assert r[k]["strength"] == pytest.approx(v, abs=0.05)
        assert r[k]["lo"] <= v <= r[k]["hi"]
        assert r[k]["elo"] == pytest.approx(r[k]["strength"] * ELO_PER_UNIT, abs=0.1)
    # fewer games: wider intervals
    few = fit_bradley_terry(names, [(a, b, s / 20, n // 20) for a, b, s, n in games], anchor="random")
    assert few["sl"]["hi"] - few["sl"]["lo"] > 3 * (r["sl"]["hi"] - r["sl"]["lo"])


def test_bradley_terry_perfect_record_stays_finite_and_orientation_counts():
    r = fit_bradley_terry(["random", "heuristic"], [("heuristic", "random", 20, 20)], anchor="random")
    assert 2.0 < r["heuristic"]["strength"] < 20.0
    flipped = fit_bradley_terry(["random", "heuristic"], [("random", "heuristic", 0, 20)], anchor="random")
    assert flipped["heuristic"]["strength"] == pytest.approx(r["heuristic"]["strength"], abs=1e-3)
    with pytest.raises(ValueError, match="anchor"):
        fit_bradley_terry(["a", "b"], [], anchor="c")
    with pytest.raises(ValueError, match="distinct"):
        fit_bradley_terry(["a", "b"], [("a", "a", 1, 2)])
