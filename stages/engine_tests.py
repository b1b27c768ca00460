"""Stage engine_tests: the engine's tests, the human-record replay and the engine speed.

Usage: python -m stages.engine_tests TESTS_DIR OUT_DIR [--records RECORDS_DIR] (dvc.yaml: tests/engine
results/engine --records data/records, the records stage's output: the records DVC tracks are those replayed, by
the stage and by the engine's tests, which read them as ``$KOIKOI_RECORDS``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine import replay_dir
from pipeline.engine.random_play import play_random_games
from pipeline.params.sections import EngineTestsParams
from pipeline.runtime import atomic
from pipeline.runtime.results import write_results
from pipeline.sl.records_source import ENV_VAR, shared_records_dir
from stages import run_stage, stage_parser

STAGE = "engine_tests"


def engine_tests(params: EngineTestsParams, tests_dir: str | Path, out_dir: str | Path,
                 records_dir: str | Path | None = None) -> dict:
    """Run the engine's tests, replay the records of ``records_dir`` (default: those ``records_source``'s rule
    names, if any) and time random games; ``SystemExit`` naming what failed."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = Path(records_dir).resolve() if records_dir is not None else shared_records_dir()
    env = {**os.environ, ENV_VAR: str(records)} if records is not None else None
    # --confcutdir: only the engine's own conftest, so the stage runs (and depends on) the engine's tests alone, not
    # the suite's fixtures in tests/conftest.py (torch, MLflow)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--confcutdir", str(tests_dir), str(tests_dir)],
                          capture_output=True, text=True, env=env)
    atomic.write_text(out / "pytest.txt", proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"{STAGE}: the engine's tests failed, see {out / 'pytest.txt'}")

    metrics: dict = {"tests_passed": True}
    if records is not None:
        report = replay_dir(records, progress=True)
        metrics.update(replay_games=report.games, replay_rounds=report.rounds, replay_turns=report.turns,
                       replay_mismatches=len(report.mismatches) + len(report.errors),
                       replay_unfinished=len(report.unfinished))
        if report.mismatches or report.errors:
            sys.exit(f"{STAGE}: record replay mismatches:\n" + "\n".join(report.mismatches + report.errors))
    else:
        metrics.update(replay_games=0, replay_note="no human records found; see docs/rules-engine.md 'Game records'")

    t0 = time.perf_counter()
    decisions, _ = play_random_games(params.bench_games, params.seed)
    dt = time.perf_counter() - t0
    metrics.update(engine_games_per_s=round(params.bench_games / dt, 1),
                   engine_decisions_per_s=round(decisions / dt))
    # run.json: tests_passed, the note without records, and the records' rounds and turns
    write_results(out, metrics, info_keys=("replay_rounds", "replay_turns"))
    return metrics


def main(argv: Sequence[str] | None = None) -> None:
    ap = stage_parser(STAGE, __doc__, tests_dir="the engine's tests (tests/engine)",
                      out_dir="pytest.txt, metrics.json and run.json go here (results/engine)")
    ap.add_argument("--records", help="the records to replay (data/records); default: those records_source's rule "
                    "names")
    args = ap.parse_args(argv)
    run_stage(STAGE, lambda params: engine_tests(params.engine_tests, args.tests_dir, args.out_dir, args.records),
              results=args.out_dir)


if __name__ == "__main__":
    main()
