"""The champion: the strongest agent the pipeline can ship, decided by sequential duels and measured on fresh deals.

The candidates are the searchers of ``duels.search``, then the round-robin's models and searchers (SL aside: it is
the yardstick) by their rating, strongest first. The best so far starts as SL; each candidate plays the best so far
in a sequential duel (``duels.sprt``; against SL that is its round-robin duel where it played one) and becomes the
best when the test accepts H1 (it is stronger); H0 or no decision within the cap keeps the best. The likeliest
strongest go first because a candidate well below the best so far is rejected in a few hundred games, where one
close to it needs the most (a searcher never plays below its network's prior, so it is expected above its
network). A candidate that never beat its way past SL leaves no champion. The champion's figure is then one
fixed-size confirmation duel against SL (``duels.confirm_games``) on deals from ``duels.confirm_seed``, which
played no part in the pick: the pick's own duels favour the candidate they picked (the best of several on the same
deals is lucky on them). ``results/duels/champion.json`` holds it, its confirmation and every candidate's
decision; ``koikoi play`` serves it by default and the duels stage registers it in MLflow
(``tracking.registry.register_champion``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict

from ..agents.specs import key_name
from ..net.inference import Inference
from .runner import DuelResult
from .tournament import SL, is_candidate

CHAMPION_FILE = "champion.json"

Decide = Callable[[str, str], DuelResult]  # (candidate, best so far) -> their sequential duel, candidate as A


def candidates_of(agents: list[str], searchers: list[str], elo: Mapping[str, float] | None = None) -> list[str]:
    """``searchers`` first, then the models and searchers of the round-robin (SL excepted: it is the yardstick) by
    ``elo`` (their round-robin ratings), highest first; ``agents``' order where a rating is missing or tied."""
    rated = [a for a in agents if is_candidate(a)]
    if elo:
        rated.sort(key=lambda a: -elo.get(a, float("-inf")))
    return list(dict.fromkeys([*searchers, *rated]))


def pick_champion(candidates: list[str], sl_spec: str, decide: Decide) -> tuple[str | None, list[dict]]:
    """The champion among ``candidates`` (None when none beat SL) and each candidate's decision: ``{"spec",
    "against", "games", "win_rate", "ci95", "sprt"}``. ``decide(candidate, best)`` gives their sequential duel."""
    best, rows = sl_spec, []
    for spec in candidates:
        r = decide(spec, best)
        s = r.summary()
        rows.append({"spec": spec, "against": best, **{k: s[k] for k in ("games", "win_rate", "ci95")},
                     "sprt": r.sprt})
        if r.sprt is not None and r.sprt["decision"] == "H1":
            best = spec
    return (None if best == sl_spec else best), rows


def champion_doc(spec: str | None, sl_spec: str | None, rows: list[dict], confirmation: DuelResult | None,
                 confirm_seed: int, inference: Inference | None) -> dict:
    """champion.json: ``{"spec", "win_rate", "ci95", "games", "point_diff", "against", "confirmation",
    "candidates"}``, the figures those of the confirmation duel against ``sl_spec`` (``confirmation: {win_rate,
    ci95, games, seed, inference}``: its deals' and the champion's seed, and the setup its networks ran in, so that
    the agent measured can be loaded again: ``load_agent(spec, seed, Inference(**inference))``); ``spec`` None, with
    a ``reason``, when no candidate beat SL."""
    if spec is None or confirmation is None:
        reason = ("no models/sl among duels.agents: no yardstick" if sl_spec is None else
                  "no candidate beat SL in its sequential duel (duels.sprt)")
        return {"spec": None, "against": sl_spec, "candidates": rows, "reason": reason}
    s = confirmation.summary()
    figures = {k: s[k] for k in ("win_rate", "ci95", "games", "point_diff")}
    return {"spec": spec, **figures, "against": sl_spec,
            "confirmation": {**{k: s[k] for k in ("win_rate", "ci95", "games")}, "seed": confirm_seed,
                             "inference": asdict(inference)},
            "candidates": rows}


def sl_of(agents: list[str]) -> str | None:
    """The round-robin's SL agent (key ``sl``), None without one."""
    return next((a for a in agents if key_name(a) == SL), None)
