"""Over a thousand generated requests against the play API (hypothesis over FastAPI's test client): after each,
the answer is a JSON document of the documented shape (never a 500), it names no card the person may not see
(checked against the engine's true state), and the game is a legal one: the person's turn between requests,
the 48 cards each in one place, points zero-sum, an accepted action one the person could play, a refused
request changing nothing, and a finished game's record replaying move for move."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_play_leak import check

from pipeline.engine import GAME_OVER, PICK, replay_record
from pipeline.engine.cards import ALL_CARDS
from pipeline.net.encoding import MAX_POINTS

EXAMPLES = 140  # up to 60 requests each: about 1,300 checked (and as many GETs of the state before each)

FLOATS = st.floats(allow_nan=False, allow_infinity=False)  # what a JSON encoder sends; NaN comes as raw text
RAW = [b'{"action": NaN}', b'{"action": Infinity}', b'{"action": 1e999}', b'{"action": 1, "action": 2}',
       b'{"action": "1"}', b'\xff\xfe', b'', b'{"action": [1]}', b'{"action": {"$gt": 0}}']
OK = {200, 201}
REFUSED = {400, 404, 405, 409}


def invariants(s) -> None:
    """The engine state is one the rules allow, and it is the person's turn (seat 0) unless the game is over."""
    parts = [*s.hands, *s.piles, s.field, sum(1 << c for c in s.stock)]
    if s.phase == PICK:
        parts.append(1 << s.pick_card)
    union = 0
    for m in parts:
        union |= m
    assert union == ALL_CARDS and sum(m.bit_count() for m in parts) == 48, "48 cards, each in one place"
    assert sum(s.points) == 2 * s.init_points, "points are zero-sum"
    assert s.phase == GAME_OVER or (s.current_player == 0 and s.legal_actions()), "the person's turn"


def new_game_bodies(tiny_model: str) -> st.SearchStrategy:
    """Mostly games that start (so that actions follow), and every kind of bad field."""
    offered = st.sampled_from(["random", "heuristic", tiny_model, tiny_model + "/"])
    good = st.fixed_dictionaries({"seed": st.integers(0, 1000), "rounds": st.integers(1, 2)}, optional={
        "opponent": offered, "points": st.one_of(st.integers(1, 40), st.just(MAX_POINTS))})
    hostile_specs = ["/etc", "../", "../../etc/passwd", "x" * 300, "", "models/sl", tiny_model + "/..", "\0",
                     tiny_model + "/model.pt", "%2e%2e", "/tmp"]
    big = st.integers(min_value=-(2**70), max_value=2**70)
    # always a seed: a random one (no seed, or null) would make the games, so the draws, differ between runs
    bad = st.fixed_dictionaries({
        "seed": st.one_of(st.integers(0, 1000), big, FLOATS, st.text(max_size=3)),
        "rounds": st.one_of(st.integers(1, 2), st.integers(-2, 14), big, st.booleans()),
    }, optional={
        "opponent": st.one_of(offered, st.sampled_from(hostile_specs), st.text(max_size=12), st.integers()),
        "points": st.one_of(st.integers(-1, 40), st.integers(MAX_POINTS - 10, MAX_POINTS + 10), big, FLOATS),
        "round": st.integers(),  # not a field: refused
    })
    return st.one_of(good, good, good, bad)


def test_generated_requests_keep_every_game_legal_and_every_card_hidden(client, games, tiny_model, monkeypatch):
    # the counts below hold for fp32 play: under ``auto`` a bf16 CPU (AMX, AVX512-BF16) plays other moves
    monkeypatch.setattr("pipeline.runtime.hardware.cpu_has_bf16", lambda: False)
    counts = {"requests": 0, "games": 0, "actions": 0, "over": 0, "examples": 0}

    def send(method: str, path: str, **kw) -> tuple[int, dict]:
        r = client.request(method, path, **kw)
        counts["requests"] += 1
        assert r.status_code in OK | REFUSED, (method, path, kw, r.status_code, r.text)
        assert r.headers["content-type"].startswith("application/json"), r.text
        body = r.json()
        if r.status_code >= 400:
            assert set(body) == {"error"} and "\n" not in body["error"] and len(body["error"]) < 400, body
        return r.status_code, body

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def session(data):
        counts["examples"] += 1
        status, created = send("POST", "/api/games", json=data.draw(new_game_bodies(tiny_model)))
        if status != 201:
            return
        counts["games"] += 1
        gid, state = created["id"], created["state"]
        game = games.get(gid)
        check(created, game.state)
        invariants(game.state)
        for _ in range(data.draw(st.integers(1, 60))):
            kind = data.draw(st.sampled_from(["legal"] * 12 + ["any", "stale", "get", "hint", "review", "record",
                                                               "bad_id", "junk"]))
            before = client.get(f"/api/games/{gid}").json()["state"]
            s_before = game.state.clone()
            if kind == "legal" and state["legal_actions"]:
                action, move = data.draw(st.sampled_from(state["legal_actions"])), state["move"]
            else:
                action = data.draw(st.one_of(st.integers(-3, 60), st.integers(), st.text(max_size=3),
                                             st.booleans(), st.none(), FLOATS))
                move = data.draw(st.one_of(st.none(), st.just(state["move"]), st.integers()))
            if kind in ("legal", "any", "stale"):
                body = {"action": action} if move is None or kind == "any" else {"action": action, "move": move}
                status, resp = send("POST", f"/api/games/{gid}/actions", json=body)
                if status == 200:  # only an action the person could play, at the current move
                    assert type(action) is int and action in before["legal_actions"], (action, before)
                    assert body.get("move", before["move"]) == before["move"]
                    counts["actions"] += 1
                    state = resp["state"]
                else:
                    assert client.get(f"/api/games/{gid}").json()["state"] == before  # refused: nothing changed
                    assert game.state.turns == s_before.turns and game.state.hands == s_before.hands
            elif kind == "junk":
                status, resp = send("POST", f"/api/games/{gid}/actions",
                                    content=data.draw(st.one_of(st.sampled_from(RAW), st.binary(max_size=20))),
                                    headers={"content-type": "application/json"})
            elif kind == "bad_id":
                status, resp = send("GET", f"/api/games/{data.draw(st.text('abcdef0123456789./%', max_size=14))}x")
            else:
                status, resp = send("GET", f"/api/games/{gid}" + ("" if kind == "get" else f"/{kind}"))
                if kind == "record" and status == 200:  # the finished game replays move for move
                    report = replay_record(json.loads(json.dumps(resp)))
                    assert report.mismatches == [] and report.errors == [], report
                    assert [resp["result"]["player1EndPts"], resp["result"]["player2EndPts"]] == game.state.points
            if kind not in ("bad_id", "review", "record"):  # both come after the game: all is public then
                check(resp, game.state)
            invariants(game.state)
            if state["decision"] == "over":
                counts["over"] += 1
                break

    session()
    assert counts["requests"] >= 1000 and counts["games"] >= 50 and counts["actions"] >= 500, counts
    assert counts["over"] >= 5, counts
