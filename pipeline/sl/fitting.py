"""The Lightning fit of an SL run, shared by ``train_sl`` and ``cross_validate``."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint

from ..net.model import KoiKoiNet, ModelConfig
from ..runtime.curves import write_curve
from ..runtime.progress import on_terminal
from ..runtime.train_guards import AtomicCheckpointIO, guards, read_checkpoint
from . import DECISION_NAMES
from .card_logit import fit_card_logits
from .datamodule import SLDataModule
from .module import SLModule
from .selection import PerDecisionBest

CURVE_COLUMNS = ("epoch", "train_loss", "train_acc", "val_loss", "val_acc",
                 *(f"val_acc_{n}" for n in DECISION_NAMES), *(f"val_loss_{n}" for n in DECISION_NAMES), "lr")


def model_config(p: dict, num_features: int) -> ModelConfig:
    return ModelConfig(num_features=num_features, width=p["width"], ff=p["ff"], heads=p["heads"],
                       layers=p["layers"], dropout=float(p["dropout"]), shared_trunk=p["shared_trunk"],
                       yaku_cross=p["yaku_cross"], card_logit=p["card_logit"])


class CurvesCallback(Callback):
    """One row per epoch; the rows travel in checkpoints, so a resumed run keeps the epochs before the kill."""

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
        write_curve(self.rows, path, CURVE_COLUMNS)


class RunInfo(Callback):
    """Stores the params fingerprint and the MLflow run id in every checkpoint (for resuming)."""

    def __init__(self, fingerprint: str, run_id: str | None) -> None:
        self.fingerprint, self.run_id = fingerprint, run_id

    def on_save_checkpoint(self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict) -> None:
        checkpoint["koikoi"] = {"fingerprint": self.fingerprint, "mlflow_run_id": self.run_id}


def fit(dm: SLDataModule, p: dict, ckpt_dir: Path, callbacks: Sequence[Callback], logger: Any,
         max_epochs: int, progress: bool, ckpt_path: Path | None, run_info: RunInfo | None,
         ) -> tuple[KoiKoiNet, dict[str, float], CurvesCallback, int]:
    """Train with early stopping; returns the net at its best epoch, its val metrics, curves and epochs run."""
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
        deterministic="warn", default_root_dir=str(ckpt_dir), log_every_n_steps=10, plugins=[AtomicCheckpointIO()],
    )
    trainer.fit(module, datamodule=dm, ckpt_path=str(ckpt_path) if ckpt_path else None, weights_only=True)
    if per_type is not None:
        per_type.restore(net)
        if module.ema_net is not None:  # the final validation runs the average: make it the kept weights
            module.ema_net.load_state_dict(net.state_dict())
        best_epochs = {f"best_epoch_{n}": e for n, e in per_type.best_epoch.items()}
    else:
        if best.best_model_path:
            module.load_state_dict(read_checkpoint(best.best_model_path)["state_dict"])
        if module.ema_net is not None:  # keep the validated weights, the average
            net.load_state_dict(module.ema_net.state_dict())
        best_epochs = {}
    final = trainer.validate(module, datamodule=dm, verbose=False)[0]
    metrics = {**{k: float(v) for k, v in final.items()}, **best_epochs}
    return net, metrics, curves, trainer.current_epoch
