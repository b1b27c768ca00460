"""The play API under hostile input: every field checked against the rules' ranges, opponents only from the
server's own list (with one answer for every refusal), JSON errors everywhere, a failed request rolls its
game back, a record the disk refuses is kept, and the loaded models are bounded."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from test_play_api import BASE, play_out

from pipeline.commands.play import _addresses
from pipeline.net.encoding import MAX_POINTS
from pipeline.play.app import create_app
from pipeline.play.game_session import shown
from pipeline.play.games import MAX_SEED, Games
from pipeline.play.opponents import Opponents, networks


def one_line_json(r, status: int | None = None) -> str:
    """The documented error shape: a JSON object with one key, ``error``, one line; returns the line."""
    assert r.headers["content-type"].startswith("application/json"), (r.status_code, r.text)
    if status is not None:
        assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and isinstance(body["error"], str) and "\n" not in body["error"], body
    assert len(body["error"]) < 400, body  # an echoed input is cut short
    return body["error"]


@pytest.mark.parametrize("body, field", [
    ({"rounds": 0}, "rounds"), ({"rounds": 13}, "rounds"),
    ({"points": 0}, "points"), ({"points": MAX_POINTS + 1}, "points"),
    ({"points": 2**63}, "points"), ({"points": 10**30}, "points"), ({"points": 1e30}, "points"),
    ({"seed": -1}, "seed"), ({"seed": MAX_SEED + 1}, "seed"), ({"seed": 2**63}, "seed"),
    ({"opponent": ""}, "opponent"), ({"opponent": "x" * 256}, "opponent"), ({"opponent": 3}, "opponent"),
])
def test_new_game_fields_are_checked_against_the_rules(client, body, field):
    err = one_line_json(client.post("/api/games", json=body), 400)
    assert err.startswith(field), err


def test_the_reported_overflow_is_refused_and_the_largest_points_play(client, tiny_model):
    """The report: points 2^63 against a model was accepted, then failed with a text/plain 500."""
    one_line_json(client.post("/api/games", json={"points": 2**63, "rounds": 1, "opponent": tiny_model,
                                                  "seed": 1}), 400)
    r = client.post("/api/games", json={"points": MAX_POINTS, "rounds": 2, "opponent": tiny_model, "seed": 1})
    assert r.status_code == 201, r.text
    final, _, _ = play_out(client, r.json()["id"], r.json()["state"], np.random.default_rng(1))
    assert sum(final["points"].values()) == 2 * MAX_POINTS


def test_only_the_offered_opponents_and_one_answer_for_every_other(client, tiny_model, tmp_path):
    offered = client.get("/api/opponents").json()["choices"]
    assert offered == [tiny_model, f"search:{tiny_model}", "heuristic", "random"]
    outside = tmp_path / "elsewhere" / "model"
    shutil.copytree(tiny_model, outside)  # a real model, but not under the server's models root
    (tmp_path / "empty").mkdir()
    probes = ["/etc", "/etc/passwd", "../", "../../../../etc", "/nonexistent/dir", str(outside),
              str(tmp_path / "empty"), "models/none", tiny_model + "/../..", tiny_model + "/model.pt",
              "x" * 255, "a/" * 120, "\0", "random ", "RANDOM", "%2e%2e/%2e%2e", "models/sl\0/etc",
              f"search:{tiny_model}?deals=100000", f"search:{outside}", "search:/etc"]
    answers = set()
    for spec in probes:
        err = one_line_json(client.post("/api/games", json={"opponent": spec}), 400)
        assert "not one this server offers" in err, err
        answers.add(err.replace(shown(spec), "SPEC", 1))
    assert len(answers) == 1, answers  # existing, missing, empty, a model elsewhere: the same words
    for same in (tiny_model + "/", tiny_model + "/.", str(Path(tiny_model).parent / "." / "tiny")):
        r = client.post("/api/games", json={"opponent": same, "seed": 1})
        assert r.status_code == 201 and r.json()["state"]["opponent"] == tiny_model, r.text


def test_errors_are_the_documented_json_everywhere(client):
    gid = client.post("/api/games", json={"seed": 2}).json()["id"]
    cases = [
        (client.get("/api/nothing"), 404), (client.delete(f"/api/games/{gid}"), 405),
        (client.get("/api/games/" + "x" * 60_000), 404), (client.put("/api/games"), 405),
        (client.post("/api/games", content=b"{not json", headers={"content-type": "application/json"}), 400),
        (client.post("/api/games", content=b"[]", headers={"content-type": "application/json"}), 400),
        (client.post(f"/api/games/{gid}/actions", json={"action": 10**40}), 400),
        (client.post(f"/api/games/{gid}/actions", json={"action": 1, "move": 10**40}), 409),
        (client.post(f"/api/games/{gid}/actions", json={"action": True}), 400),
        (client.post(f"/api/games/{gid}/actions", json=None), 415),  # no body, so no JSON content type
        (client.post(f"/api/games/{gid}/actions", content=b"", headers={"content-type": "application/json"}), 400),
        (client.get(f"/api/games/{gid}/record"), 409), (client.get(f"/api/games/{gid}/review"), 409),
        (client.get("/static/../../../etc/passwd"), 404),
    ]
    for r, status in cases:
        one_line_json(r, status)


class Boom(RuntimeError):
    pass


def test_an_exception_in_a_request_rolls_the_game_back(games, tiny_model):
    """The agent fails after the person's move: a JSON 500, the game exactly as before the request (the
    person's turn), the legal actions the person's own, and the same action plays once the agent works."""
    with TestClient(create_app(games), base_url=BASE, raise_server_exceptions=False) as client:
        created = client.post("/api/games", json={"opponent": tiny_model, "seed": 4, "rounds": 1}).json()
        gid, state = created["id"], created["state"]
        game = games.get(gid)
        before_engine = game.state.clone()
        agent = game.agent

        def failing(observations):
            raise Boom("the agent failed")

        game._agent = type("Failing", (), {"act": staticmethod(failing), "action_scores": agent.action_scores,
                                           "meta": agent.meta})()
        action = state["legal_actions"][0]
        for _ in range(2):
            r = client.post(f"/api/games/{gid}/actions", json={"action": action, "move": state["move"]})
            assert "internal error" in one_line_json(r, 500) and "Boom" in r.json()["error"]
            assert client.get(f"/api/games/{gid}").json() == {"id": gid, "state": state}
            s = game.state
            assert s.current_player == 0 and s.hands == before_engine.hands and s.turns == before_engine.turns
            assert s.rng.bit_generator.state == before_engine.rng.bit_generator.state
        illegal = next(a for a in range(48) if a not in state["legal_actions"])
        err = one_line_json(client.post(f"/api/games/{gid}/actions", json={"action": illegal}), 400)
        assert err.endswith(f"legal: {state['legal_actions']}")  # the person's own hand, never the agent's
        game._agent = agent
        r = client.post(f"/api/games/{gid}/actions", json={"action": action, "move": state["move"]})
        assert r.status_code == 200 and r.json()["state"]["move"] > state["move"]


def test_a_record_the_disk_refuses_is_kept_served_and_written_later(tmp_path, tiny_model):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the records directory's parent should be")  # refuses even root
    games = Games(blocker / "played", "random", max_games=2, models_root=Path(tiny_model).parent)
    with TestClient(create_app(games), base_url=BASE) as client:
        created = client.post("/api/games", json={"seed": 8, "rounds": 1}).json()
        gid = created["id"]
        final, events, _ = play_out(client, gid, created["state"], np.random.default_rng(0))
        over = events[-1]
        assert over["type"] == "over" and f"GET /api/games/{gid}/record" in over["record"]
        assert str(tmp_path) not in over["record"]  # what to do, not the server's paths
        record = client.get(f"/api/games/{gid}/record")
        assert record.status_code == 200 and record.json()["result"]["isOver"] is True
        assert [g.id for g in games.unsaved()] == [gid]
        for seed in range(3):  # newer games push the table past max_games: the unsaved one stays
            client.post("/api/games", json={"seed": seed})
        assert client.get(f"/api/games/{gid}").json()["state"] == final
        blocker.unlink()
        again = client.get(f"/api/games/{gid}/record")  # the retry writes it
        assert again.json() == record.json() and games.unsaved() == []
        files = list((blocker / "played").glob("*.json"))
        assert len(files) == 1 and gid in files[0].name


def test_unsaved_records_go_to_the_fallback_at_shutdown(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    games = Games(blocker / "played", "random")
    with TestClient(create_app(games), base_url=BASE) as client:
        created = client.post("/api/games", json={"seed": 9, "rounds": 1}).json()
        play_out(client, created["id"], created["state"], np.random.default_rng(0))
    [(gid, path)] = games.save_unsaved(tmp_path / "fallback")
    assert gid == created["id"] and path.parent == tmp_path / "fallback" and path.is_file()


def test_models_are_shared_and_at_most_a_few_stay_loaded(tmp_path, tiny_model):
    root = tmp_path / "models"
    for name in ("a", "b", "c", "d"):
        shutil.copytree(tiny_model, root / name)
    per_model = networks(Opponents("random", root).load(str(root / "a"), seed=1))
    pool = Opponents("random", root, max_networks=2 * per_model)
    offered = pool.offered()  # the models, the searcher over the strongest (unrated: the first), the built-ins
    assert offered[:4] == [str(root / n) for n in "abcd"] and offered[5:] == ["heuristic", "random"]
    assert offered[4] == f"search:{root / 'a'}"
    first = pool.load(str(root / "a"), seed=1)
    assert pool.load(str(root / "a"), seed=2) is first  # shared by the games that play it
    for name in "bcd":
        pool.load(str(root / name), seed=1)
        assert len(pool._models) <= 2 and sum(n for _, n in pool._models.values()) <= 2 * per_model
    assert pool.load(str(root / "a"), seed=1) is not first  # dropped, loaded again


def test_an_address_other_than_loopback_is_named_and_flagged():
    assert _addresses("127.0.0.1", 8000) == ("127.0.0.1:8000", "http://127.0.0.1:8000/", False)
    assert _addresses("::1", 8000) == ("[::1]:8000", "http://[::1]:8000/", False)
    assert _addresses("0.0.0.0", 80) == ("0.0.0.0:80 (every network interface)", "http://127.0.0.1:80/", True)
    assert _addresses("::", 80) == ("[::]:80 (every network interface)", "http://[::1]:80/", True)
    assert _addresses("192.168.1.5", 8000) == ("192.168.1.5:8000", "http://192.168.1.5:8000/", True)
