"""Faults in SL: NaN params and losses, Ctrl-C and resuming with every curve row, a bad records directory."""

from __future__ import annotations

import csv
import json
import shutil
import signal
from pathlib import Path

import lightning.pytorch as pl
import mlflow
import pytest
import yaml
from tiny import SL_TINY, sl_params

from pipeline.params import ParamError, dotted, read_doc, with_overrides
from pipeline.sl.train import train_sl
from stages import sl_dataset, sl_train

ROOT = Path(__file__).resolve().parents[2]
TINY = SL_TINY


@pytest.mark.parametrize("key", ["lr", "weight_decay", "dropout", "ema", "label_smoothing", "card_logit_c"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_inf_params_are_refused_by_name(key, value):
    with pytest.raises(ParamError, match=rf"params\.yaml: sl_train\.{key} must be a finite number, got {value!r}$"):
        sl_params(**{key: value})


def _params_yaml(sl_train: dict) -> str:
    return yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), dotted(sl_train, "sl_train")))


def _stage(project: Path, monkeypatch, name: str) -> None:
    """The stage's module run with the paths dvc.yaml passes it."""
    monkeypatch.chdir(project)
    if name == "sl_train":
        sl_train.main(["data/sl", "models/sl", "checkpoints/sl", "results/sl"])
    else:
        sl_dataset.main(["data/records", "data/sl", "results/sl_dataset"])


def test_a_non_finite_loss_stops_the_stage_and_keeps_the_previous_model(synthetic_dataset, tmp_path, monkeypatch,
                                                                        capsys, new_store):
    new_store(tmp_path / "mlflow.db")
    shutil.copytree(synthetic_dataset, tmp_path / "data/sl")
    (tmp_path / "params.yaml").write_text(_params_yaml(TINY))
    _stage(tmp_path, monkeypatch, "sl_train")
    model = tmp_path / "models/sl/model.pt"
    before = model.read_bytes()
    client = mlflow.MlflowClient()
    assert [str(v.version) for v in client.search_model_versions("name='koikoi-sl'")] == ["1"]

    (tmp_path / "params.yaml").write_text(_params_yaml({**TINY, "lr": 1e30}))  # finite: allowed
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        _stage(tmp_path, monkeypatch, "sl_train")
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert e.value.code == 2  # a usage error: the lr is too large
    assert err.startswith("sl_train: error: training loss is ") and err.endswith("lower sl_train.lr")
    assert model.read_bytes() == before
    assert [str(v.version) for v in client.search_model_versions("name='koikoi-sl'")] == ["1"]  # nothing registered
    runs = client.search_runs([client.get_experiment_by_name("sl").experiment_id], order_by=["start_time DESC"])
    assert runs[0].info.status == "FAILED"


class _CtrlC(pl.Callback):
    def on_train_epoch_start(self, trainer, pl_module):
        if trainer.current_epoch == 1:
            raise KeyboardInterrupt


def test_ctrl_c_ends_the_run_killed_and_the_resumed_run_keeps_every_curve_row(synthetic_dataset, tmp_path,
                                                                              monkeypatch, capfd, caplog, new_store):
    new_store(tmp_path / "mlflow.db")
    out, curves = tmp_path / "m", tmp_path / "curves.csv"
    params = sl_params(max_epochs=3)
    with pytest.raises(KeyboardInterrupt):  # Lightning would have turned it into sys.exit(1)
        train_sl(synthetic_dataset, out, params, callbacks=[_CtrlC()], progress=False, log_model=False)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert "KeyboardInterrupt" not in "".join(capfd.readouterr())  # no traceback
    assert not [r for r in caplog.records if "KeyboardInterrupt" in r.getMessage()]  # nor Lightning's shutdown note
    client = mlflow.MlflowClient()
    (run,) = client.search_runs([client.get_experiment_by_name("sl").experiment_id])
    assert run.info.status == "KILLED"

    r = train_sl(synthetic_dataset, out, params, progress=False, curves_path=curves, log_model=False)
    assert r["run_id"] == run.info.run_id and client.get_run(r["run_id"]).info.status == "FINISHED"
    rows = list(csv.DictReader(curves.open()))
    assert [row["epoch"] for row in rows] == ["1", "2", "3"]
    assert all(row[col] != "" for row in rows for col in ("train_loss", "val_loss", "val_acc"))  # epoch 1 too


def test_a_bad_records_directory_leaves_the_previous_dataset(tmp_path, monkeypatch):
    old = tmp_path / "data/sl"
    old.mkdir(parents=True)
    (old / "info.json").write_text('{"old": true}\n')
    bad = tmp_path / "data/records"
    bad.mkdir()
    for name in ("1.json", "2.json"):
        (bad / name).write_text('{"not": "a record"}')
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), dotted({
        "val_fraction": 0.5, "seed": 0, "synthetic_games": 2}, "sl_dataset"))))
    with pytest.raises(SystemExit) as e:
        _stage(tmp_path, monkeypatch, "sl_dataset")
    assert json.loads((old / "info.json").read_text()) == {"old": True}
    assert str(e.value.code).startswith("sl_dataset: error: ") and "data/sl left as it was" in str(e.value.code)
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["records", "sl"]  # no half-built directory left
