"""Fitting the afterstate value (``value.ValueNet``) to round rewards: a LightningModule and ``fit_value``.

The loss is the mean squared error of both heads on targets divided by each head's standard deviation
(measured on the samples, kept in the net's ``scale`` buffer), so the two reward models weigh alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import lightning.pytorch as pl
import numpy as np
import torch
from torch.utils.data import DataLoader

from ..net.model import swap_months
from ..net.value_model import HEADS, ValueNet
from ..rl.learner import pass_trainer
from ..runtime.progress import on_terminal
from .samples import ValueSample, encode_samples


class ValueFit(pl.LightningModule):
    """MSE of the value's heads on scaled round rewards; the Adam state is kept across fits."""

    def __init__(self, net: ValueNet, lr: float, augment: bool) -> None:
        super().__init__()
        self.net = net
        self.lr = lr
        self.augment = augment
        self.optimizer: torch.optim.Optimizer | None = None
        self.loss_sum: torch.Tensor | None = None  # per head, on the fit's device: no host sync per step
        self.loss_n = 0

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        if self.augment:
            x = swap_months(x)
        scale = self.net.scale
        per_head = (self.net(x) / scale - y / scale).square().mean(0)
        loss = per_head.mean()
        step = per_head.detach().double() * len(y)
        self.loss_sum = step if self.loss_sum is None else self.loss_sum + step
        self.loss_n += len(y)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        if self.optimizer is None:
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        return self.optimizer

    def mean_losses(self) -> dict[str, float]:
        """Per head, the mean scaled squared error of the last fit (1.0: no better than the mean)."""
        if self.loss_sum is None:
            return {}
        n = max(1, self.loss_n)
        return {f"value_loss/{h}": v / n for h, v in zip(HEADS, self.loss_sum.tolist())}


def target_scale(samples: Sequence[ValueSample]) -> torch.Tensor:
    """Each head's target standard deviation (1 where there is no spread)."""
    y = np.array([s.targets() for s in samples], dtype=np.float64)
    sd = y.std(axis=0) if len(y) > 1 else np.ones(len(HEADS))
    return torch.tensor(np.where(sd > 0, sd, 1.0), dtype=torch.float32)


def fit_value(fit: ValueFit, samples: Sequence[ValueSample], batch_size: int, epochs: int, seed: int,
              precision: str = "32-true", accelerator: str = "cpu", progress: bool = False) -> dict[str, float]:
    """``epochs`` passes over ``samples`` in shuffled mini-batches (one ``Trainer.fit``); the mean losses.

    The first fit of a net sets its ``scale`` from the samples; later fits keep it (the outputs' units
    must not move under a refit)."""
    fit.loss_sum = None
    fit.loss_n = 0
    if not samples:
        return {}
    if not bool(fit.net.scale.ne(1.0).any()):
        fit.net.scale.copy_(target_scale(samples))
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(list(samples), batch_size=batch_size, shuffle=True, generator=gen, collate_fn=encode_samples)
    pl.seed_everything(seed, workers=False, verbose=False)
    trainer = pass_trainer(epochs, precision, accelerator, progress and on_terminal())
    fit.train()
    trainer.fit(fit, loader)
    fit.net.eval()
    return fit.mean_losses()
