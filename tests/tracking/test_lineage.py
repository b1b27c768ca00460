"""Lineage in MLflow, read back through the MLflow client after a tiny pipeline run by its stage scripts (the
DVC environment simulated): from a registered version to the run that trained its weights, its curves with
intervals, the runs it started from, the SL dataset and the pipeline execution; the executions grouped and
side by side in experiment ``pipeline``; logged models named, the SL one with its metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest

from pipeline.tracking.lineage import DATASET, INIT_RUN, SL_RUN, TRAINED_BY, dataset_digest
from stages.rl_phase import PhasePaths

SL_TINY = {"width": 16, "ff": 32, "heads": 2, "layers": 1, "batch_size": 64, "max_epochs": 1, "dropout": 0.0,
           "precision": "32-true", "threads": 1}


def _execution(project: Path, params: dict, monkeypatch, exp: str, stages: list[tuple[str, str, list[str]]]) -> None:
    """Run ``stages`` (DVC stage, module, argv) as `dvc exp run --name exp` would: params.yaml in the cwd, and
    the variables DVC sets."""
    (project / "params.yaml").write_text(json.dumps(params))
    monkeypatch.setenv("DVC_EXP_NAME", exp)
    for stage, module, argv in stages:
        monkeypatch.setenv("DVC_STAGE", stage)
        __import__(f"stages.{module}", fromlist=["main"]).main(argv)


def _rl(phase: int) -> tuple[str, str, list[str]]:
    return f"rl_phase{phase}@point", "rl_phase", [str(phase), "point", *PhasePaths.layout(phase, "point").argv()]


@pytest.mark.slow
def test_a_registered_version_leads_to_its_training_run_dataset_and_execution(project, params, monkeypatch, capsys):
    from pipeline.sl.records_source import synthesize_records

    synthesize_records(project / "records", 3, seed=0, progress=False)
    monkeypatch.delenv("KOIKOI_RECORDS", raising=False)
    params["sl_dataset"].update(records_dir=str(project / "records"), val_fraction=0.34)
    params["sl_train"].update(SL_TINY)
    params["rl"]["phase1"]["loops"], params["rl"]["phase2"]["loops"] = 1, {"point": 0, "wp": 0}  # no phase-2 loop
    sl_stages = [("sl_dataset", "sl_dataset", [str(project / "records"), "data/sl", "results/sl_dataset"]),
                 ("sl_train", "sl_train", ["data/sl", "models/sl", "checkpoints/sl", "results/sl"])]
    _execution(project, params, monkeypatch, "exp-a", [*sl_stages, _rl(1), _rl(2)])
    params["rl"]["lr"] = 5e-4  # a second experiment: only the RL stages rerun
    _execution(project, params, monkeypatch, "exp-b", [_rl(1), _rl(2)])
    capsys.readouterr()

    client = mlflow.MlflowClient()
    runs = {}
    for name in ("sl", "rl"):
        for r in client.search_runs([client.get_experiment_by_name(name).experiment_id]):
            runs[(r.data.tags["dvc_exp"], r.info.run_name)] = client.get_run(r.info.run_id)  # with its inputs
    sl = runs[("exp-a", "sl_train")]
    p1, p2 = runs[("exp-a", "rl-phase1-point")], runs[("exp-a", "rl-phase2-point")]

    # the version of phase 2's weights leads to the run that trained them: phase 1's (phase 2 ran no loop)
    v1 = client.get_model_version("koikoi-rl-point", "1")
    assert v1.run_id == p1.info.run_id and v1.tags[TRAINED_BY] == p1.info.run_id
    assert p2.data.tags["weights_from_run"] == p1.info.run_id
    link = f"(#/experiments/{p1.info.experiment_id}/runs/{p1.info.run_id})"
    assert f"**Trained by**: [rl-phase1-point]{link}" in v1.description
    assert f"[sl_train](#/experiments/{sl.info.experiment_id}/runs/{sl.info.run_id})" in v1.description
    assert f"digest `{dataset_digest(project / 'data/sl')}`, 3 game records" in v1.description
    assert "`exp-a-" in v1.description and "DVC experiment `exp-a`" in v1.description
    assert p1.data.tags[SL_RUN] == sl.info.run_id and v1.tags[SL_RUN] == sl.info.run_id
    assert runs[("exp-a", "rl-phase2-point")].data.tags[INIT_RUN] == p1.info.run_id

    # its curves carry their interval and size at every evaluation; the loss units are said
    curve = {k: [m.step for m in client.get_metric_history(p1.info.run_id, f"eval/{k}")]
             for k in ("win_rate", "ci_low", "ci_high", "games")}
    assert curve["win_rate"] == [0, 1] and all(steps == [0, 1] for steps in curve.values())
    assert client.get_metric_history(p1.info.run_id, "eval/games")[0].value == params["rl"]["eval_games"]
    for d in ("discard", "pick", "koikoi"):
        assert "round points x 1" in p1.data.tags[f"units.loss/{d}"]
    assert "`loss/koikoi`: mean squared error" in p1.data.tags["mlflow.note.content"]

    # the dataset is an input of the SL run: digest, source and record count
    (inp,) = sl.inputs.dataset_inputs
    assert inp.dataset.name == DATASET and inp.dataset.digest == dataset_digest(project / "data/sl")
    assert json.loads(inp.dataset.profile)["records"] == 3
    assert json.loads(inp.dataset.source)["uri"] == str(project / "records")
    assert {t.key: t.value for t in inp.tags}["mlflow.data.context"] == "training"

    # logged models carry names; the SL one has its final metrics, on the dataset; phase 2 logged no copy
    models = client.search_logged_models([p1.info.experiment_id, sl.info.experiment_id])
    by_run = {}
    for m in models:
        by_run.setdefault(m.source_run_id, []).append(m)
    (sl_model,) = by_run[sl.info.run_id]
    assert sl_model.name == "koikoi-sl"
    linked = {m.key: m for m in sl_model.metrics}
    assert "final/val_acc" in linked and linked["final/val_acc"].dataset_digest == inp.dataset.digest
    assert [m.name for m in by_run[p1.info.run_id]] == ["koikoi-rl-point-phase1"]
    assert p2.info.run_id not in by_run
    assert client.get_model_version("koikoi-sl", "1").run_id == sl.info.run_id

    # one execution's runs share its id, DVC experiment and params hash; the other's differ
    a = {r.data.tags["pipeline_run"] for (exp, _), r in runs.items() if exp == "exp-a"}
    b = {r.data.tags["pipeline_run"] for (exp, _), r in runs.items() if exp == "exp-b"}
    assert len(a) == len(b) == 1 and a != b and a.pop().startswith("exp-a-")
    assert runs[("exp-a", "rl-phase1-point")].data.tags["params_hash"] == sl.data.tags["params_hash"]
    assert runs[("exp-b", "rl-phase1-point")].data.tags["params_hash"] != sl.data.tags["params_hash"]
    assert p1.data.tags["dvc_stage"] == "rl_phase1@point"
    v2 = client.get_model_version("koikoi-rl-point", "2")
    assert v2.run_id == runs[("exp-b", "rl-phase1-point")].info.run_id and "DVC experiment `exp-b`" in v2.description

    # side by side: one run per execution in experiment `pipeline`, with all params and every stage's metrics
    pipe = client.search_runs([client.get_experiment_by_name("pipeline").experiment_id])
    by_exp = {r.data.tags["dvc_exp"]: r for r in pipe}
    assert set(by_exp) == {"exp-a", "exp-b"}
    assert by_exp["exp-a"].data.params["rl.lr"] != by_exp["exp-b"].data.params["rl.lr"]
    assert by_exp["exp-a"].data.params["sl_train.width"] == "16"
    for r in pipe:
        assert {f"rl_phase2.point/{k}" for k in ("win_rate", "ci95_low", "ci95_high")} <= set(r.data.metrics)
    assert "sl_train/val/acc" in by_exp["exp-a"].data.metrics and "sl_dataset/games" in by_exp["exp-a"].data.metrics
    assert f"[rl-phase1-point]{link}" in by_exp["exp-a"].data.tags["mlflow.note.content"]
    assert "(experiment `pipeline`)" in v1.description


def test_stages_of_one_dvc_process_share_a_pipeline_run(tmp_path):
    """A real process tree: a program named dvc running stage commands through a shell, as DVC does."""
    stage = f'{sys.executable} -c "from pipeline.tracking.executions import pipeline_run_id; print(pipeline_run_id())"'
    dvc = tmp_path / "dvc"
    dvc.write_text(f"#!/bin/sh\nDVC_STAGE=a sh -c '{stage}'\nDVC_STAGE=b sh -c '{stage}'\n{stage}\n")
    dvc.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("DVC_STAGE", "DVC_EXP_NAME", "KOIKOI_PIPELINE_RUN")}
    first = subprocess.run([str(dvc)], capture_output=True, text=True, check=True, env=env).stdout.split()
    second = subprocess.run([str(dvc)], capture_output=True, text=True, check=True, env=env).stdout.split()
    assert first[0] == first[1] and first[0].startswith("repro-")  # two stages of one `dvc repro`
    assert second[0] == second[1] and second[0] != first[0]  # another `dvc repro`
    assert first[2].startswith("run-") and first[2] != first[0]  # not a stage: a run of its own
    named = subprocess.run([str(dvc)], capture_output=True, text=True, check=True,
                           env={**env, "DVC_EXP_NAME": "urban-fern"}).stdout.split()
    assert named[0] == named[1] and named[0].startswith("urban-fern-")


def test_the_execution_run_names_its_git_commit(tmp_path, monkeypatch, new_store):
    from pipeline.tracking.executions import GIT_COMMIT
    from pipeline.tracking.stage_record import record_stage

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(tmp_path)
    new_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("KOIKOI_PIPELINE_RUN", "ci-1")
    run_id = record_stage("engine_tests", {"replay_games": 0})
    assert mlflow.MlflowClient().get_run(run_id).data.tags[GIT_COMMIT] == head
