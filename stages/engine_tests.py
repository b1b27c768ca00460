"""Stage engine_tests: the engine's tests, the human-record replay and the engine speed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from pipeline import atomic
from pipeline.benchmarks.engine import play_random_games
from pipeline.engine import replay_dir
from pipeline.params import load_params
from pipeline.records_source import shared_records_dir
from pipeline.runstate import stage_exit


def main() -> None:
    params = load_params().engine_tests
    out = Path("results/engine")
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/engine"], capture_output=True, text=True)
    atomic.write_text(out / "pytest.txt", proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"engine_tests: the engine's tests failed, see {out / 'pytest.txt'}")

    metrics: dict = {"tests_passed": True}
    records = shared_records_dir()
    if records is not None:
        report = replay_dir(records, progress=True)
        metrics.update(replay_games=report.games, replay_rounds=report.rounds, replay_turns=report.turns,
                       replay_mismatches=len(report.mismatches) + len(report.errors))
        if report.mismatches or report.errors:
            sys.exit("engine_tests: record replay mismatches:\n" + "\n".join(report.mismatches + report.errors))
    else:
        metrics.update(replay_games=0, replay_note="no human records found; see README 'Records'")

    t0 = time.perf_counter()
    decisions, _ = play_random_games(params.bench_games, params.seed)
    dt = time.perf_counter() - t0
    metrics.update(engine_games_per_s=round(params.bench_games / dt, 1),
                   engine_decisions_per_s=round(decisions / dt))
    atomic.write_text(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    print(json.dumps(metrics))


if __name__ == "__main__":
    with stage_exit("engine_tests"):  # Ctrl-C: one line, exit code 130
        main()
