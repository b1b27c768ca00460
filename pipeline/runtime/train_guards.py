"""Lightning callbacks that every training run (SL, RL) carries, so a fault ends it cleanly, and atomic checkpoints
(Lightning's own copy from a temp directory, which a kill can leave half done)."""

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
    """Lightning checkpoints written atomically and always read back safely (a checkpoint may be planted)."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        torch_save(checkpoint, path)

    def load_checkpoint(self, path: Any, map_location: Any = None, weights_only: bool | None = None) -> dict[str, Any]:
        del map_location, weights_only  # always onto the CPU, always safely
        return read_checkpoint(path)


def read_checkpoint(path: Any) -> dict[str, Any]:
    """A Lightning checkpoint loaded on the CPU with ``weights_only`` (the project's hold only tensors)."""
    return torch.load(path, map_location="cpu", weights_only=True)


class NonFiniteLoss(ParamError, ValueError):
    """The training loss became NaN or infinite: a bad param (the learning rate), so exit code 2."""


class StopOnNonFiniteLoss(pl.Callback):
    """Raise ``NonFiniteLoss`` after the first training step whose loss is not finite, before anything is saved.

    On a GPU the verdicts are read every ``GPU_CHECK_EVERY`` steps (and before anything is saved), so the host
    does not wait for every step."""

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
    """Re-raise Ctrl-C out of ``Trainer.fit`` instead of Lightning's ``sys.exit(1)`` (exit 130, the run KILLED)."""

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
    """Lightning's banner and hints say nothing about the run, and RL's per-loop Trainers would repeat them."""
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    logging.getLogger("lightning.fabric").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", ".*does not have many workers.*")
    warnings.filterwarnings("ignore", ".*smaller than the logging interval.*")
    warnings.filterwarnings("ignore", r".*isinstance\(treespec, LeafSpec\)` is deprecated.*")


def guards(section: str) -> list[pl.Callback]:
    """The callbacks every Trainer of ``section`` gets (and Lightning quieted before it is built)."""
    _quiet_lightning()
    return [StopOnNonFiniteLoss(section), LogProgress(section), PassInterrupt()]  # PassInterrupt raises: last
