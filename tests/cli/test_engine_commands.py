"""``koikoi replay`` and ``koikoi bench engine``: exit codes and the JSON last line. Here, not in tests/engine,
since the ``engine_tests`` stage runs tests/engine and must not depend on the CLI."""

import json
import random
import subprocess
import sys

from pipeline.engine import GAME_OVER, GameState, write_record


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True)


def _random_game(seed: int) -> GameState:
    s, rng = GameState(seed=seed), random.Random(seed)
    while s.phase != GAME_OVER:
        s.step(rng.choice(s.legal_actions()))
    return s


def test_replay_cli_exit_codes_and_last_line(tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    for seed in range(3):
        write_record(_random_game(seed), good / f"{seed}.json")
    out = _cli("replay", str(good))
    assert out.returncode == 0
    assert json.loads(out.stdout.strip().splitlines()[-1])["mismatches"] == 0

    rec = json.loads((good / "0.json").read_text())
    rec["record"]["round1"]["basic"]["player1RoundPts"] += 5
    (good / "0.json").write_text(json.dumps(rec))
    out = _cli("replay", str(good))
    assert out.returncode == 1 and "0.json: round 1: round points" in out.stdout

    (good / "1.json").write_text("[]")
    out = _cli("replay", str(good))
    assert out.returncode == 2 and "1.json" in out.stderr and "Traceback" not in out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["games"] == 2

    out = _cli("replay", str(tmp_path / "missing"))
    assert out.returncode == 2 and "missing" in out.stderr and "Traceback" not in out.stderr


def test_bench_engine_prints_json_last():
    out = _cli("bench", "engine", "--games", "3")
    assert out.returncode == 0
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["games"] == 3 and result["games_per_s"] > 0
