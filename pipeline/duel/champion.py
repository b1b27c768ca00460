"""The champion: the strongest agent the pipeline can ship, by its duel against SL.

The candidates are the round-robin's models and the searchers; those with at least ``min_games`` games against
SL qualify (a short duel's win rate is too loose to rank: 2,000 games tell it to about +-0.02), and the one with
the best win rate is the champion. ``results/duels/champion.json`` holds it and every candidate's figures; ``koikoi
play`` serves it by default and the duels stage registers it in MLflow (``tracking.registry.register_champion``).
"""

from __future__ import annotations

from ..agents.specs import is_model_spec, key_name
from .duel_report import oriented
from .runner import DuelResult

SL = "sl"  # the key of the agent every candidate is measured against
CHAMPION_FILE = "champion.json"


def champion_doc(candidates: list[str], sl_spec: str | None, results: dict[tuple[str, str], DuelResult],
                 min_games: int) -> dict:
    """champion.json: ``{"spec", "win_rate", "ci95", "games", "point_diff", "against", "candidates"}``, the
    champion's figures against ``sl_spec``; ``spec`` None (with a ``reason``) when no candidate qualifies."""
    rows = []
    for spec in candidates:
        o = oriented(results, key_name(spec), SL) if sl_spec is not None else None
        if o is not None:
            w, p, (lo, hi), n = o
            rows.append({"spec": spec, "win_rate": round(w, 4), "ci95": [round(lo, 4), round(hi, 4)], "games": n,
                         "point_diff": round(p, 3)})
    eligible = [r for r in rows if r["games"] >= min_games]
    if not eligible:
        return {"spec": None, "against": sl_spec, "candidates": rows,
                "reason": f"no candidate played {min_games} games against SL (duels.champion_min_games)"}
    best = max(eligible, key=lambda r: r["win_rate"])  # max keeps the first of equal win rates: the agents' order
    return {**best, "against": sl_spec, "candidates": rows}


def candidates_of(agents: list[str], searchers: list[str]) -> list[str]:
    """The models of the round-robin (SL excepted: it is the yardstick) and the searchers."""
    return [a for a in agents if is_model_spec(a) and key_name(a) != SL] + searchers


def sl_of(agents: list[str]) -> str | None:
    """The round-robin's SL agent (key ``sl``), None without one."""
    return next((a for a in agents if key_name(a) == SL), None)
