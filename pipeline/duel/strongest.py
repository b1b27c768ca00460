"""Which agent is the strongest, by duel ratings that respect their intervals: the higher Elo of two whose
intervals overlap would flip with every run."""

from collections.abc import Mapping, Sequence


def strongest(candidates: Sequence[str], ratings: Mapping[str, Mapping[str, float]]) -> str:
    """The first candidate whose interval reaches the best rated one's lower bound (the first when none is)."""
    if not candidates:
        raise ValueError("no candidates to pick the strongest from")
    rated = [c for c in candidates if c in ratings]
    if not rated:
        return candidates[0]
    best = max(rated, key=lambda c: ratings[c]["elo"])
    floor = ratings[best]["elo_lo"]
    return next(c for c in rated if ratings[c]["elo_hi"] >= floor)
