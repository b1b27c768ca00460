"""Bradley-Terry ratings from duel results, with 95% intervals from the Fisher information: a logistic regression
on ``e_i - e_j``, the anchor at 0, a weak prior keeping strengths finite when an agent wins every game."""

import math
from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

ELO_PER_UNIT = 400.0 / math.log(10.0)  # Elo points per unit of Bradley-Terry strength
Z95 = 1.959963984540054


def fit_bradley_terry(agents: Sequence[str], results: Sequence[tuple[str, str, float, int]], anchor: str | None = None,
                      prior_variance: float = 100.0) -> dict[str, dict[str, float]]:
    """Strengths (and Elo) from ``(a, b, score_of_a, games)`` tuples, relative to ``anchor`` (default the first)."""
    agents = list(agents)
    anchor = agents[0] if anchor is None else anchor
    if anchor not in agents:
        raise ValueError(f"anchor {anchor!r} is not one of the agents {agents}")
    free = [a for a in agents if a != anchor]
    col = {a: i for i, a in enumerate(free)}
    rows, ys, ws = [], [], []
    for a, b, s, n in results:
        if a not in agents or b not in agents or a == b:
            raise ValueError(f"bad pairing {a!r} vs {b!r}: both must be distinct agents of {agents}")
        if not 0 <= s <= n:
            raise ValueError(f"score {s} of {a!r} vs {b!r} must be within 0..{n} games")
        x = np.zeros(len(free))
        if a in col:
            x[col[a]] += 1.0
        if b in col:
            x[col[b]] -= 1.0
        # One weighted row for A's wins and one for A's losses: the binomial likelihood.
        rows += [x, x]
        ys += [1, 0]
        ws += [s, n - s]
    theta = np.zeros(len(free))
    if free and rows:
        X, w = np.array(rows), np.array(ws, dtype=float)
        model = LogisticRegression(C=prior_variance, fit_intercept=False, max_iter=1000, tol=1e-10)
        model.fit(X, np.array(ys), sample_weight=w)
        theta = model.coef_[0]
        # Fisher information of the penalised likelihood: sum of n p (1 - p) x x^T plus the prior.
        p = 1.0 / (1.0 + np.exp(-X @ theta))
        info = (X * (w * p * (1 - p))[:, None]).T @ X + np.eye(len(free)) / prior_variance
        se = np.sqrt(np.diag(np.linalg.inv(info)))
    else:
        se = np.zeros(len(free))
    out: dict[str, dict[str, float]] = {}
    for a in agents:
        t, e = (float(theta[col[a]]), float(se[col[a]])) if a in col else (0.0, 0.0)
        out[a] = {"strength": round(t, 4), "lo": round(t - Z95 * e, 4), "hi": round(t + Z95 * e, 4),
                  "elo": round(t * ELO_PER_UNIT, 1), "elo_lo": round((t - Z95 * e) * ELO_PER_UNIT, 1),
                  "elo_hi": round((t + Z95 * e) * ELO_PER_UNIT, 1)}
    return out
