"""Supervised training: ``train_sl`` (one run, tracked); ``cross_validation`` holds the k-fold variant.

``train_sl`` is what the ``sl_train`` stage and the Optuna tuner call: it trains a ``KoiKoiNet`` on
a dataset directory, keeps Lightning checkpoints in ``out_dir/checkpoints`` (resuming from
``last.ckpt`` when it was written with the same params and data), and writes the best weights
(lowest val loss) as a model directory ``out_dir`` that loads on its own.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint

from ..hardware import resolve_accelerator, resolve_precision
from ..model import KoiKoiNet, ModelConfig
from ..modelio import save_model
from ..params import SLTrainParams
from ..progress import on_terminal
from ..runstate import ending_runs, log_metrics_once, owner_tags
from ..train_guards import guards
from . import DECISION_NAMES
from .card_logit import fit_card_logits
from .data import SLDataModule
from .dataset import SampleSet, load_info
from .module import SLModule
from .selection import PerDecisionBest

EXPERIMENT = "sl"

# Params that change how long or how fast a run goes but not what it computes: a checkpoint
# written under other values of these can still be resumed.
_RESUMABLE_ACROSS = ("num_workers", "max_epochs", "patience", "threads")

# The data are in-memory tensors: worker processes would only add start-up time.
warnings.filterwarnings("ignore", message=r".*does not have many workers.*")

CURVE_COLUMNS = ("epoch", "train_loss", "train_acc", "val_loss", "val_acc",
                 *(f"val_acc_{n}" for n in DECISION_NAMES), *(f"val_loss_{n}" for n in DECISION_NAMES), "lr")


def resolved(params: SLTrainParams) -> dict:
    """The params as a dict with ``accelerator`` and ``precision`` made concrete for this machine (what runs, logs
    and fingerprints); ``ValueError`` naming the param when it cannot run here (a GPU asked for, none seen)."""
    p = params.model_dump()
    accelerator = resolve_accelerator(p["accelerator"], "sl_train.accelerator")
    precision = resolve_precision(p["precision"], accelerator, "sl_train.precision")
    return {**p, "accelerator": accelerator, "precision": precision}


def resolve_threads(threads: int) -> int:
    """``threads`` if > 0; for 0, the cores left idle by the 1-minute load average (at least 1).

    Two torch threads on a box whose other core is busy run several times slower than one
    (each step waits for the descheduled thread), so a shared machine gets one thread.
    """
    if threads > 0:
        return threads
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(cores, round(cores - load)))


def model_config(p: dict, num_features: int) -> ModelConfig:
    return ModelConfig(num_features=num_features, width=p["width"], ff=p["ff"], heads=p["heads"],
                       layers=p["layers"], dropout=float(p["dropout"]), shared_trunk=p["shared_trunk"],
                       yaku_cross=p["yaku_cross"], card_logit=p["card_logit"])


class CurvesCallback(Callback):
    """One row per epoch (train/val loss and accuracy); its rows travel in checkpoints, so a resumed
    run keeps the epochs before the kill."""

    def __init__(self) -> None:
        self.rows: list[dict[str, float]] = []

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        m = trainer.callback_metrics
        row: dict[str, float] = {"epoch": trainer.current_epoch + 1}
        for col in CURVE_COLUMNS[1:-1]:
            key = col.replace("_", "/", 1)
            if key in m:
                row[col] = round(float(m[key]), 6)
        row["lr"] = float(trainer.optimizers[0].param_groups[0]["lr"]) if trainer.optimizers else float("nan")
        self.rows = [r for r in self.rows if r["epoch"] < row["epoch"]] + [row]

    def state_dict(self) -> dict:
        return {"rows": self.rows}

    def load_state_dict(self, state_dict: dict) -> None:
        self.rows = list(state_dict.get("rows", []))

    def write_csv(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CURVE_COLUMNS, extrasaction="ignore")
            w.writeheader()
            w.writerows(self.rows)


class _RunInfo(Callback):
    """Stores the params fingerprint and the MLflow run id in every checkpoint (for resuming)."""

    def __init__(self, fingerprint: str, run_id: str | None) -> None:
        self.fingerprint, self.run_id = fingerprint, run_id

    def on_save_checkpoint(self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict) -> None:
        checkpoint["koikoi"] = {"fingerprint": self.fingerprint, "mlflow_run_id": self.run_id}


def fingerprint(p: dict, info: dict) -> str:
    """What a resumable checkpoint must match: the params (but those in ``_RESUMABLE_ACROSS``) and the data."""
    key = {k: v for k, v in p.items() if k not in _RESUMABLE_ACROSS}
    key["data"] = [info.get("records_fingerprint"), info.get("feature_version"), info.get("val_game_names"),
                   info.get("samples")]
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _resume_point(ckpt_dir: Path, fp: str) -> tuple[Path | None, str | None]:
    """``(last.ckpt, its MLflow run id)`` if it can be resumed, else ``(None, None)`` after clearing stale files."""
    last = ckpt_dir / "last.ckpt"
    if last.is_file():
        try:
            meta = torch.load(last, map_location="cpu", weights_only=False).get("koikoi", {})
        except Exception as e:  # a checkpoint cut short by the kill itself
            print(f"sl_train: cannot read {last} ({type(e).__name__}); starting afresh", file=sys.stderr)
            meta = {}
        if meta.get("fingerprint") == fp:
            return last, meta.get("mlflow_run_id")
        if meta:
            print(f"sl_train: {last} was written with other params or data; starting afresh", file=sys.stderr)
    if ckpt_dir.exists():
        shutil.rmtree(ckpt_dir)
    return None, None


def fit_model(dm: SLDataModule, p: dict, ckpt_dir: Path, callbacks: Sequence[Callback], logger: Any,
         max_epochs: int, progress: bool, ckpt_path: Path | None, run_info: _RunInfo | None,
         ) -> tuple[KoiKoiNet, dict[str, float], CurvesCallback, int]:
    """Train with early stopping on val/loss; returns the net at its best epoch, its val metrics, the
    curves and the number of epochs run."""
    pl.seed_everything(p["seed"], workers=True, verbose=False)
    net = KoiKoiNet(model_config(p, dm.num_features))
    fit_card_logits(net, dm, float(p["card_logit_c"]))  # before SLModule copies the net for its average
    module = SLModule(net, lr=float(p["lr"]), weight_decay=float(p["weight_decay"]), scheduler=p["scheduler"],
                      label_smoothing=float(p["label_smoothing"]), max_epochs=max_epochs,
                      plateau_patience=max(0, p["patience"] // 2), ema=float(p["ema"]))
    curves = CurvesCallback()
    per_type = None if p["shared_trunk"] else PerDecisionBest(p["patience"], p["select"])
    if per_type is None:  # one network: its best epoch on the val loss (or accuracy) over all types
        monitor, mode = ("val/loss", "min") if p["select"] == "loss" else ("val/acc", "max")
        best = ModelCheckpoint(dirpath=ckpt_dir, filename="best-{epoch:03d}", monitor=monitor, mode=mode,
                               save_top_k=1, save_last=True, auto_insert_metric_name=False)
        cbs: list[Callback] = [EarlyStopping(monitor=monitor, mode=mode, patience=p["patience"]), best, curves]
    else:  # three networks: each at its own best epoch; checkpoints only for resuming
        # the latest epoch as last.ckpt (Lightning writes save_last only beside a top-k save)
        best = ModelCheckpoint(dirpath=ckpt_dir, filename="last", monitor=None, save_top_k=1,
                               enable_version_counter=False, save_on_train_epoch_end=True)
        cbs = [per_type, best, curves]
    if run_info is not None:
        cbs.append(run_info)
    trainer = pl.Trainer(
        max_epochs=max_epochs, accelerator=p["accelerator"], devices=1, precision=p["precision"],
        logger=logger if logger is not None else False, callbacks=[*cbs, *callbacks, *guards("sl_train")],
        enable_progress_bar=progress and on_terminal(), enable_model_summary=False, num_sanity_val_steps=0,
        deterministic="warn", default_root_dir=str(ckpt_dir), log_every_n_steps=10,
    )
    trainer.fit(module, datamodule=dm, ckpt_path=str(ckpt_path) if ckpt_path else None)
    if per_type is not None:
        per_type.restore(net)
        if module.ema_net is not None:  # the final validation runs the average: make it the kept weights
            module.ema_net.load_state_dict(net.state_dict())
        best_epochs = {f"best_epoch_{n}": e for n, e in per_type.best_epoch.items()}
    else:
        if best.best_model_path:
            state = torch.load(best.best_model_path, map_location="cpu", weights_only=False)["state_dict"]
            module.load_state_dict(state)
        if module.ema_net is not None:  # keep the validated weights, the average
            net.load_state_dict(module.ema_net.state_dict())
        best_epochs = {}
    final = trainer.validate(module, datamodule=dm, verbose=False)[0]
    metrics = {**{k: float(v) for k, v in final.items()}, **best_epochs}
    return net, metrics, curves, trainer.current_epoch


def _sample_counts(s: SampleSet, prefix: str) -> dict[str, int]:
    return {f"{prefix}_samples": len(s), **{f"{prefix}_samples_{k}": v for k, v in s.counts().items()}}


def train_sl(
    dataset_dir: str | Path,
    out_dir: str | Path,
    params: SLTrainParams,
    callbacks: Sequence[Callback] = (),
    logger: Any = None,
    max_epochs: int | None = None,
    *,
    progress: bool = True,
    curves_path: str | Path | None = None,
    log_model: bool | None = None,
    register: bool = False,
) -> dict:
    """Train on ``dataset_dir`` (``train.npz``/``val.npz``) and write the best model to ``out_dir``.

    ``params``: the ``sl_train`` section (``pipeline.params``).
    ``callbacks``: extra Lightning callbacks (e.g. an Optuna pruning callback on ``val/acc``).
    ``logger``: ``None`` logs to MLflow experiment ``sl`` (params, curves, final metrics, the model);
    ``False`` logs nothing; any Lightning logger is used as given. ``max_epochs`` overrides
    ``params["max_epochs"]``. ``log_model`` (default: only with the built-in MLflow logger) logs the
    model as a pyfunc (``pipeline.registry``); ``register`` (only the ``sl_train`` stage) also
    registers it as ``koikoi-sl``.

    Returns flat metrics of the best epoch (lowest val loss): ``val/loss``, ``val/acc``,
    ``val/acc_discard``, ``val/acc_pick``, ``val/acc_koikoi`` (and their per-type losses), plus
    ``best_epoch``, ``epochs``, ``seconds``, ``val_samples*``, ``train_samples`` and, with MLflow,
    ``run_id``.
    """
    t0 = time.perf_counter()
    p = resolved(params)
    epochs = int(max_epochs if max_epochs is not None else p["max_epochs"])
    threads = resolve_threads(p["threads"])
    torch.set_num_threads(threads)
    info = load_info(dataset_dir)
    dm = SLDataModule(dataset_dir, batch_size=p["batch_size"], num_workers=p["num_workers"], seed=p["seed"],
                      augment=p["augment"])
    out = Path(out_dir)
    ckpt_dir = out / "checkpoints"
    fp = fingerprint(p, info)
    ckpt_path, run_id = _resume_point(ckpt_dir, fp)
    if ckpt_path is not None:
        print(f"sl_train: resuming from {ckpt_path}", file=sys.stderr)

    own_logger = logger is None
    resumed_run = False
    if own_logger:
        logger, resumed_run = _mlflow_logger(run_id)
    if log_model is None:
        log_model = own_logger
    run_id = getattr(logger, "run_id", None) if logger else None
    if own_logger and not resumed_run:
        logger.log_hyperparams({**p, "max_epochs": epochs, "torch_threads": threads,
                                "dataset_source": info.get("source"),
                                "dataset_fingerprint": info.get("records_fingerprint"),
                                "train_games": info.get("train_games"), "val_games": info.get("val_games"),
                                "train_samples": len(dm.train_set), "val_samples": len(dm.val_set)})
        logger.experiment.set_tag(run_id, "dataset_source", str(info.get("source")))
    client = logger.experiment if own_logger else None
    if client is not None:  # this process owns the run now (a resumed run was KILLED or FAILED)
        client.update_run(run_id, status="RUNNING")
        for k, v in owner_tags().items():
            client.set_tag(run_id, k, v)

    with ending_runs(client, run_id):  # Ctrl-C: the run ends KILLED, an error (a NaN loss): FAILED
        net, metrics, curves, epochs_run = fit_model(dm, p, ckpt_dir, callbacks, logger, epochs, progress, ckpt_path,
                                                _RunInfo(fp, run_id))
    best_epoch = min(curves.rows, key=lambda r: r.get("val_loss", float("inf")))["epoch"] if curves.rows else 0
    per_type = [v for k, v in metrics.items() if k.startswith("best_epoch_")]
    if per_type:  # three networks, each kept at its own best epoch: the last of those
        best_epoch = max(per_type)
    result: dict[str, Any] = {
        **metrics, "best_epoch": int(best_epoch), "epochs": int(epochs_run), "threads": threads,
        "train_samples": len(dm.train_set), **_sample_counts(dm.val_set, "val"),
    }
    meta = {"kind": "sl", "dataset_source": info.get("source"),
            "dataset_fingerprint": info.get("records_fingerprint"), "params": p,
            **{k: round(v, 6) for k, v in metrics.items() if k.startswith("val/")},
            "best_epoch": result["best_epoch"],
            **{k: int(v) for k, v in metrics.items() if k.startswith("best_epoch_")}}
    save_model(net, out, meta)
    if curves_path is not None:
        curves.write_csv(curves_path)
    # A finished run is not resumed: the next run with these params starts afresh.
    (ckpt_dir / "last.ckpt").unlink(missing_ok=True)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if run_id is not None:
        result["run_id"] = run_id
    if own_logger or log_model:
        _log_final(logger, out, result, curves_path, log_model, register)
    return result


def _mlflow_logger(run_id: str | None) -> tuple[Any, bool]:
    """An MLFlowLogger on experiment ``sl``, continuing run ``run_id`` when the store still has it."""
    from lightning.pytorch.loggers import MLFlowLogger

    from ..tracking import setup_experiment, tracking_uri

    setup_experiment(EXPERIMENT)
    kwargs = {"experiment_name": EXPERIMENT, "tracking_uri": tracking_uri(), "run_name": "sl_train"}
    if run_id is not None:
        import mlflow

        try:
            mlflow.MlflowClient(tracking_uri()).get_run(run_id)
            kwargs["run_id"] = run_id
        except Exception:  # the store lost the run (another MLFLOW_TRACKING_URI): start a new one
            pass
    return MLFlowLogger(**kwargs), "run_id" in kwargs


def _log_final(logger: Any, out: Path, result: dict, curves_path: str | Path | None, log_model: bool,
               register: bool) -> None:
    """Final metrics and the curves into the logger's MLflow run; the model as a pyfunc model,
    registered as ``koikoi-sl`` when ``register``."""
    import mlflow

    run_id = getattr(logger, "run_id", None)
    if run_id is None:
        return
    client = logger.experiment
    final = {"final/" + k.replace("/", "_"): float(v) for k, v in result.items()
             if isinstance(v, int | float) and not isinstance(v, bool) and k != "run_id"}
    log_metrics_once(client, run_id, final, step=int(result.get("epochs", 0)))
    if curves_path is not None and Path(curves_path).is_file():
        client.log_artifact(run_id, str(curves_path))
    if log_model:
        from ..registry import log_model as log_pyfunc
        from ..tracking import tracking_uri

        mlflow.set_tracking_uri(getattr(logger, "_tracking_uri", None) or tracking_uri())
        with mlflow.start_run(run_id=run_id):
            log_pyfunc(out, register)
