"""Duplicate pairs as pentanomial counts: their win rate, its interval, and the sequential test (SPRT) that stops a
duel when it knows (no torch: params checks and the CLI's arguments use it).

A pair is one deal played twice with the seats swapped. A's pair score is the sum of its two games' scores (win 1,
draw 0.5, loss 0): 0, 0.5, 1, 1.5 or 2, the five categories counted by ``Pentanomial``. The pair's per-game score
is half of that (``PAIR_SCORES``), and the win rate is the mean per-game score over the pairs. Scoring pairs, not
games, removes the luck of the deal from the variance: a deal that favours its holder gives one win to each side.

The test is the generalized SPRT of fishtest and OpenBench on these counts, with the normal approximation of its
log-likelihood ratio (fishtest's ``LLR_alt2``; M. Van den Bergh, "A GSPRT approximation",
hardy.uhasselt.be/Fishtest/GSPRT_approximation.pdf):

    LLR = N * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)

over N pairs, with ``mean`` and ``var`` those of the per-game pair score and ``s0``, ``s1`` the win rates of H0 and
H1. An empty category is counted as 1e-3 pairs in the LLR (fishtest's ``regularize``), so that a run of identical
pairs has a variance. The test stops at H1 when the LLR reaches ln((1 - beta) / alpha), at H0 when it falls to
ln(beta / (1 - alpha)) (Wald's bounds), with error rates near alpha and beta whatever the number of looks.
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


def llr(counts: Sequence[int], s0: float, s1: float) -> float:
    """The log-likelihood ratio of H1 (win rate ``s1``) against H0 (``s0``) given the pentanomial ``counts``, by
    the normal approximation (the module's formula; empty categories regularized); 0 without a pair."""
    if sum(counts) == 0:
        return 0.0
    n = float(sum(counts))
    _, mean, var = _moments([c if c > 0 else REGULARIZE for c in counts])
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


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
