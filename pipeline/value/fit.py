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
from ..rl.learner import KeptAdamModule, pass_trainer
from ..runtime.progress import on_terminal
from .samples import ValueSample, encode_samples


class ValueFit(KeptAdamModule):
    """MSE of the value's heads on scaled round rewards; the Adam state is kept across fits."""

    def __init__(self, net: ValueNet, lr: float, augment: bool) -> None:
        super().__init__(net, lr, augment, HEADS, "value_loss")  # value_loss/<head>: 1.0 is no better than the mean

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        if self.augment:
            x = swap_months(x)
        scale = self.net.scale
        per_head = (self.net(x) / scale - y / scale).square().mean(0)
        self.add_losses(per_head, len(y))
        return per_head.mean()


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
    fit.reset_stats()
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
