"""The play API's JSON, built from the human's observation and public results only; cards are ``[month, index]``."""

from typing import Any

from ..engine import DECISION_NAMES, Observation, RoundResult, Turn, card_name, card_tuple, ids_of, score_mask
from ..engine import cards as hanafuda

CATEGORY_ORDER = ("light", "seed", "ribbon", "dross")


def card(cid: int) -> list[int] | None:
    """``[month, index]`` of a card id, or None for -1 (not drawn yet)."""
    return list(card_tuple(cid)) if cid >= 0 else None


def cards(mask: int) -> list[list[int]]:
    return [list(card_tuple(c)) for c in ids_of(mask)]


def category(cid: int) -> str:
    """The card's category for display; the Sake Cup, seed and dross, shows as a seed."""
    return next(name for name in CATEGORY_ORDER if hanafuda.CATEGORIES[name] >> cid & 1)


def grouped(mask: int) -> dict[str, list[list[int]]]:
    out: dict[str, list[list[int]]] = {name: [] for name in CATEGORY_ORDER}
    for c in ids_of(mask):
        out[category(c)].append(list(card_tuple(c)))
    return out


def yaku(pile: int, koikoi: int) -> dict[str, Any]:
    s = score_mask(pile, koikoi)
    return {"points": s.points, "yaku": [[name, pts] for name, pts in s.yaku]}


# Yaku a pile grows toward: (name, cards that count, how many it needs); Lights are handled apart (the Rain Man).
_TOWARD = (("Boar-Deer-Butterfly", hanafuda.BOAR_DEER_BUTTERFLY, 3), ("Flower Viewing Sake", hanafuda.FLOWER_SAKE, 2),
           ("Moon Viewing Sake", hanafuda.MOON_SAKE, 2), ("Red Ribbons", hanafuda.RED_RIBBONS, 3),
           ("Blue Ribbons", hanafuda.BLUE_RIBBONS, 3), ("Tane", hanafuda.SEED, 5), ("Tan", hanafuda.RIBBON, 5),
           ("Kasu", hanafuda.DROSS, 10))


def progress(pile: int, opp_pile: int) -> list[dict[str, Any]]:
    """How far ``pile`` is toward each yaku it has started and can still make, most advanced first."""
    out: list[dict[str, Any]] = []
    free_lights = hanafuda.LIGHT & ~opp_pile
    lights = (pile & hanafuda.LIGHT).bit_count()
    # Three Lights may not include the Rain Man: with it (or with only it left to take) four are needed.
    need = 3 if not pile & hanafuda.RAINMAN_BIT and (free_lights & ~hanafuda.RAINMAN_BIT).bit_count() >= 3 else 4
    if 0 < lights < need <= free_lights.bit_count():
        out.append({"name": "Lights", "have": lights, "need": need, "missing": []})
    for name, cards, need in _TOWARD:
        have = (pile & cards).bit_count()
        if 0 < have < need <= (cards & ~opp_pile).bit_count():
            named = need == cards.bit_count()
            out.append({"name": name, "have": have, "need": need,
                        "missing": [card_name(c) for c in ids_of(cards & ~pile)] if named else []})
    return sorted(out, key=lambda p: (-p["have"] / p["need"], p["need"]))


def deck() -> list[dict[str, Any]]:
    def ribbon(c: int) -> str | None:
        if category(c) != "ribbon":
            return None
        return "poetry" if hanafuda.RED_RIBBONS >> c & 1 else "blue" if hanafuda.BLUE_RIBBONS >> c & 1 else "red"

    return [{"id": c, "card": card(c), "month": hanafuda.MONTH_NAMES[c >> 2], "name": card_name(c),
             "category": category(c), "ribbon": ribbon(c)} for c in range(48)]


def turn_view(t: Turn) -> dict[str, Any]:
    return {"player": t.player, "discard": card(t.discard), "captured": cards(t.captured),
            "draw": card(t.draw), "captured2": cards(t.captured2), "koikoi": t.koikoi}


def pile_of(turns: tuple[Turn, ...], player: int) -> int:
    pile = 0
    for t in turns:
        if t.player == player:
            if t.captured:
                pile |= t.captured | 1 << t.discard
            if t.captured2:
                pile |= t.captured2 | 1 << t.draw
    return pile


def round_view(res: RoundResult, you: int) -> dict[str, Any]:
    opp = you ^ 1
    out: dict[str, Any] = {"round": res.round, "dealer": res.dealer, "winner": res.winner,
                           "points": {"you": res.points[you], "opponent": res.points[opp]},
                           "totals": {"you": res.totals[you], "opponent": res.totals[opp]}, "yaku": []}
    if res.winner is not None:
        claims = sum(1 for t in res.turns if t.player == res.winner and t.koikoi)
        out["yaku"] = yaku(pile_of(res.turns, res.winner), claims)["yaku"]
    return out


def state_view(obs: Observation, results: list[RoundResult], *, over: bool, winner: int | None,
               opponent: str, move: int, has_values: bool, values: str | None) -> dict[str, Any]:
    """Everything the page shows; no seed, for the deals follow from it."""
    you, opp = obs.player, obs.player ^ 1
    decision = "over" if over else DECISION_NAMES[obs.decision] if obs.to_act else "wait"
    return {
        "you": you, "opponent": opponent, "move": move, "hint_available": has_values, "values_kind": values,
        "decision": decision, "legal_actions": ids_of(obs.legal_mask), "pending": card(obs.pick_card),
        "pending_from_draw": obs.pick_from_draw, "hand": cards(obs.hand), "field": cards(obs.field),
        "piles": {"you": grouped(obs.my_pile), "opponent": grouped(obs.opp_pile)},
        "opponent_hand_count": obs.opp_hand_count, "stock_count": obs.stock_count,
        "points": {"you": obs.my_points, "opponent": obs.opp_points},
        "round": obs.round, "rounds": obs.num_rounds, "turn": obs.turn, "dealer": you if obs.is_dealer else opp,
        "koikoi": {"you": obs.my_koikoi, "opponent": obs.opp_koikoi},
        "yaku": {"you": yaku(obs.my_pile, obs.my_koikoi), "opponent": yaku(obs.opp_pile, obs.opp_koikoi)},
        "progress": {"you": progress(obs.my_pile, obs.opp_pile), "opponent": progress(obs.opp_pile, obs.my_pile)},
        "history": [turn_view(t) for t in obs.turns], "results": [round_view(r, you) for r in results],
        "winner": winner if over else None,
    }
