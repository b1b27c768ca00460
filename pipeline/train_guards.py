"""Lightning callbacks that every training run (SL, RL) carries, so a fault ends it cleanly.

- ``StopOnNonFiniteLoss``: a NaN or infinite training loss stops the run at once with a one-line
  ``NonFiniteLoss`` (a ``ValueError``), before anything is saved: the previous model stays.
- ``PassInterrupt``: Lightning turns Ctrl-C into ``sys.exit(1)`` and ignores SIGINT from then on;
  this hands the ``KeyboardInterrupt`` on instead, so the command ends with its one line and exit
  code 130 and the MLflow run is marked KILLED (``pipeline.runstate``).

``guards`` also quiets Lightning's own chatter, since every Trainer goes through it.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import warnings
from typing import Any

import lightning.pytorch as pl
import torch


class NonFiniteLoss(ValueError):
    """The training loss became NaN or infinite."""


class StopOnNonFiniteLoss(pl.Callback):
    """Raise ``NonFiniteLoss`` after the first training step whose loss is not finite.

    ``section`` names the params section (``sl_train``, ``rl``) whose ``lr`` the message points at. On a GPU,
    reading the loss back every step would make the host wait for every step: there the steps' verdicts are
    gathered on the device and read every ``GPU_CHECK_EVERY`` steps and before validation, the epoch's end and
    the run's end, so the run still stops before anything is saved."""

    GPU_CHECK_EVERY = 64

    def __init__(self, section: str) -> None:
        self.section = section
        self._bad: torch.Tensor | None = None  # on the GPU: whether any step since the last check was not finite
        self._steps = 0

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if not isinstance(loss, torch.Tensor):
            return
        if loss.device.type == "cpu":  # reading it costs nothing here
            value = float(loss.detach().float().mean())
            if not math.isfinite(value):
                self._stop(trainer, f"is {value} at")
            return
        bad = ~torch.isfinite(loss.detach()).all()
        self._bad = bad if self._bad is None else self._bad | bad
        self._steps += 1
        if self._steps % self.GPU_CHECK_EVERY == 0:
            self._check(trainer)

    def _check(self, trainer: pl.Trainer) -> None:
        if self._bad is not None:
            bad, self._bad = bool(self._bad), None
            if bad:
                self._stop(trainer, "is nan or inf by")

    def on_validation_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._check(trainer)

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._check(trainer)

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._check(trainer)

    def _stop(self, trainer: pl.Trainer, what: str) -> None:
        raise NonFiniteLoss(f"training loss {what} epoch {trainer.current_epoch + 1}, "
                            f"step {trainer.global_step}: training stopped and nothing was saved (the previous "
                            f"model is kept); lower {self.section}.lr")


def _not_lightnings_shutdown_note(record: logging.LogRecord) -> bool:
    return "Detected KeyboardInterrupt" not in record.getMessage()


class PassInterrupt(pl.Callback):
    """Re-raise Ctrl-C (``KeyboardInterrupt``) out of ``Trainer.fit`` instead of Lightning's ``sys.exit(1)``
    (and drop Lightning's "attempting graceful shutdown" note: the command says "interrupted" itself)."""

    def __init__(self) -> None:
        logging.getLogger("lightning.pytorch.utilities.rank_zero").addFilter(_not_lightnings_shutdown_note)

    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException) -> None:
        if isinstance(exception, KeyboardInterrupt):
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.default_int_handler)  # Lightning set SIG_IGN
            raise exception


def _quiet_lightning() -> None:
    """Lightning's banner (accelerators, AMP, a tip to install its cloud logger), its hints and a torch
    deprecation its own code triggers say nothing about the run, and RL's per-loop Trainers would repeat
    them every loop: logs keep the project's own lines. The data are in-memory tensors, so worker
    processes would only add start-up time: no hint about them either."""
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    logging.getLogger("lightning.fabric").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", ".*does not have many workers.*")
    warnings.filterwarnings("ignore", ".*smaller than the logging interval.*")
    warnings.filterwarnings("ignore", r".*isinstance\(treespec, LeafSpec\)` is deprecated.*")


def guards(section: str) -> list[pl.Callback]:
    """The callbacks every Trainer of ``section`` gets (and Lightning quieted before it is built)."""
    _quiet_lightning()
    return [StopOnNonFiniteLoss(section), PassInterrupt()]
