"""SL training: the masked loss, a tiny tracked run that writes a loadable model, resuming after a kill."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from tiny import SL_TINY, sl_params

from pipeline.params import ParamError, dotted, read_doc, with_overrides
from pipeline.sl.module import masked_cross_entropy

ROOT = Path(__file__).resolve().parents[2]

TINY = SL_TINY


def test_loss_ignores_illegal_tokens():
    g = torch.Generator().manual_seed(0)
    values = torch.randn(6, 50, generator=g)
    legal = torch.zeros(6, 50, dtype=torch.bool)
    legal[:, [3, 7, 20]] = True
    legal[5] = False
    legal[5, [48, 49]] = True  # a koi-koi sample: the 2-way choice [K0]/[K1]
    action = torch.tensor([3, 7, 20, 3, 7, 49])
    for smoothing in (0.0, 0.1):
        loss = masked_cross_entropy(values, legal, action, smoothing)
        noisy = values.masked_fill(~legal, 0) + torch.randn(6, 50, generator=g) * 100 * (~legal)
        assert torch.allclose(masked_cross_entropy(noisy, legal, action, smoothing), loss)
        v = values.clone().requires_grad_(True)
        masked_cross_entropy(v, legal, action, smoothing).backward()
        assert torch.isfinite(v.grad).all() and (v.grad[~legal] == 0).all() and (v.grad[legal] != 0).all()
    # plain cross-entropy over just the legal entries, e.g. stop vs koi-koi
    two_way = F.cross_entropy(values[5:, [48, 49]], torch.tensor([1]))
    assert torch.allclose(masked_cross_entropy(values[5:], legal[5:], action[5:]), two_way)


def test_bad_params_are_named():
    with pytest.raises(ParamError, match="sl_train.lr must be > 0.0, got -1"):
        sl_params(lr=-1)
    with pytest.raises(ParamError, match="sl_train.scheduler must be one of none, cosine, plateau; got 'step'"):
        sl_params(scheduler="step")
    with pytest.raises(ParamError, match="sl_train.learning_rate is an unknown key"):
        sl_params(learning_rate=0.1)
    with pytest.raises(ParamError, match="sl_train.card_logit must be one of discard, pick, koikoi; got 'draw'"):
        sl_params(card_logit=["draw"])
    with pytest.raises(ParamError, match="sl_train.card_logit_c must be > 0.0, got 0"):
        sl_params(card_logit_c=0)
    with pytest.raises(ParamError, match=r"sl_train.width must be divisible by heads \(2\), got 17"):
        sl_params(width=17)


class _Kill(Exception):
    pass


@pytest.mark.slow
def test_tiny_tracked_run_writes_a_loadable_model_and_resumes(two_game_dataset, tmp_path, capfd, new_store):
    import lightning.pytorch as pl
    import mlflow

    from pipeline.net.modelio import load_model
    from pipeline.sl.train import train_sl

    uri = new_store(tmp_path / "mlflow.db")
    data, _ = two_game_dataset
    out = tmp_path / "models" / "sl"

    class KillInSecondEpoch(pl.Callback):
        def on_train_epoch_start(self, trainer, pl_module):
            if trainer.current_epoch == 1:
                raise _Kill

    # a run killed in its second epoch leaves last.ckpt; the next run with the same params resumes it
    with pytest.raises(_Kill):
        train_sl(data, out, sl_params(max_epochs=2), callbacks=[KillInSecondEpoch()], progress=False)
    assert (out / "checkpoints" / "last.ckpt").is_file()
    curves = tmp_path / "curves.csv"
    r = train_sl(data, out, sl_params(max_epochs=2), progress=False, curves_path=curves)
    assert "resuming from" in capfd.readouterr().err
    rows = list(csv.DictReader(curves.open()))
    assert [row["epoch"] for row in rows] == ["1", "2"] and r["epochs"] == 2
    assert not (out / "checkpoints" / "last.ckpt").exists()  # finished: the next run starts afresh

    for key in ("val/loss", "val/acc", "val/acc_discard", "val/acc_pick", "val/acc_koikoi"):
        assert 0.0 <= r[key] <= (1.0 if "acc" in key else 100.0), key
    assert r["val_samples"] == r["val_samples_discard"] + r["val_samples_pick"] + r["val_samples_koikoi"]

    net, meta = load_model(out)
    assert meta["kind"] == "sl" and meta["dataset_source"] == "test"
    assert meta["val/acc"] == pytest.approx(r["val/acc"], abs=1e-5)

    client = mlflow.MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("sl").experiment_id])
    assert [run.info.run_id for run in runs] == [r["run_id"]]  # the resumed run continued the killed one
    run = client.get_run(r["run_id"])
    assert run.data.params["width"] == "16" and run.data.params["dataset_source"] == "test"
    assert run.data.params["device.train"] == {"gpu": "cuda", "cpu": "cpu"}[run.data.params["accelerator"]]
    assert run.data.params["precision.train"] == run.data.params["precision"] != "auto"  # as resolved
    assert run.data.tags["dataset_source"] == "test"
    assert len(client.get_metric_history(r["run_id"], "val/acc")) >= 2  # a curve, one point per epoch
    assert run.data.metrics["final/val_acc"] == pytest.approx(r["val/acc"])
    assert client.search_registered_models() == []  # logged, never registered: only the stage registers
    (logged,) = mlflow.search_logged_models(experiment_ids=[run.info.experiment_id], output_format="list")
    assert logged.source_run_id == r["run_id"]
    x = torch.zeros(2, net.config.num_features, 50)
    d = torch.tensor([0, 2])
    values = mlflow.pyfunc.load_model(logged.model_uri).predict({"x": x.numpy(), "decision": d.numpy()})
    assert torch.allclose(torch.from_numpy(values), net(x, d))

    # other params: the stale checkpoint is not resumed
    (out / "checkpoints" / "last.ckpt").write_bytes(b"")
    r2 = train_sl(data, out, sl_params(lr=0.01), logger=False, progress=False)
    assert r2["epochs"] == 1 and "run_id" not in r2


@pytest.mark.slow
def test_stage_writes_dvc_metrics_and_curves(two_game_dataset, tmp_path, monkeypatch, new_store):
    import shutil

    from pipeline.runtime.results import read_run, split_results
    from stages import sl_train

    data, _ = two_game_dataset
    new_store(tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    shutil.copytree(data, tmp_path / "data" / "sl")
    doc = with_overrides(read_doc(ROOT / "params.yaml"), dotted(TINY, "sl_train"))
    (tmp_path / "params.yaml").write_text(json.dumps(doc))
    sl_train.main(["data/sl", "models/sl", "checkpoints/sl", "results/sl"])
    assert sorted(p.name for p in (tmp_path / "models/sl").iterdir()) == ["config.json", "model.pt"]  # one DVC out
    m = json.loads((tmp_path / "results/sl/metrics.json").read_text())
    assert set(m["val"]) == {"acc", "acc_discard", "acc_pick", "acc_koikoi", "loss"}
    assert split_results(m) == (m, {})  # numbers only: the rest is in run.json
    run = read_run(tmp_path / "results/sl")
    assert run["dataset_source"] == "test" and run["samples"]["val"] > 0 and "samples" not in m
    header = (tmp_path / "results/sl/curves.csv").read_text().splitlines()[0]
    assert header.startswith("epoch,train_loss,train_acc,val_loss,val_acc")
    assert (tmp_path / "models/sl/model.pt").is_file() and (tmp_path / "models/sl/config.json").is_file()
    from pipeline.tracking.registry import find_version

    version = find_version(tmp_path / "models/sl")  # the stage registers (registry.register defaults to true)
    assert version.name == "koikoi-sl" and version.run_id == run["mlflow_run_id"]


@pytest.mark.slow
def test_cross_validation_covers_every_game_once(two_game_dataset, capsys):
    from pipeline.cli import main

    data, metrics = two_game_dataset
    assert main(["sl-cv", "--folds", "2", "--dataset", str(data), "--params", "/nonexistent.yaml"]) == 2
    assert "/nonexistent.yaml: no such params file" in capsys.readouterr().err
    from pipeline.sl.cross_validation import cross_validate

    r = cross_validate(data, sl_params(), folds=2, progress=False)
    assert r["samples"] == metrics["samples"] and r["folds"] == 2 and len(r["fold_acc"]) == 2
    for k in ("discard", "pick", "koikoi"):
        assert r[f"samples_{k}"] == metrics[f"samples_{k}"] and 0 <= r[k] <= 1


def test_precision_auto_follows_the_cpu(monkeypatch):
    from pipeline.runtime import hardware
    from pipeline.sl.train import resolved

    for native, want in ((True, "bf16-mixed"), (False, "32-true")):
        monkeypatch.setattr(hardware, "cpu_has_bf16", lambda native=native: native)
        assert resolved(sl_params(precision="auto", accelerator="cpu"))["precision"] == want
        assert resolved(sl_params(precision="32-true", accelerator="cpu"))["precision"] == "32-true"
    with pytest.raises(ParamError, match="sl_train.precision"):
        sl_params(precision="fp8")
    with pytest.raises(ValueError, match="sl_train.precision is 16-mixed, which needs a GPU"):
        resolved(sl_params(precision="16-mixed", accelerator="cpu"))


@pytest.mark.slow
def test_cross_validation_of_some_networks_only(two_game_dataset):
    from pipeline.sl.cross_validation import cross_validate

    data, metrics = two_game_dataset
    r = cross_validate(data, sl_params(), folds=2, progress=False, decisions=["pick", "koikoi"])
    assert set(r) >= {"pick", "koikoi", "samples_pick", "samples_koikoi"}
    assert "discard" not in r and "overall" not in r  # an overall figure needs every network
    assert r["samples"] == metrics["samples_pick"] + metrics["samples_koikoi"]
    with pytest.raises(ValueError, match="decisions"):
        cross_validate(data, sl_params(), folds=2, progress=False, decisions=["draw"])
    with pytest.raises(ValueError, match="shared_trunk"):
        cross_validate(data, sl_params(shared_trunk=True), folds=2, progress=False, decisions=["pick"])
