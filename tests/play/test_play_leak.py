"""No response names a card the human may not see: checked against the engine's true state at every decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from test_play_api import analysed, play_out
from tiny import assert_blind

from pipeline.analysis.judge import read_game
from pipeline.engine import PICK, GameState, Turn, ids_of
from pipeline.engine.cards import card_id
from pipeline.play.app import create_app
from pipeline.play.games import Games
from pipeline.play.view import state_view

BASE = "http://127.0.0.1"  # the server answers only the addresses it serves (loopback by default)


def named_cards(doc: Any, key: str = "") -> set[int]:
    """Every card a JSON document names: ``[month, index]`` pairs anywhere, and the ids in ``legal_actions``."""
    if key == "legal_actions":
        return {a for a in doc if a < 48}
    if isinstance(doc, dict):
        return set().union(*(named_cards(v, k) for k, v in doc.items())) if doc else set()
    if isinstance(doc, list):
        if (len(doc) == 2 and all(type(x) is int for x in doc) and 1 <= doc[0] <= 12 and 1 <= doc[1] <= 4):
            return {card_id(*doc)}
        return set().union(*(named_cards(v) for v in doc)) if doc else set()
    return set()


def turn_cards(turns) -> int:
    m = 0
    for t in turns:
        m |= 1 << t.discard | t.captured | t.captured2 | (1 << t.draw if t.draw >= 0 else 0)
    return m


def visible(s: GameState, you: int, events: list[dict]) -> int:
    """What the human may see now: own hand, field, both piles, the pending card, this round's public turns,
    and the turns of the rounds whose end this response reports."""
    m = s.hands[you] | s.field | s.piles[0] | s.piles[1] | turn_cards(s.turns)
    if s.phase == PICK:
        m |= 1 << s.pick_card
    if not s.is_over and s.cur[1] >= 0:
        m |= turn_cards([Turn(*s.cur)])  # the turn in progress
    ended = {e["round"] for e in events if e["type"] == "round"}
    for res in s.results:
        if res.round in ended:
            m |= turn_cards(res.turns)
    return m


def hidden(s: GameState, you: int) -> int:
    m = s.hands[you ^ 1]
    for c in s.stock:
        m |= 1 << c
    return m


def check(response: dict, s: GameState, you: int = 0) -> int:
    """Assert the response names only visible cards; return how many it named."""
    events = response.get("events", [])
    named = named_cards(response)
    allowed = set(ids_of(visible(s, you, events)))
    assert named <= allowed, f"names cards the human may not see: {sorted(named - allowed)}"
    assert len(named) <= len(allowed)
    return len(named)


def test_the_checker_catches_a_leak():
    s = GameState(seed=1)
    opp_card = ids_of(s.hands[1])[0]
    stock_card = s.stock[-1]
    assert opp_card in ids_of(hidden(s, 0)) and not visible(s, 0, []) >> opp_card & 1
    for leaked in (opp_card, stock_card):
        month, index = leaked // 4 + 1, leaked % 4 + 1
        with pytest.raises(AssertionError, match="may not see"):
            check({"state": {"deep": [{"x": [month, index]}]}}, s)
        with pytest.raises(AssertionError, match="may not see"):
            check({"state": {"legal_actions": [leaked]}}, s)


@pytest.mark.parametrize("opponent", ["random", "tiny", "search"])
def test_no_response_names_a_hidden_card(tmp_path, tiny_model, opponent):
    spec = {"tiny": tiny_model, "search": f"search:{tiny_model}?decisions=discard,koikoi&deals=2&reward=point"}.get(
        opponent, opponent)
    games = Games(tmp_path / "played", spec, models_root=Path(tiny_model).parent)  # spec: offered, as the default
    with TestClient(create_app(games), base_url=BASE) as client:
        _no_hidden_card(client, games, spec, opponent)


def _no_hidden_card(client, games, spec: str, opponent: str) -> None:
    rng = np.random.default_rng(7)
    decisions = named_total = 0
    for seed in range(3):
        created = client.post("/api/games", json={"opponent": spec, "seed": seed, "rounds": 8}).json()
        gid, state = created["id"], created["state"]
        s = games.get(gid).state
        named_total += check(created, s)
        while state["decision"] != "over":
            assert hidden(s, 0) & visible(s, 0, []) == 0  # the two sets are disjoint within a round
            if opponent != "random":
                check(client.get(f"/api/games/{gid}/hint").json(), s)
            check(client.get(f"/api/games/{gid}").json(), s)
            # the page's other endpoints name no card at all
            assert named_cards(client.get(f"/api/games/{gid}/opponent").json()) == set()
            assert named_cards(client.get("/api/history").json()) == set()
            body = client.post(f"/api/games/{gid}/actions",
                               json={"action": int(rng.choice(state["legal_actions"]))}).json()
            named_total += check(body, s)
            state = body["state"]
            decisions += 1
    assert named_cards(client.get("/api/opponents/about").json()) == set()
    assert decisions >= 150, decisions  # hundreds of responses checked across the two opponents
    assert named_total > decisions * 8  # the check saw real card lists, not empty documents


def test_the_page_view_is_the_same_whatever_the_hidden_cards_are():
    """The whole state the page gets (board, yaku, progress toward yaku, history) is unchanged when the
    opponent's hand and the stock are dealt again: it cannot depend on them."""
    rng = np.random.default_rng(5)
    kw = dict(over=False, winner=None, opponent="x", move=0, has_values=False, values=None)
    compared = changed = 0
    for seed in range(2):
        s = GameState(seed=seed, num_rounds=3)
        while not s.is_over:
            if s.current_player == 0:
                changed += assert_blind(lambda st: state_view(st.observation(0), st.results, **kw), s, 0, rng,
                                        redeals=3)[1]
                compared += 3
            s.step(int(rng.choice(ids_of(s.legal_mask()))))
    assert compared > 60 and changed > 0.9 * compared  # the hidden cards really were dealt again


def test_the_analysis_names_only_what_the_person_saw_at_each_judged_decision(client):
    """After the game, the analysis of the person's moves shows at each of them the person's own view as the
    finished game's record replays it (hand, field, piles, the card to match), and names no other card: not the
    opponent's hand nor the stock as they were then. During the game it answers 409 and names nothing."""
    created = client.post("/api/games", json={"seed": 21, "rounds": 2}).json()
    gid = created["id"]
    early = client.get(f"/api/games/{gid}/analysis")
    assert early.status_code == 409 and named_cards(early.json()) == set()
    play_out(client, gid, created["state"], np.random.default_rng(4))
    doc = analysed(client, gid)
    game = read_game("game", client.get(f"/api/games/{gid}/record").json())
    views = [o for o, _ in game.decisions if o.player == 0 and o.legal_mask & (o.legal_mask - 1)]
    assert len(doc["decisions"]) == len(views) > 5
    for d, o in zip(doc["decisions"], views):
        seen = o.hand | o.field | o.my_pile | o.opp_pile | (1 << o.pick_card if o.pick_card >= 0 else 0)
        assert named_cards(d) <= set(ids_of(seen)) and len(named_cards(d)) >= o.hand.bit_count()
        assert {x["action"] for x in d["options"]} == set(ids_of(o.legal_mask))
    rest = {k: v for k, v in doc.items() if k != "decisions"}
    assert named_cards(rest) == set()  # the graph, the players, the judge: no card
