"""Lightning callbacks that every training run (SL, RL) carries, so a fault ends it cleanly.

- ``StopOnNonFiniteLoss``: a NaN or infinite training loss stops the run at once with a one-line
  ``NonFiniteLoss`` before anything is saved: the previous model stays. It is a bad param (the ``lr``), so a
  ``ParamError``: exit code 2, like every usage error (and a ``ValueError``, for callers that catch those).
- ``PassInterrupt``: Lightning turns Ctrl-C into ``sys.exit(1)`` and ignores SIGINT from then on;
  this hands the ``KeyboardInterrupt`` on instead, so the command ends with its one line and exit
  code 130 and the MLflow run is marked KILLED (``pipeline.tracking.lifecycle``).

- ``LogProgress``: off a terminal (where Lightning draws no bar), the training steps as a
  ``progress.progress_bar``, so a log gets its once-a-minute line (done / total, rate, ETA).

``guards`` also quiets Lightning's own chatter, since every Trainer goes through it. ``AtomicCheckpointIO``
writes a Trainer's checkpoints beside their target and renames them over it (Lightning's own copies them
from the temp directory, which a kill can leave half done on another filesystem).
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
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO

from .atomic import torch_save
from .errors import ParamError
from .progress import on_terminal, progress_bar


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning checkpoints through ``pipeline.runtime.atomic``: a kill leaves the previous checkpoint or the new
    one; read back safely: tensors and plain containers only (``weights_only``), never a pickle's code, whatever a
    caller asks (a checkpoint in ``checkpoints/`` is a file anyone with write access could have planted)."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        torch_save(checkpoint, path)

    def load_checkpoint(self, path: Any, map_location: Any = None, weights_only: bool | None = None) -> dict[str, Any]:
        del map_location, weights_only  # always onto the CPU, always safely
        return read_checkpoint(path)


def read_checkpoint(path: Any) -> dict[str, Any]:
    """A Lightning checkpoint loaded safely on the CPU: the project's hold only tensors and plain containers, so
    ``weights_only`` reads them whole and refuses (an ``UnpicklingError``) one that holds anything else."""
    return torch.load(path, map_location="cpu", weights_only=True)


class NonFiniteLoss(ParamError, ValueError):
    """The training loss became NaN or infinite: the params (the learning rate) are to blame."""


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


class LogProgress(pl.Callback):
    """Off a terminal, the fit's optimizer steps as a log bar (``progress``: one line a minute, none per step)."""

    def __init__(self, section: str) -> None:
        self.section, self.bar = section, None

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if on_terminal():
            return  # Lightning's own bar, when asked for
        total = trainer.estimated_stepping_batches
        self.bar = progress_bar(total=int(total) if math.isfinite(total) else None, initial=trainer.global_step,
                                desc=f"{self.section} training", unit="step")

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        if self.bar is not None:
            self.bar.update(trainer.global_step - self.bar.n)

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._close()

    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException) -> None:
        self._close()


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
    return [StopOnNonFiniteLoss(section), LogProgress(section), PassInterrupt()]  # PassInterrupt raises: last
