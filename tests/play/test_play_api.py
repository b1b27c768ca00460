"""The play API through FastAPI's test client: whole games, errors, records, hints and the review."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from pipeline.analysis.judge import read_game
from pipeline.engine import replay_dir
from pipeline.lineup.loader import load_agent
from pipeline.play.app import create_app
from pipeline.play.games import Games
from pipeline.play.opponents import Opponents, default_opponent, find_models, searcher

BASE = "http://127.0.0.1"  # the server answers only the addresses it serves (loopback by default)
JSON = {"content-type": "application/json"}  # every POST is JSON, even one without a body


def play_out(client, game_id: str, state: dict, rng: np.random.Generator) -> tuple[dict, list[dict], int]:
    """Play the human's side with random legal actions until the game ends: (last state, all events, decisions)."""
    events, decisions = [], 0
    while state["decision"] != "over":
        assert state["legal_actions"], state
        action = int(rng.choice(state["legal_actions"]))
        r = client.post(f"/api/games/{game_id}/actions", json={"action": action, "move": state["move"]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["id"] == game_id and set(body) == {"id", "state", "events"}
        state = body["state"]
        events += body["events"]
        decisions += 1
    return state, events, decisions


@pytest.mark.parametrize("opponent", ["random", "tiny"])
def test_whole_game_is_recorded_and_replays(client, games, tiny_model, opponent):
    spec = tiny_model if opponent == "tiny" else opponent
    r = client.post("/api/games", json={"opponent": spec, "seed": 11, "rounds": 3, "points": 20})
    assert r.status_code == 201
    game_id, state = r.json()["id"], r.json()["state"]
    assert state["you"] == 0 and state["opponent"] == spec and "seed" not in state  # the deals follow from it
    assert state["round"] == 1 and state["rounds"] == 3 and state["points"] == {"you": 20, "opponent": 20}
    assert state["decision"] == "discard" and len(state["hand"]) == 8
    assert state["hint_available"] == (opponent == "tiny")
    assert client.get(f"/api/games/{game_id}/record").status_code == 409
    assert client.get(f"/api/games/{game_id}/review").status_code == 409

    final, events, decisions = play_out(client, game_id, state, np.random.default_rng(0))
    events = r.json()["events"] + events  # the agent's opening turn, when it deals
    assert decisions >= 8
    assert final["winner"] in (0, 1, None) and final["legal_actions"] == []
    assert sum(final["points"].values()) == 40
    rounds = [e for e in events if e["type"] == "round"]
    assert rounds == [{"type": "round", **res} for res in final["results"]]
    for res in final["results"]:  # the winner's yaku add up to the points that changed hands
        if res["winner"] is not None:
            assert sum(p for _, p in res["yaku"]) == abs(res["points"]["you"])
    assert events[-1] == {"type": "over", "winner": final["winner"], "points": final["points"], "record": "saved"}
    turns = [e for e in events if e["type"] == "turn"]
    assert {e["player"] for e in turns} == {0, 1}  # the human's own draws are reported too

    record = client.get(f"/api/games/{game_id}/record")
    assert record.status_code == 200
    files = list((games.records_dir).glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text()) == record.json()
    names = record.json()["info"]
    assert (names["player1Name"], names["player2Name"]) == ("human", spec) and names["seed"] == 11  # now
    assert replay_dir(games.records_dir).summary() == {"games": 1, "rounds": len(final["results"]),
                                                       "turns": len(turns), "mismatches": 0}

    review = client.get(f"/api/games/{game_id}/review").json()
    agent_moves = review["decisions"]
    assert agent_moves and all(d["action"] in [o["action"] for o in d["options"]] for d in agent_moves)
    if opponent == "tiny":  # a greedy model: its move is the option it values most
        assert review["kind"] == "sl"
        for d in agent_moves:
            best = max(d["options"], key=lambda o: o["value"])
            assert d["action"] == best["action"]
            assert sum(o["probability"] for o in d["options"]) == pytest.approx(1.0, abs=1e-3)
    else:
        assert review["kind"] is None and "value" not in agent_moves[0]["options"][0]
    r = client.post(f"/api/games/{game_id}/actions", json={"action": 0})
    assert r.status_code == 409 and "over" in r.json()["error"]


def test_whole_game_against_a_search_opponent(tmp_path, tiny_model):
    """A ``search:`` opponent through the API (the server's own, as its default): a whole game, recorded and
    replayed; it searched, and it hints and reviews with its model's values. Other options are not offered."""
    spec = f"search:{tiny_model}?decisions=discard,koikoi&deals=2&reward=point"
    games = Games(tmp_path / "played", spec, models_root=Path(tiny_model).parent)
    with TestClient(create_app(games), base_url=BASE) as client:
        _search_game(client, games, spec, tiny_model)


def _search_game(client, games, spec: str, tiny_model: str) -> None:
    r = client.post("/api/games", json={"opponent": spec, "seed": 5, "rounds": 3})
    assert r.status_code == 201
    game_id, state = r.json()["id"], r.json()["state"]
    assert state["opponent"] == spec and state["hint_available"]
    about = client.get(f"/api/games/{game_id}/opponent").json()
    assert about["spec"] == spec and about["rating"] is None
    final, events, decisions = play_out(client, game_id, state, np.random.default_rng(3))
    assert decisions >= 8 and final["decision"] == "over" and final["legal_actions"] == []
    assert replay_dir(games.records_dir).summary()["mismatches"] == 0
    assert client.get(f"/api/games/{game_id}/record").json()["info"]["player2Name"] == spec
    review = client.get(f"/api/games/{game_id}/review").json()
    assert review["kind"] == "sl" and review["decisions"]
    assert games.opponents.load(spec, seed=0).player.searched >= 5  # one loaded searcher played, and it searched
    bad = client.post("/api/games", json={"opponent": f"search:{tiny_model}?deals=100000"})
    assert bad.status_code == 400 and "is not one this server offers" in bad.json()["error"]


def analysed(client, game_id: str) -> dict:
    """A finished game's analysis, asked for until the server has judged it (its progress checked meanwhile)."""
    deadline = time.monotonic() + 120
    while True:
        r = client.get(f"/api/games/{game_id}/analysis")
        assert r.status_code == 200, r.text
        doc = r.json()
        if doc["status"] == "done":
            return doc
        assert doc["status"] == "running" and 0 <= doc["done"] <= doc["total"] and time.monotonic() < deadline
        time.sleep(0.05)


def test_the_analysis_after_a_game_judges_the_persons_moves(client, games, judge_spec, tmp_path):
    created = client.post("/api/games", json={"seed": 12, "rounds": 2}).json()
    gid = created["id"]
    r = client.get(f"/api/games/{gid}/analysis")
    assert r.status_code == 409 and "not over: the analysis comes after the game" in r.json()["error"]
    play_out(client, gid, created["state"], np.random.default_rng(2))
    doc = analysed(client, gid)
    game = read_game("game", client.get(f"/api/games/{gid}/record").json())
    mine = [a for o, a in game.decisions if o.player == 0 and o.legal_mask & (o.legal_mask - 1)]
    assert [d["chosen"] for d in doc["decisions"]] == mine and {d["player"] for d in doc["decisions"]} == {1}
    assert set(doc["players"]) == {"1"} and doc["players"]["1"]["name"] == "human"
    assert doc["graph"]["perspective"] == 1 and doc["judge"] == {"deals": 4, "seed": 0, "spec": judge_spec}
    assert analysed(client, gid) == doc  # judged once, then served

    plain = Games(tmp_path / "plain", "random")  # a server without a trained model: no judge
    with TestClient(create_app(plain), base_url=BASE) as other:
        created = other.post("/api/games", json={"seed": 1, "rounds": 1}).json()
        play_out(other, created["id"], created["state"], np.random.default_rng(0))
        r = other.get(f"/api/games/{created['id']}/analysis")
        assert r.status_code == 409 and "no searcher to judge games with" in r.json()["error"]


def test_illegal_and_out_of_turn_actions_leave_the_game_unchanged(client):
    game = client.post("/api/games", json={"seed": 3}).json()
    gid, state = game["id"], game["state"]
    not_in_hand = next(a for a in range(48) if a not in state["legal_actions"])
    for bad in (not_in_hand, 48, 49, 50, -1, 10**6):
        r = client.post(f"/api/games/{gid}/actions", json={"action": bad})
        assert r.status_code == 400, bad
        assert r.json()["error"].startswith(f"illegal action {bad}") and "\n" not in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == {"id": gid, "state": state}
    # a click chosen at an earlier move (a double click, a second tab) is refused
    first = client.post(f"/api/games/{gid}/actions", json={"action": state["legal_actions"][0], "move": state["move"]})
    assert first.status_code == 200
    after = client.get(f"/api/games/{gid}").json()
    stale = client.post(f"/api/games/{gid}/actions", json={"action": state["legal_actions"][1], "move": state["move"]})
    assert stale.status_code == 409 and "out of turn" in stale.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == after


def test_bad_requests_get_one_line_errors(client):
    for path in ("/api/games/nope", "/api/games/nope/hint", "/api/games/nope/review", "/api/games/nope/record"):
        r = client.get(path)
        assert r.status_code == 404 and "nope" in r.json()["error"], path
    assert client.post("/api/games/nope/actions", json={"action": 1}).status_code == 404
    assert client.get("/api/nothing-here").status_code == 404
    cases = {
        "opponent": ({"opponent": "champion"}, "champion"),
        "missing model dir": ({"opponent": "models/none"}, "models/none"),
        "rounds": ({"rounds": 13}, "rounds"),
        "points": ({"points": 0}, "points"),
        "seed": ({"seed": -1}, "seed"),
        "type": ({"rounds": "8"}, "rounds"),
        "unknown field": ({"round": 8}, "round"),
    }
    for name, (body, word) in cases.items():
        r = client.post("/api/games", json=body)
        assert r.status_code == 400, name
        assert word in r.json()["error"] and "\n" not in r.json()["error"], (name, r.json())
    gid = client.post("/api/games", headers=JSON).json()["id"]  # no body: all defaults
    for body in ({}, {"action": "3"}, {"action": 1.5}, {"action": 1, "extra": 0}):
        r = client.post(f"/api/games/{gid}/actions", json=body)
        assert r.status_code == 400 and set(r.json()) == {"error"}, body


def test_hint_is_the_models_view_of_the_humans_options(client, tiny_model):
    state = client.post("/api/games", json={"opponent": tiny_model, "seed": 5}).json()
    gid = state["id"]
    r = client.get(f"/api/games/{gid}/hint")
    assert r.status_code == 200
    hint = r.json()
    assert hint["kind"] == "sl" and hint["move"] == state["state"]["move"]
    assert [o["action"] for o in hint["options"]] == state["state"]["legal_actions"]
    # the same numbers as the model's own values on the human's observation
    games = client.app.state.games
    game = games.get(gid)
    expected = load_agent(tiny_model).action_scores([game.state.observation(0)])[0]
    assert [o["value"] for o in hint["options"]] == pytest.approx([expected[o["action"]] for o in hint["options"]],
                                                                  abs=1e-4)
    no_values = client.post("/api/games", json={"opponent": "heuristic"}).json()["id"]
    r = client.get(f"/api/games/{no_values}/hint")
    assert r.status_code == 409 and "heuristic" in r.json()["error"]


def test_many_games_at_once(client):
    """Requests on different games run side by side; on one game the lock lets one action through."""
    ids = [client.post("/api/games", json={"seed": s, "rounds": 1}).json()["id"] for s in range(6)]
    results: dict[str, int] = {}

    def finish(gid: str) -> None:
        state = client.get(f"/api/games/{gid}").json()["state"]
        results[gid] = play_out(client, gid, state, np.random.default_rng(len(gid)))[2]

    threads = [threading.Thread(target=finish, args=(g,)) for g in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(ids) and all(n > 0 for n in results.values())

    gid = client.post("/api/games", json={"seed": 99}).json()["id"]
    state = client.get(f"/api/games/{gid}").json()["state"]
    codes: list[int] = []
    racers = [threading.Thread(target=lambda a=a: codes.append(client.post(
        f"/api/games/{gid}/actions", json={"action": a, "move": state["move"]}).status_code))
        for a in state["legal_actions"]]
    for t in racers:
        t.start()
    for t in racers:
        t.join()
    assert sorted(codes) == [200] + [409] * (len(racers) - 1)


def test_default_opponent_is_the_strongest_model_present(tmp_path, tiny_model):
    import shutil

    assert default_opponent(tmp_path)[0] == "heuristic"
    assert find_models(tmp_path / "models") == []
    for spec in ("models/sl", "models/rl/point", "models/rl_phase1/point", "models/aaa"):
        shutil.copytree(tiny_model, tmp_path / spec)
    (tmp_path / "models/winprob").mkdir()  # not a model
    assert default_opponent(tmp_path)[0] == "models/rl/point"  # RL before SL when unrated
    assert find_models(tmp_path / "models") == [str(tmp_path / m) for m in (  # the ranked first, then by name
        "models/rl/point", "models/sl", "models/aaa", "models/rl_phase1/point")]
    searcher_spec = "search:models/rl/point"  # over the strongest model; no params.yaml: the search defaults
    assert searcher(tmp_path) == searcher_spec
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)  # the server's ratings and params.yaml are its working directory's: none here
        offered = Opponents("heuristic", tmp_path / "models").offered()
    assert offered[4] == f"search:{tmp_path / 'models/rl/point'}" and offered[5:] == ["heuristic", "random"]
    ratings = tmp_path / "results/duels/ratings.json"
    ratings.parent.mkdir(parents=True)
    ratings.write_text(json.dumps({"ratings": {"sl": {"elo": 300.0}, "rl_point": {"elo": 250.0},
                                               "rl_wp": {"elo": 900.0}}}))
    assert default_opponent(tmp_path)[0] == "models/sl"  # rated stronger; rl_wp is rated but absent
    assert searcher(tmp_path) == "search:models/sl"
    ratings.write_text(json.dumps({"ratings": {"sl": {"elo": 300.0}, "rl_point": {"elo": 250.0},
                                               "search_sl": {"elo": 340.0}}}))
    assert default_opponent(tmp_path)[0] == "search:models/sl"  # the searcher, when rated above them all
    ratings.write_text(json.dumps({"ratings": {  # intervals that overlap: the fixed order, not the higher Elo
        "sl": {"elo": 300.0, "elo_lo": 200.0, "elo_hi": 400.0}, "rl_point": {"elo": 290.0, "elo_lo": 190.0,
                                                                            "elo_hi": 390.0},
        "search_rl_point": {"elo": 320.0, "elo_lo": 220.0, "elo_hi": 420.0}}}))
    assert default_opponent(tmp_path)[0] == "models/rl/point" and searcher(tmp_path) == searcher_spec
    ratings.write_text("{not json")
    assert default_opponent(tmp_path)[0] == "models/rl/point"


def test_the_page_and_its_files_are_served(client, tiny_model):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for name in ("app.js", "board.js", "cards.js", "style.css"):
        assert f"/static/{name}" in page.text
        assert client.get(f"/static/{name}").status_code == 200
    deck = client.get("/api/cards").json()
    assert [c["id"] for c in deck] == list(range(48)) and deck[0] == {
        "id": 0, "card": [1, 1], "month": "Pine", "name": "Crane", "category": "light", "ribbon": None}
    searcher_spec = f"search:{tiny_model}"  # params.yaml's options (none: the model's own rollout policy)
    assert client.get("/api/opponents").json() == {"default": "random",
                                                   "choices": [tiny_model, searcher_spec, "heuristic", "random"]}
    assert "/api/games/{game_id}/actions" in client.get("/openapi.json").json()["paths"]
