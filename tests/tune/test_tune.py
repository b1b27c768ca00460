"""The tuner: studies on a tiny synthetic SL dataset (1 epoch, width 16), MLflow nesting, resume,
pruning, the command line."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
import yaml
from optuna.trial import TrialState
from tiny import copy_store

from pipeline.cli import main
from pipeline.params import (
    ParamError,
    TuneParams,
    dotted,
    load_params,
    overridden,
    params_with,
    read_doc,
    with_overrides,
)
from pipeline.tune import runs
from pipeline.tune import study_report as report
from pipeline.tune.objectives import sl_objective
from pipeline.tune.space import derive, merged_space, sample
from pipeline.tune.study import open_study, run_tune

# Width 16 (2 heads x 8), one layer: a trial is a second or two of training.
TINY_SPACE = {"heads": [2], "head_dim": [8], "layers": 1, "ff": [32], "batch_size": [64]}
TINY_BASE = {"max_epochs": 1, "patience": 1, "seed": 0, "threads": 1}
ROOT = Path(__file__).resolve().parents[2]


def tune_cfg(**over) -> TuneParams:
    """params.yaml's tune section with ``over`` on top."""
    return overridden(load_params(ROOT / "params.yaml").tune, over, "tune")


def sl_base():
    return params_with(dotted(TINY_BASE, "sl_train"), ROOT / "params.yaml").sl_train


@pytest.fixture(scope="module")
def mlflow_db(tmp_path_factory, empty_store) -> str:
    # One store for the module; each test's runs are told apart by their parent run id.
    return copy_store(empty_store, tmp_path_factory.mktemp("mlflow") / "mlflow.db")


@pytest.fixture()
def mlflow_store(mlflow_db, monkeypatch) -> str:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_db)
    return mlflow_db


def _session(tmp_path: Path, dataset: Path, trials: int, pruner=None) -> dict:
    cfg = tune_cfg(target="sl", trials=trials, max_epochs=1, study="tiny",
                   storage=f"sqlite:///{tmp_path}/optuna.db", seed=0, startup_trials=1, warmup_epochs=0)
    space = merged_space("sl", TINY_SPACE)
    return run_tune(cfg, sl_objective(dataset, sl_base(), space, 1), tmp_path / "results", pruner=pruner,
                    progress=False)


def _trial_runs(parent_run_id: str) -> list:
    import mlflow

    client = mlflow.MlflowClient()
    exp = client.get_run(parent_run_id).info.experiment_id
    return client.search_runs([exp], f"tags.mlflow.parentRunId = '{parent_run_id}'")


@pytest.mark.slow
def test_two_trials_write_outputs_and_a_second_call_resumes(tmp_path, synthetic_dataset, mlflow_store):
    # No pruning here (it has its own test): which trial the median pruner cuts depends on the data.
    first = _session(tmp_path, synthetic_dataset, trials=2, pruner=optuna.pruners.NopPruner())
    out = tmp_path / "results" / "tiny"
    assert first["trials_complete"] == 2 and first["trials_this_session"] == 2
    best = yaml.safe_load((out / report.BEST_FILE).read_text())
    assert set(best) == {"sl_train"}
    assert best["sl_train"]["width"] == 16 and best["sl_train"]["heads"] == 2 and "head_dim" not in best["sl_train"]
    overridden(sl_base(), best["sl_train"], "sl_train")  # keys and values are valid sl_train params
    for png in (report.HISTORY_PNG, report.IMPORTANCE_PNG):
        assert (out / png).stat().st_size > 1000
    assert json.loads((out / report.SUMMARY_FILE).read_text())["best_value"] == first["best_value"]

    trials = _trial_runs(first["mlflow_parent_run_id"])
    assert len(trials) == 2
    for r in trials:
        assert r.data.tags[runs.STATE_TAG] == "COMPLETE" and r.info.status == "FINISHED"
        assert 0.0 <= r.data.metrics["optuna/value"] <= 1.0
        assert r.data.params["width"] == "16"

    import mlflow

    client = mlflow.MlflowClient()
    history = client.get_metric_history(trials[0].info.run_id, "optuna/intermediate_value")
    assert [m.step for m in history] == [0]  # one epoch, reported once (not again by the final validate)
    artifacts = {a.path for a in client.list_artifacts(first["mlflow_parent_run_id"])}
    assert {report.BEST_FILE, report.HISTORY_PNG, report.IMPORTANCE_PNG} <= artifacts

    second = _session(tmp_path, synthetic_dataset, trials=1, pruner=optuna.pruners.NopPruner())
    assert second["mlflow_parent_run_id"] == first["mlflow_parent_run_id"]
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path}/optuna.db")
    assert len(study.trials) == 3 and second["trials_this_session"] == 1
    assert len(_trial_runs(first["mlflow_parent_run_id"])) == 3
    assert study.trials[2].params != study.trials[0].params  # the resumed sampler does not repeat itself


