"""The play server under the attacks of issue 47: nothing in a response before a game's end gives its hidden cards
away, one bounded pool of networks whatever the games, a refused disk never locks people out, bounded requests
with short one-line errors, and no other site or host can drive the server."""

from __future__ import annotations

import gc
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hostile_client import leaked
from test_play_api import BASE, play_out

from pipeline.net.model import KoiKoiNet
from pipeline.play.app import create_app
from pipeline.play.games import Games
from pipeline.play.guard import MAX_BODY

STATIC = Path(__file__).resolve().parents[2] / "pipeline/play/static"


def _play_collecting(client, spec: str, seed: int | None, rng) -> tuple[str, list, dict]:
    """A one-round game played to its end; every response sent before the end, and the record."""
    body = {"opponent": spec, "rounds": 2} | ({} if seed is None else {"seed": seed})
    doc = client.post("/api/games", json=body).json()
    gid, state, before = doc["id"], doc["state"], [doc]
    while state["decision"] != "over":
        before.append(client.get(f"/api/games/{gid}").json())
        if spec != "random":
            before.append(client.get(f"/api/games/{gid}/hint").json())
        before.append(client.get(f"/api/games/{gid}/opponent").json())
        before.append(client.get(f"/api/games/{gid}/record").json())  # 409 before the end
        analysis = client.get(f"/api/games/{gid}/analysis")  # 409 before the end too
        assert analysis.status_code == 409
        before.append(analysis.json())
        doc = client.post(f"/api/games/{gid}/actions", json={"action": int(rng.choice(state["legal_actions"])),
                                                            "move": state["move"]}).json()
        state = doc["state"]
        if state["decision"] != "over":
            before.append(doc)
    return gid, before, client.get(f"/api/games/{gid}/record").json()


def test_the_checker_finds_a_seed_or_anything_that_deals_the_same():
    from pipeline.engine import GameState, game_to_record, ids_of

    s = GameState(seed=123456, num_rounds=1)
    while not s.is_over:
        s.step(ids_of(s.legal_mask())[0])
    record = game_to_record(s, ("human", "random"))
    record["info"]["seed"] = 123456
    assert leaked([{"state": {"x": [1, 2, {"deep": 123456}]}}], record)
    assert leaked([{"error": "game 1e240 is at move 3"}], record)  # 0x1e240 = 123456, written in a string
    del record["info"]["seed"]
    assert leaked([{"state": {"seed": 123456}}], record)  # no seed named: any number that deals the same
    assert not leaked([{"state": {"move": 3, "id": "0"}}], record)


@pytest.mark.parametrize("opponent", ["random", "tiny"])
def test_no_response_before_the_end_gives_the_deal_away(client, games, tiny_model, opponent):
    """Every field of every response before a game's end, each number in it tried as a seed: none deals the
    game's hands; the seed is in the finished game's record."""
    spec = tiny_model if opponent == "tiny" else opponent
    rng = np.random.default_rng(3)
    checked = 0
    for seed in (None, None, 2**40 + 7):  # random seeds, and one the client chose (it knows it: still not sent)
        gid, before, record = _play_collecting(client, spec, seed, rng)
        assert record["info"]["seed"] == games.get(gid).seed
        assert seed is None or record["info"]["seed"] == seed
        assert not leaked(before, record), gid
        assert all("seed" not in (r.get("state") or {}) for r in before)
        checked += len(before)
    assert checked > 30


def test_a_random_seed_is_too_large_to_find_by_trying_every_one(client, games):
    """Your hand and the field are public to you: with a seed from 2^31 values, trying them all finds the deal.
    A game without a chosen seed draws it from the 2^53 the API takes."""
    seeds = [games.get(client.post("/api/games", json={"rounds": 1}).json()["id"]).seed for _ in range(8)]
    assert max(seeds) >= 2**40 and len(set(seeds)) == 8


def _live_nets() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is KoiKoiNet)


def test_one_bounded_pool_of_networks_for_every_game(tmp_path, tiny_model):
    """Games cycling through six model opponents: the games share the pool's agent (no copy each), and the
    networks alive in the process stay within the pool's bound however many games there are."""
    root = tmp_path / "models"
    for i in range(6):
        shutil.copytree(tiny_model, root / f"m{i}")
    games = Games(tmp_path / "played", "random", models_root=root)
    pool = games.opponents
    before = _live_nets()
    specs = [str(root / f"m{i}") for i in range(6)]
    with TestClient(create_app(games), base_url=BASE) as client:
        ids = []
        for n in range(30):
            r = client.post("/api/games", json={"opponent": specs[n % 6], "seed": n})
            assert r.status_code == 201, r.text
            gid, state = r.json()["id"], r.json()["state"]
            client.post(f"/api/games/{gid}/actions", json={"action": state["legal_actions"][0]})
            ids.append(gid)
            if n % 6 == 5:
                assert _live_nets() - before <= pool.max_networks, n
        assert len({g for g in ids if client.get(f"/api/games/{g}").status_code == 200}) == 30  # all still live
        a, b = client.post("/api/games", json={"opponent": specs[0]}).json(), \
            client.post("/api/games", json={"opponent": specs[0]}).json()
        assert games.get(a["id"]).agent is games.get(b["id"]).agent  # shared, not copied
        assert sum(n for _, n in pool._models.values()) <= pool.max_networks and len(pool._models) >= 1
    assert _live_nets() - before <= pool.max_networks


