"""``koikoi play``: one-line usage errors, and a real server started by the command."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tiny import free_port

from pipeline.cli import main


def test_usage_errors_exit_2_with_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cases = [
        (["--opponent", "champion"], "champion"),
        (["--opponent", "models/none"], "models/none"),
        (["--threads", "0"], "--threads"),
        (["--opponent", "x" * 300], "File name too long"),
        (["--models", "nope"], "--models nope"),
    ]
    for args, word in cases:
        assert main(["play", "--no-browser", "--port", str(free_port()), *args]) == 2, args
        err = capsys.readouterr().err.strip()
        assert err.startswith("koikoi play: error:") and word in err and "\n" not in err, err
    for port in ("0", "70000"):
        assert main(["play", "--no-browser", "--port", port]) == 2
        assert "--port must be in 1..65535" in capsys.readouterr().err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["play", "--no-browser", "--port", str(port)]) == 2
        assert "choose another --port" in capsys.readouterr().err


def test_the_command_serves_a_game(tmp_path, tiny_model):
    """Served on every interface: the address it listens on is printed, and a warning that nothing guards it."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    koikoi = Path(sys.executable).parent / "koikoi"  # the installed command
    proc = subprocess.Popen([str(koikoi), "play", "--no-browser", "--port", str(port), "--host", "0.0.0.0",
                             "--opponent", tiny_model, "--records", str(tmp_path / "played")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # the command imports torch for the model first: give it time on a busy machine
            try:
                with urllib.request.urlopen(f"{base}/api/opponents", timeout=2) as r:
                    opponents = json.load(r)
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()[1]
                time.sleep(0.1)
        else:
            pytest.fail("koikoi play did not answer within 30 s")
        assert opponents["default"] == tiny_model
        req = urllib.request.Request(f"{base}/api/games", data=b'{"seed": 1, "rounds": 1}', method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 201 and json.load(r)["state"]["opponent"] == tiny_model
        with urllib.request.urlopen(f"{base}/", timeout=5) as r:
            assert b"koikoi" in r.read()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}/ (listening on 0.0.0.0:{port} (every network interface))" in err, err
    assert str(Path(tmp_path / "played")) in err
    assert "warning: the server has no authentication" in err


def test_the_warm_up_meets_every_decision_type_at_two_batch_sizes():
    from pipeline.agents.base import Agent, legal_list
    from pipeline.play.opponents import warm_up

    class Recorder(Agent):
        name = "recorder"

        def __init__(self) -> None:
            self.batches: list[list[int]] = []

        def act(self, observations):
            self.batches.append([o.decision for o in observations])
            return [legal_list(o)[0] for o in observations]

    agent = Recorder()
    warm_up(agent)
    # a compile with dynamic batch sizes settles after two shapes; a searcher of any decision type searches one
    assert [len(b) for b in agent.batches] == [1, 7] and set(agent.batches[1]) == {0, 1, 2}


def test_the_champion_is_served_as_measured_and_its_missing_table_blames_no_flag(tmp_path, tiny_model, monkeypatch,
                                                                                 capsys):
    """Issue 69: `koikoi play` served a searcher champion with think=0.5s added (not the agent measured), and a
    champion whose win-probability table is missing was blamed on --opponent, which nobody gave."""
    import shutil

    from pipeline.play.opponents import champion

    shutil.copytree(tiny_model, tmp_path / "models/rl/wp")
    spec = "search:models/rl/wp?decisions=koikoi&deals=32"  # reward wp: reads models/winprob/winprob.json
    (tmp_path / "results/duels").mkdir(parents=True)
    (tmp_path / "results/duels/champion.json").write_text(json.dumps(
        {"spec": spec, "win_rate": 0.59, "ci95": [0.568, 0.611], "against": "models/sl", "games": 2000}))
    assert champion(tmp_path)[0] == spec  # the measured agent itself
    served, why = champion(tmp_path, deals=64)
    assert "deals=64" in served and "--deals 64" in why  # more thinking only when asked, and said
    monkeypatch.chdir(tmp_path)
    assert main(["play", "--no-browser", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"koikoi play: error: the default opponent {spec} (pass --opponent") and "win-probability" \
        in err and "--opponent:" not in err, err