@pytest.mark.slow
def test_pruned_trial_is_recorded_as_pruned(tmp_path, synthetic_dataset, mlflow_store):
    never_good_enough = optuna.pruners.ThresholdPruner(lower=1.5)  # accuracy is at most 1
    summary = _session(tmp_path, synthetic_dataset, trials=1, pruner=never_good_enough)
    assert summary["trials_pruned"] == 1 and summary["trials_complete"] == 0
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path}/optuna.db")
    assert study.trials[0].state == TrialState.PRUNED
    (run,) = _trial_runs(summary["mlflow_parent_run_id"])
    assert run.data.tags[runs.STATE_TAG] == "PRUNED"
    assert run.info.status == "FINISHED"  # pruned, not failed
    out = tmp_path / "results" / "tiny"
    assert not (out / report.BEST_FILE).exists()  # nothing completed: nothing to merge
    assert set(summary["plots_missing"]) == {report.HISTORY_PNG, report.IMPORTANCE_PNG}


def test_sl_space_keeps_width_divisible_by_heads():
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(50):
        trial = study.ask()
        p = derive(sample(trial, merged_space("sl")))
        assert p["width"] % p["heads"] == 0 and p["width"] // p["heads"] in (16, 32, 64)
        study.tell(trial, 0.0)


def test_rl_sample_maps_to_nested_rl_keys():
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
    p = derive(sample(trial, merged_space("rl", variant="wp", algorithm="mc_dqn")))
    assert set(p) == {"lr", "batch_size", "games_per_loop", "epochs", "epsilon", "reward_scale"}
    assert set(p["epsilon"]) == {"start", "end"} and set(p["reward_scale"]) == {"wp"}


def test_bad_space_entry_is_named():
    trial = optuna.create_study().ask()
    with pytest.raises(ValueError, match="tune.space.lr"):
        sample(trial, {"lr": {"low": 1.0}})


def test_cli_missing_dataset_is_one_clear_line(tmp_path, capsys, mlflow_store):
    code = main(["tune", "--target", "sl", "--trials", "1", "--dataset", str(tmp_path / "nothing"),
                 "--storage", f"sqlite:///{tmp_path}/optuna.db", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "run `dvc repro sl_dataset` first" in err and len(err.strip().splitlines()) == 1


def test_cli_apply_without_results_is_one_clear_line(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    text = (ROOT / "params.yaml").read_text()
    params.write_text(text)
    code = main(["tune", "--apply", "--study", "none", "--params", str(params), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "best_params.yaml does not exist" in err
    assert params.read_text() == text


def test_study_of_another_target_is_refused(tmp_path):
    storage = f"sqlite:///{tmp_path}/optuna.db"
    open_study(tune_cfg(target="sl", study="s", storage=storage))
    with pytest.raises(ValueError, match="tunes 'sl', not 'rl'"):
        open_study(tune_cfg(target="rl", study="s", storage=storage))


def test_space_key_unknown_to_sl_train_fails_before_any_trial(synthetic_dataset):
    with pytest.raises(ParamError, match=r"tune\.space\.sl\.lrr names no sl_train key"):
        sl_objective(synthetic_dataset, sl_base(), merged_space("sl", {"lrr": [0.1]}), 1)


def test_endless_session_is_refused():
    with pytest.raises(ParamError, match="tune.trials and timeout are both null .*: set trials or timeout"):
        tune_cfg(trials=None, timeout=None)


@pytest.mark.slow
def test_printed_apply_hint_works_as_printed(tmp_path, synthetic_dataset, mlflow_store, capsys):
    """With --params and --out given, the hint carries them, and running it applies the study."""
    import shlex

    params = tmp_path / "my-params.yaml"
    params.write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), {
        **dotted({**TINY_BASE, "lr": 0.5}, "sl_train"),
        **dotted({"target": "sl", "trials": 1, "max_epochs": 1, "startup_trials": 1, "warmup_epochs": 0}, "tune"),
        "tune.space": {"sl": TINY_SPACE}})))
    out = tmp_path / "my-results"
    assert main(["tune", "--params", str(params), "--out", str(out), "--dataset", str(synthetic_dataset),
                 "--storage", f"sqlite:///{tmp_path}/optuna.db", "--study", "hint"]) == 0
    printed = capsys.readouterr().out
    hint = printed.split("apply with `", 1)[1].split("`", 1)[0]
    argv = shlex.split(hint)
    assert argv[:2] == ["koikoi", "tune"] and str(params) in argv and str(out) in argv
    assert json.loads((out / "hint" / "summary.json").read_text())["budget"] == {"max_epochs": 1}
    assert main(argv[1:]) == 0
    assert yaml.safe_load(params.read_text())["sl_train"]["lr"] != 0.5  # the study's value is in
    assert "warning" not in capsys.readouterr().err  # the stage's budget (1 epoch), 1 startup trial: nothing to say
