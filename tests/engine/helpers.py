"""Build exact deals for scenario tests."""

from __future__ import annotations

from pipeline.engine import GameState, card_id
from pipeline.engine.state import deal_is_valid


def ids(*cards: tuple[int, int]) -> list[int]:
    return [card_id(m, i) for m, i in cards]


def make_deal(hand0=(), hand1=(), field=(), draws=()) -> tuple[int, int, int, list[int]]:
    """A full valid deal holding the given cards; ``draws`` are the first stock cards in draw order.

    Cards not named fill the hands, field and stock in ascending id order, skipping any
    that would put four of a month in one hand or on the field.
    """
    named = set(hand0) | set(hand1) | set(field) | set(draws)
    assert len(named) == len(hand0) + len(hand1) + len(field) + len(draws), "a card is named twice"
    rest = [c for c in range(48) if c not in named]
    h0, h1, fld = list(hand0), list(hand1), list(field)

    def fill(target: list[int]) -> None:
        while len(target) < 8:
            for c in rest:
                months = [x >> 2 for x in target]
                if months.count(c >> 2) < 3:
                    target.append(c)
                    rest.remove(c)
                    break
            else:
                raise AssertionError("cannot fill the deal")

    fill(h0)
    fill(h1)
    fill(fld)
    stock = rest + list(reversed(draws))  # drawn from the end
    mask = [sum(1 << c for c in part) for part in (h0, h1, fld)]
    deal = (mask[0], mask[1], mask[2], stock)
    assert deal_is_valid(deal) and len(stock) == 24
    return deal


def game_with(*deals, first_dealer: int = 0, num_rounds: int = 8, init_points: int = 30) -> GameState:
    return GameState(seed=None, first_dealer=first_dealer, deals=iter(deals), num_rounds=num_rounds,
                     init_points=init_points)
