"""Build exact deals for scenario tests; check a state's invariants."""

from __future__ import annotations

from pipeline.engine import GAME_OVER, PICK, GameState, card_id
from pipeline.engine.cards import ALL_CARDS
from pipeline.engine.deal import deal_is_valid


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


def check_invariants(s: GameState) -> None:
    """AssertionError if ``s`` is inconsistent: 48 cards once each, zero-sum points, a legal action pending."""
    h0, h1 = s.hands
    p0, p1 = s.piles
    parts = [h0, h1, p0, p1, s.field]
    stock = 0
    for c in s.stock:
        stock |= 1 << c
    parts.append(stock)
    if s.phase == PICK:
        parts.append(1 << s.pick_card)  # the shown card, between hand/stock and pile
    total = sum(m.bit_count() for m in parts)
    union = 0
    for m in parts:
        union |= m
    assert union == ALL_CARDS and total == 48, "the 48 cards must each be in exactly one place"
    assert sum(s.points) == 2 * s.init_points, "round points must be zero-sum"
    if s.phase != GAME_OVER:
        assert s.legal_actions(), "a pending decision must have a legal action"
