"""Results DVC users can compare: every stage's metrics and csv curves are uncached outputs that git tracks
(``dvc metrics diff`` and ``dvc exp show`` read them at any commit), and a metrics file holds numbers only."""

from __future__ import annotations

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


@pytest.mark.slow
def test_other_records_make_dvc_build_the_dataset_again(tmp_path):
    """The real params_check and records stages under a real `dvc repro`, with a stand-in for sl_dataset: the
    records folder (``sl_dataset.records_dir``) is the records stage's dep, so `dvc status` is clean right after a
    repro, a changed record or another folder reruns it, and the same records do not (issue 61)."""
    import os
    import shutil
    import sys

    from pipeline.params import read_doc, with_overrides
    from pipeline.sl.records_source import synthesize_records

    project = tmp_path / "project"
    for package in ("pipeline", "stages"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    dataset = {"cmd": "python -c \"import pathlib; p = pathlib.Path('data/sl.txt'); p.parent.mkdir(exist_ok=True); "
                      "p.write_text(pathlib.Path('results/records/source.json').read_text())\"",
               "deps": ["results/records/source.json"], "outs": ["data/sl.txt"]}
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {
        "params_check": stages["params_check"], "records": stages["records"], "sl_dataset": dataset}}))
    a, b = tmp_path / "a", tmp_path / "b"
    synthesize_records(a, 2, seed=0, progress=False)
    synthesize_records(b, 2, seed=1, progress=False)
    env = {k: v for k, v in os.environ.items() if k != "KOIKOI_RECORDS"}
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path}/m.db"})
    dvc = str(Path(sys.executable).parent / "dvc")

    def repro(records: Path) -> subprocess.CompletedProcess:
        doc = with_overrides(read_doc(ROOT / "params.yaml"), {"sl_dataset.records_dir": str(records)})
        (project / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        return subprocess.run([dvc, "repro"], cwd=project, env=env, capture_output=True, text=True, timeout=300)

    def status() -> str:
        return subprocess.run([dvc, "status"], cwd=project, env=env, capture_output=True, text=True).stdout

    assert subprocess.run([dvc, "init", "--no-scm", "-q"], cwd=project, env=env).returncode == 0
    ran = "Running stage 'sl_dataset'"
    first = repro(a)
    assert first.returncode == 0 and ran in first.stdout, first.stderr
    assert "Data and pipelines are up to date" in status()  # nothing always_changed
    same = repro(a)
    assert same.returncode == 0 and "Running stage" not in same.stdout, same.stdout  # the same records: up to date
    other = repro(b)
    assert other.returncode == 0 and ran in other.stdout, other.stdout  # another folder: built again
    (b / "extra.json").write_text((a / sorted(p.name for p in a.glob("*.json"))[0]).read_text())
    assert "records" in status()  # a record added: the records stage is stale
    grown = repro(b)
    assert grown.returncode == 0 and ran in grown.stdout, grown.stdout
