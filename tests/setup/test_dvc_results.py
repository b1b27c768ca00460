"""Results DVC users can compare: every stage's metrics and csv curves are uncached outputs that git tracks
(``dvc metrics diff`` and ``dvc exp show`` read them at any commit), and a metrics file holds numbers only."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from pipeline.results import split_results, write_results

ROOT = Path(__file__).resolve().parents[2]


def _entries(stage: dict, kind: str) -> list[tuple[str, dict]]:
    out = []
    for o in (stage.get("do") or stage).get(kind, []):
        path, opts = next(iter(o.items())) if isinstance(o, dict) else (o, {})
        out.append((path, opts or {}))
    return out


def _expand(path: str) -> list[str]:
    return [path.replace("${item}", v) for v in ("point", "wp")] if "${item}" in path else [path]


def test_metrics_and_curves_are_uncached_and_not_git_ignored():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    small = []
    for name, stage in stages.items():
        small += [(name, p, o) for p, o in _entries(stage, "metrics")]
        small += [(name, p, o) for p, o in _entries(stage, "plots") if p.endswith(".csv")]
        small += [(name, p, o) for p, o in _entries(stage, "outs") if p.endswith("/run.json")]
    assert {n for n, p, _ in small if p.endswith("metrics.json")} >= {"engine_tests", "sl_dataset", "sl_train",
                                                                       "winprob", "rl_phase1", "rl_phase2", "duels"}
    with_metrics = {n for n, p, _ in small if p.endswith("metrics.json")}
    assert with_metrics == {n for n, p, _ in small if p.endswith("/run.json")}  # the rest of each outcome
    for name, path, opts in small:
        assert opts.get("cache") is False, f"{name}: {path} must be cache: false (git tracks it)"
        for p in _expand(path):
            ignored = subprocess.run(["git", "check-ignore", "-v", p], cwd=ROOT, capture_output=True, text=True)
            assert ignored.returncode == 1, f"{p} is git-ignored: {ignored.stdout.strip()}"


def test_a_metrics_file_holds_numbers_only(tmp_path):
    doc = {"win_rate": 0.5, "ci95": [0.4, 0.6], "games": 100, "stop_reason": "loop budget used", "ok": True,
           "mlflow_run_id": "abc", "val": {"acc": 0.7, "source": "shared"}, "note": None}
    metrics = write_results(tmp_path, doc, info_keys=("games",))
    assert metrics == {"win_rate": 0.5, "ci95_low": 0.4, "ci95_high": 0.6, "val": {"acc": 0.7}}
    assert split_results(metrics) == (metrics, {})
    info = yaml.safe_load((tmp_path / "run.json").read_text())
    assert info == {"games": 100, "stop_reason": "loop budget used", "ok": True, "mlflow_run_id": "abc",
                    "val": {"source": "shared"}, "note": None}
