"""Duplicate pairs as pentanomial counts: their win rate, its interval, and the sequential test (SPRT) that stops a
duel when it knows (no torch: params checks and the CLI's arguments use it).

A pair is one deal played twice with the seats swapped. A's pair score is the sum of its two games' scores (win 1,
draw 0.5, loss 0): 0, 0.5, 1, 1.5 or 2, the five categories counted by ``Pentanomial``. The pair's per-game score
is half of that (``PAIR_SCORES``), and the win rate is the mean per-game score over the pairs. Scoring pairs, not
games, removes the luck of the deal from the variance: a deal that favours its holder gives one win to each side.

The test is the generalized SPRT of fishtest on these counts. Its log-likelihood ratio compares the likeliest
pentanomial distribution whose mean is H1's win rate ``s1`` with the likeliest whose mean is H0's ``s0``, both
fitted to the observed frequencies ``q`` (maximum likelihood under a mean constraint: ``p_i = q_i / (1 + lambda *
(a_i - s))``, ``a_i`` the category's per-game score, ``lambda`` a root found by bisection):

    LLR = N * sum_i q_i * log(p1_i / p0_i)

over N pairs. An empty category is counted as 1e-3 pairs (fishtest's ``regularize``), so that every mean can be
fitted. Not the normal approximation ``N * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)`` (fishtest's
``LLR_alt2``), which this test used first: with few pairs that all scored alike its variance is near zero and the
ratio explodes (16 pairs of two networks that nearly always play alike, each pair one win a side: -184, a stop at
H0 after 32 games, where the exact ratio is about -1); for many pairs the two agree. The test stops at H1 when
the LLR reaches ln((1 - beta) / alpha), at H0 when it falls to ln(beta / (1 - alpha)) (Wald's bounds), with error
rates near alpha and beta whatever the number of looks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # the per-game score of each category: A's pair score / 2
REGULARIZE = 1e-3  # pairs counted in an empty category, for the LLR only (fishtest's regularize)


def pair_category(first: float, second: float) -> int:
    """The category (0..4) of a pair whose two games A scored ``first`` and ``second`` (each 0, 0.5 or 1)."""
    return round(2 * (first + second))


def _moments(counts: Sequence[float]) -> tuple[float, float, float]:
    n = float(sum(counts))
    mean = sum(c * s for c, s in zip(counts, PAIR_SCORES)) / n
    var = sum(c * (s - mean) ** 2 for c, s in zip(counts, PAIR_SCORES)) / n
    return n, mean, var


def pair_interval(counts: Sequence[int]) -> tuple[float, float] | None:
    """The 95% interval of the win rate from the pairs' variance: Student's t over the pairs (n - 1 degrees of
    freedom); None where every pair scored alike (or fewer than 2 pairs): the spread then says nothing, and the
    caller falls back on Wilson's over the pairs as trials (``stats.DuelResult.ci95``), not a point."""
    n = int(sum(counts))
    if n < 2:
        return None
    _, mean, var = _moments(counts)
    if var == 0.0:
        return None
    half = _t975(n - 1) * math.sqrt(var / (n - 1))  # the sample standard deviation over sqrt(n)
    return max(0.0, mean - half), min(1.0, mean + half)


def _t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.stats import t  # loaded only by a caller of this

    return float(t.ppf(0.975, df))


def _fitted(q: Sequence[float], mean: float) -> list[float]:
    """The distribution over the categories nearest ``q`` (maximum likelihood) whose per-game mean is ``mean``:
    ``q_i / (1 + lam * (a_i - mean))``, ``lam`` the root of sum_i q_i (a_i - mean) / (1 + lam (a_i - mean)), which
    falls strictly between the poles -1 / (1 - mean) and 1 / mean (found by bisection; every q_i > 0)."""
    d = [a - mean for a in PAIR_SCORES]

    def excess(lam: float) -> float:
        return sum(qi * di / (1.0 + lam * di) for qi, di in zip(q, d))

    lo, hi = -1.0 / (1.0 - mean), 1.0 / mean  # excess falls from +inf to -inf in between
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    lam = 0.5 * (lo + hi)
    return [qi / (1.0 + lam * di) for qi, di in zip(q, d)]


def llr(counts: Sequence[int], s0: float, s1: float) -> float:
    """The log-likelihood ratio of H1 (win rate ``s1``) against H0 (``s0``) given the pentanomial ``counts``: the
    module's generalized ratio, empty categories regularized; 0 without a pair."""
    n = float(sum(counts))
    if n == 0:
        return 0.0
    reg = [c if c > 0 else REGULARIZE for c in counts]
    total = sum(reg)
    q = [c / total for c in reg]
    p0, p1 = _fitted(q, s0), _fitted(q, s1)
    return n * sum(qi * math.log(b / a) for qi, a, b in zip(q, p0, p1))


@dataclass(frozen=True)
class Sprt:
    """A sequential test of H0: win rate ``h0`` against H1: ``h1`` at error rates ``alpha`` (accepting H1 when H0
    holds) and ``beta`` (accepting H0 when H1 holds)."""

    h0: float
    h1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not 0.0 < self.h0 < self.h1 < 1.0:
            raise ValueError(f"SPRT bounds must be 0 < H0 < H1 < 1, got H0 {self.h0} and H1 {self.h1}")
        for name, v in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < v < 0.5:
                raise ValueError(f"SPRT {name} must be in (0, 0.5), got {v}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def decide(self, counts: Sequence[int]) -> dict:
        """The test's state after ``counts``: ``{"h0", "h1", "alpha", "beta", "llr", "lower", "upper",
        "decision"}``, the decision ``"H1"``, ``"H0"`` or ``"none"`` (play on)."""
        value = llr(counts, self.h0, self.h1)
        decision = "H1" if value >= self.upper else "H0" if value <= self.lower else "none"
        return {"h0": self.h0, "h1": self.h1, "alpha": self.alpha, "beta": self.beta, "llr": round(value, 4),
                "lower": round(self.lower, 4), "upper": round(self.upper, 4), "decision": decision}