def test_a_refused_disk_never_evicts_a_new_game_and_then_refuses_new_games(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the records directory's parent should be")
    games = Games(blocker / "played", "random", max_games=2, max_unsaved=3)
    rng = np.random.default_rng(0)
    with TestClient(create_app(games), base_url=BASE) as client:
        unsaved = []
        for seed in range(3):
            created = client.post("/api/games", json={"seed": seed, "rounds": 1}).json()
            play_out(client, created["id"], created["state"], rng)
            unsaved.append(created["id"])
            if seed < 2:  # the table of live games is full of unsaved records: a new game still lives
                r = client.post("/api/games", json={"seed": 10 + seed})
                assert r.status_code == 201 and client.get(f"/api/games/{r.json()['id']}").status_code == 200
        assert sorted(g.id for g in games.unsaved()) == sorted(unsaved)
        r = client.post("/api/games", json={"seed": 20})
        assert r.status_code == 503, r.text
        err = r.json()["error"]
        assert "cannot write game records" in err and "\n" not in err and str(tmp_path) not in err
        for gid in unsaved:  # still served, record and all
            assert client.get(f"/api/games/{gid}/record").json()["result"]["isOver"] is True
        blocker.unlink()  # the disk takes records again: they are written, new games come
        r = client.post("/api/games", json={"seed": 21})
        assert r.status_code == 201 and games.unsaved() == []
        assert len(list((blocker / "played").glob("*.json"))) == 3


def _one_line(r, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and "\r" not in body["error"], body
    assert len(body["error"]) <= 300, len(body["error"])
    return body["error"]


def test_requests_are_bounded_and_errors_echo_a_short_line(client):
    big = json.dumps({"rounds": 1, "pad": "x" * 70_000}).encode()
    _one_line(client.post("/api/games", content=big, headers={"content-type": "application/json"}), 413)

    def chunks():  # no Content-Length: the size is counted as the body comes
        for _ in range(20):
            yield b" " * 8192

    _one_line(client.post("/api/games", content=chunks(), headers={"content-type": "application/json"}), 413)
    assert MAX_BODY < 70_000
    err = _one_line(client.post("/api/games", json={"k" * 10_000: 1}), 400)
    assert err.count("k") < 60
    _one_line(client.post("/api/games", json={"a\nb\r\nc": 1}), 400)
    gid = client.post("/api/games", json={"seed": 1}).json()["id"]
    _one_line(client.post(f"/api/games/{gid}/actions", json={"action": 1, "x\ny" * 2000: 2}), 400)


def test_only_the_served_host_and_json_posts_from_the_page_itself(client):
    _one_line(client.get("/api/opponents", headers={"host": "evil.example"}), 400)
    _one_line(client.get("/", headers={"host": "evil.example:8000"}), 400)
    _one_line(client.post("/api/games", content=b"rounds=1",
                          headers={"content-type": "application/x-www-form-urlencoded"}), 415)
    _one_line(client.post("/api/games", content=b'{"rounds": 1}', headers={"content-type": "text/plain"}), 415)
    _one_line(client.post("/api/games", content=b"", headers={"content-type": "multipart/form-data; b=x"}), 415)
    _one_line(client.post("/api/games", json={"rounds": 1}, headers={"origin": "http://evil.example"}), 403)
    _one_line(client.post("/api/games", json={"rounds": 1}, headers={"origin": "null"}), 403)
    assert client.post("/api/games", json={"rounds": 1}, headers={"origin": BASE}).status_code == 201
    assert client.get("/api/opponents", headers={"host": "localhost:8000"}).status_code == 200
    assert client.get("/api/opponents", headers={"host": "[::1]:8000"}).status_code == 200
    for r in (client.get("/"), client.get("/api/opponents"), client.get("/static/deck.html"),
              client.get("/api/nothing"), client.get("/", headers={"host": "evil.example"})):
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in \
            csp.split("script-src")[1].split(";")[0]
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
    for page in STATIC.glob("*.html"):  # the CSP runs no inline script: every script is a file
        text = page.read_text()
        assert text.count("<script") == text.count('<script src="'), page.name
        assert not re.search(r"<[^>]*\son[a-z]+\s*=", text), page.name  # nor inline event handlers


def test_the_served_hosts_are_the_listening_address_and_loopback_names():
    from pipeline.commands.play import served_hosts

    assert set(served_hosts("127.0.0.1")) >= {"127.0.0.1", "localhost", "::1"}
    assert served_hosts("192.168.1.5") == ["192.168.1.5"]
    every = served_hosts("0.0.0.0")
    assert "localhost" in every and "evil.example" not in every


def test_the_hostile_client_finds_nothing(tmp_path):
    """The hostile client (tests/play/hostile_client.py) against a live ``koikoi play``: 200 requests."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-m", "tests.play.hostile_client", "--requests", "200"], cwd=root,
                       capture_output=True, text=True, timeout=600)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0 and out["5xx"] == out["leaks"] == out["unexpected"] == 0, out
    assert out["requests"] >= 200 and out["models"] == 6 and out["rss_end_mb"] is not None
