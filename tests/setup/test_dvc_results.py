"""Results DVC users can compare: every stage's metrics and csv curves are uncached outputs that git tracks
(``dvc metrics diff`` and ``dvc exp show`` read them at any commit), and a metrics file holds numbers only."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from pipeline.runtime.results import split_results, write_results

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
    # run.json holds the rest of each outcome and the stage's time (the README's `make repro` time sums them): a stage
    # without metrics may record its run alone (rl_phase1_play)
    assert with_metrics <= {n for n, p, _ in small if p.endswith("/run.json")}
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


@pytest.mark.slow
def test_a_machine_without_the_records_fetches_them_and_dvc_builds_the_dataset(tmp_path):
    """Issue 69: a copy of the project whose records folder is absent, sl_dataset.records_git a local git repository
    (file://, standing in for GitHub): a real `dvc repro sl_dataset` runs params_check, the records stage (the fetch),
    and the real sl_dataset, which builds data/sl from the fetched records (engine_tests stands in: it runs the
    engine's whole suite). `dvc status` is then clean; the same records in a folder that is there leave data/records as
    it was; a record added in that folder is seen by `stages.records --changed` (what `make repro` runs)."""
    import os
    import shutil
    import sys

    from records_repo import records_repo

    from pipeline.params import read_doc, with_overrides
    from pipeline.sl.records_source import synthesize_records

    project = tmp_path / "project"
    for package in ("pipeline", "stages"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    engine = {"cmd": "python -c \"import pathlib; p = pathlib.Path('results/engine'); p.mkdir(parents=True); "
                     "(p / 'metrics.json').write_text('{}')\"", "deps": ["data/records"],
              "outs": ["results/engine/metrics.json"]}
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {
        "params_check": stages["params_check"], "engine_tests": engine, "records": stages["records"],
        "sl_dataset": stages["sl_dataset"]}}))
    games = tmp_path / "games"
    synthesize_records(games, 4, seed=0, progress=False)
    pinned = records_repo(tmp_path / "repo", games)
    env = {k: v for k, v in os.environ.items() if k != "KOIKOI_RECORDS"}
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path}/m.db"})
    dvc = str(Path(sys.executable).parent / "dvc")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=600)

    def repro(records_dir: str) -> subprocess.CompletedProcess:
        doc = with_overrides(read_doc(ROOT / "params.yaml"), {
            "sl_dataset.records_dir": records_dir, "sl_dataset.records_git": pinned,
            "sl_dataset.val_fraction": 0.25})
        (project / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        return run(dvc, "repro", "sl_dataset")

    assert run(dvc, "init", "--no-scm", "-q").returncode == 0
    first = repro("../no-records-here")  # the default names ../shared/koikoi-records: absent on this machine
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "fetched 4 records into data/records" in first.stderr
    info = json.loads((project / "data/sl/info.json").read_text())
    assert info["games"] == 4 and info["source"] == "git" and info["records_fingerprint"] == pinned["sha256"][:16]
    assert "Data and pipelines are up to date" in run(dvc, "status").stdout  # nothing always_changed
    same = repro(str(games))  # the same records, from a folder that is there: data/records unchanged
    assert same.returncode == 0 and "Running stage 'records'" in same.stdout, same.stderr[-2000:]
    assert "Stage 'engine_tests' didn't change" in same.stdout, same.stdout  # sl_dataset records the new origin
    again = repro(str(games))
    assert again.returncode == 0 and "Running stage" not in again.stdout, again.stdout
    (games / "5.json").write_text((games / "1.json").read_text())  # a record added outside the project
    assert "Data and pipelines are up to date" in run(dvc, "status").stdout  # DVC cannot see it ...
    check = run(sys.executable, "-m", "stages.records", "data/records", "results/records/source.json", "--changed")
    assert check.returncode == 3 and "running the stage again" in check.stderr  # ... the check does (3: changed)
