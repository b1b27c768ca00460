"""Duplicate pairs (one deal, seats swapped) as pentanomial counts of A's pair score: their win rate, its interval,
and fishtest's generalized SPRT that stops a duel when it knows (no torch). Scoring pairs removes the luck of the
deal from the variance.

The LLR compares the maximum-likelihood pentanomial distributions with means H1 and H0 fitted to the observed
frequencies, empty categories regularized; the normal approximation (``LLR_alt2``) explodes when few pairs all
scored alike. Wald's bounds decide.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # the per-game score of each category: A's pair score / 2
REGULARIZE = 1e-3  # pairs counted in an empty category, for the LLR only (fishtest's regularize)


def pair_category(first: float, second: float) -> int:
    """The category (0..4) of a pair whose two games A scored ``first`` and ``second``."""
    return round(2 * (first + second))


def _moments(counts: Sequence[float]) -> tuple[float, float, float]:
    n = float(sum(counts))
    mean = sum(c * s for c, s in zip(counts, PAIR_SCORES)) / n
    var = sum(c * (s - mean) ** 2 for c, s in zip(counts, PAIR_SCORES)) / n
    return n, mean, var


def pair_interval(counts: Sequence[int]) -> tuple[float, float] | None:
    """The 95% interval of the win rate from the pairs' variance; None where it says nothing (pairs all alike)."""
    n = int(sum(counts))
    if n < 2:
        return None
    _, mean, var = _moments(counts)
    if var == 0.0:
        return None
    half = t975(n - 1) * math.sqrt(var / (n - 1))  # the sample standard deviation over sqrt(n)
    return max(0.0, mean - half), min(1.0, mean + half)


def t975(df: int) -> float:
    from scipy.stats import t  # loaded only by a caller of this

    return float(t.ppf(0.975, df))


def _fitted(q: Sequence[float], mean: float) -> list[float]:
    """The distribution nearest ``q`` (maximum likelihood) with per-game mean ``mean``:
    ``q_i / (1 + lam (a_i - mean))``, ``lam`` found by bisection between the poles."""
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
    """The log-likelihood ratio of H1 (win rate ``s1``) against H0 (``s0``); 0 without a pair."""
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
    """A sequential test of H0: win rate ``h0`` against H1: ``h1`` at error rates ``alpha`` and ``beta``."""

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
        """The test's state after ``counts``; ``decision`` is ``"H1"``, ``"H0"`` or ``"none"`` (play on)."""
        value = llr(counts, self.h0, self.h1)
        decision = "H1" if value >= self.upper else "H0" if value <= self.lower else "none"
        return {"h0": self.h0, "h1": self.h1, "alpha": self.alpha, "beta": self.beta, "llr": round(value, 4),
                "lower": round(self.lower, 4), "upper": round(self.upper, 4), "decision": decision}
