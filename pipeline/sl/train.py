"""Supervised training: ``train_sl``, one tracked run, resumable from ``last.ckpt`` written with the same params
and data (the ``sl_train`` stage and the tuner)."""

import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.callbacks import Callback

from ..net.modelio import save_model
from ..params import SLTrainParams
from ..runtime import fingerprints
from ..runtime.hardware import (
    Placement,
    announce,
    placement_params,
    resolve_accelerator,
    resolve_precision,
    torch_device,
)
from ..runtime.train_guards import read_checkpoint
from ..tracking import bookkeeping, resume
from ..tracking.lifecycle import ending_runs, owner_tags
from ..tracking.lineage import log_sl_dataset, sl_dataset
from ..tracking.store import setup_experiment, tracking_uri
from .datamodule import SLDataModule
from .dataset import SampleSet, load_info
from .fitting import RunInfo, fit

EXPERIMENT = "sl"

# Params that change how long or how fast a run goes but not what it computes: a checkpoint
# written under other values of these can still be resumed.
_RESUMABLE_ACROSS = ("num_workers", "max_epochs", "patience", "threads")


def resolved(params: SLTrainParams) -> dict:
    """The params as a dict, ``accelerator`` and ``precision`` made concrete for this machine."""
    p = params.model_dump()
    accelerator = resolve_accelerator(p["accelerator"], "sl_train.accelerator")
    precision = resolve_precision(p["precision"], accelerator, "sl_train.precision")
    return {**p, "accelerator": accelerator, "precision": precision}


def resolve_threads(threads: int) -> int:
    """``threads`` if > 0; for 0, the cores left idle by the 1-minute load average (at least 1): two torch threads
    on a box whose other core is busy run several times slower than one."""
    if threads > 0:
        return threads
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(cores, round(cores - load)))


def checkpoint_fingerprint(p: dict, info: dict) -> str:
    """What a resumable checkpoint must match: the params (but those in ``_RESUMABLE_ACROSS``) and the data."""
    data = [info.get("records_fingerprint"), info.get("feature_version"), info.get("val_game_names"),
            info.get("samples")]
    return fingerprints.fingerprint({**p, "data": data}, _RESUMABLE_ACROSS)


def _read_checkpoint(path: Path, who: str) -> dict | None:
    """A Lightning checkpoint loaded safely; None after one line on stderr when it cannot be read."""
    try:
        return read_checkpoint(path)
    except Exception as e:  # a checkpoint cut short by the kill itself, or one that is not the project's
        what = "it holds objects other than tensors" if "weights_only" in str(e) else type(e).__name__
        print(f"{who}: cannot read {path} ({what}); starting afresh", file=sys.stderr)
        return None


def _resume_point(ckpt_dir: Path, fp: str) -> tuple[Path | None, str | None]:
    """``(last.ckpt, its MLflow run id)`` if it can be resumed, else ``(None, None)`` after clearing stale files."""
    last = ckpt_dir / "last.ckpt"
    ck = resume.resume_point(last, fp, "sl_train", lambda c: c.get("koikoi", {}).get("fingerprint"),
                                  _read_checkpoint, keep_stale=False)
    if ck is not None:
        return last, ck["koikoi"].get("mlflow_run_id")
    if ckpt_dir.exists():
        shutil.rmtree(ckpt_dir)
    return None, None


def _sample_counts(s: SampleSet, prefix: str) -> dict[str, int]:
    return {f"{prefix}_samples": len(s), **{f"{prefix}_samples_{k}": v for k, v in s.counts().items()}}


def train_sl(dataset_dir: str | Path, out_dir: str | Path, params: SLTrainParams, callbacks: Sequence[Callback] = (),
             logger: Any = None, max_epochs: int | None = None, *, progress: bool = True,
             curves_path: str | Path | None = None, log_model: bool | None = None, register: bool = False,
             ckpt_dir: str | Path | None = None) -> dict:
    """Train on ``dataset_dir`` and write the best model to ``out_dir``; returns the best epoch's flat metrics.

    ``logger``: None logs to MLflow experiment ``sl``, False nothing, else that Lightning logger. ``log_model``
    (default: with the built-in logger) logs the model as a pyfunc; ``register`` also registers ``koikoi-sl``.
    """
    t0 = time.perf_counter()
    p = resolved(params)
    placements = [Placement("train", torch_device(p["accelerator"]), p["precision"], params.accelerator == "auto")]
    placement = announce("sl_train", placements) if progress else placement_params(placements)
    epochs = int(max_epochs if max_epochs is not None else p["max_epochs"])
    threads = resolve_threads(p["threads"])
    torch.set_num_threads(threads)
    info = load_info(dataset_dir)
    dm = SLDataModule(dataset_dir, batch_size=p["batch_size"], num_workers=p["num_workers"], seed=p["seed"],
                      augment=p["augment"])
    out = Path(out_dir)
    ckpt_dir = Path(ckpt_dir) if ckpt_dir is not None else out / "checkpoints"
    fp = checkpoint_fingerprint(p, info)
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
                                "train_samples": len(dm.train_set), "val_samples": len(dm.val_set), **placement})
        logger.experiment.set_tag(run_id, "dataset_source", str(info.get("source")))
        log_sl_dataset(logger.experiment, run_id, dataset_dir)  # digest, records' source and counts
    client = logger.experiment if own_logger else None
    if client is not None:  # this process owns the run now (a resumed run was KILLED or FAILED)
        client.update_run(run_id, status="RUNNING")
        for k, v in owner_tags().items():
            client.set_tag(run_id, k, v)

    with ending_runs(client, run_id):  # Ctrl-C: the run ends KILLED, an error (a NaN loss): FAILED
        net, metrics, curves, epochs_run = fit(dm, p, ckpt_dir, callbacks, logger, epochs, progress, ckpt_path,
                                                RunInfo(fp, run_id))
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
        _log_final(logger, out, result, curves_path, log_model, register, dataset_dir)
    return result


def _mlflow_logger(run_id: str | None) -> tuple[Any, bool]:
    """An MLFlowLogger on experiment ``sl``, continuing run ``run_id`` when the store still has it."""
    from lightning.pytorch.loggers import MLFlowLogger

    exp = setup_experiment(EXPERIMENT)
    kwargs = {"experiment_name": EXPERIMENT, "tracking_uri": tracking_uri(), "run_name": "sl_train"}
    if (run_id := resume.continuable_run(run_id, exp)) is not None:  # else the store lost it: a new run
        kwargs["run_id"] = run_id
    return MLFlowLogger(**kwargs), "run_id" in kwargs


def _log_final(logger: Any, out: Path, result: dict, curves_path: str | Path | None, log_model: bool,
               register: bool, dataset_dir: str | Path) -> None:
    """Final metrics, curves and (with ``log_model``) the model into the logger's MLflow run."""
    import mlflow

    run_id = getattr(logger, "run_id", None)
    if run_id is None:
        return
    final = {"final/" + k.replace("/", "_"): float(v) for k, v in result.items()
             if isinstance(v, int | float) and not isinstance(v, bool) and k != "run_id"}
    if log_model:  # the model goes in through the fluent API: point it at the logger's store
        mlflow.set_tracking_uri(getattr(logger, "_tracking_uri", None) or tracking_uri())
    bookkeeping.finish_run(logger.experiment, run_id, final, step=int(result.get("epochs", 0)),
                           artifacts=[curves_path] if curves_path is not None else [],
                           model_dir=out if log_model else None, register=register,
                           dataset=sl_dataset(dataset_dir))
