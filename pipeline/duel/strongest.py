"""Which agent is the strongest, by duel ratings that respect their intervals (no heavy imports: the play server
asks at start-up).

Two agents whose 95% intervals overlap are not told apart by the duels: picking the higher Elo among them would
flip with every run (RL-Point 691.0 vs RL-WP 689.8, each +-120). ``strongest`` instead takes, in a fixed
preference order, the first agent whose interval overlaps the best rated agent's: a different agent only when
the duels separate it. The duels stage (``duels.search.models: [strongest]``), the searcher the play page offers
and its default opponent all use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def strongest(candidates: Sequence[str], ratings: Mapping[str, Mapping[str, float]]) -> str:
    """The strongest of ``candidates`` (in order of preference) by ``ratings`` (``candidate -> {"elo", "elo_lo",
    "elo_hi"}``; a candidate without one is unrated): the first rated candidate whose interval reaches the best
    rated one's lower bound; the first candidate when none is rated. ``ValueError`` without candidates."""
    if not candidates:
        raise ValueError("no candidates to pick the strongest from")
    rated = [c for c in candidates if c in ratings]
    if not rated:
        return candidates[0]
    best = max(rated, key=lambda c: ratings[c]["elo"])
    floor = ratings[best]["elo_lo"]
    return next(c for c in rated if ratings[c]["elo_hi"] >= floor)
