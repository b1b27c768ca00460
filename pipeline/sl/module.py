"""The Lightning module: cross-entropy over the legal-masked outputs, accuracy per decision type."""

import copy

import lightning.pytorch as pl
import torch
from torch import nn
from torchmetrics.classification import MulticlassAccuracy

from ..net.encoding import CANONICAL_TOKEN, NUM_TOKENS
from ..net.model import masked
from ..params.sections import SCHEDULERS
from . import DECISION_NAMES


def masked_cross_entropy(values: torch.Tensor, legal: torch.Tensor, action: torch.Tensor,
                         label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of ``action`` under a softmax over the legal tokens only.

    Label smoothing spreads over the legal tokens only (torch's own would give illegal ones mass: an infinite loss).
    """
    # at least float32 (bf16 outputs are upcast; a float64 fit keeps its precision)
    logp = torch.log_softmax(masked(values.to(torch.promote_types(values.dtype, torch.float32)), legal), dim=-1)
    nll = -logp.gather(1, action.view(-1, 1)).squeeze(1)
    if label_smoothing > 0:
        smooth = -logp.masked_fill(~legal, 0.0).sum(-1) / legal.sum(-1)
        nll = (1 - label_smoothing) * nll + label_smoothing * smooth
    if reduction == "none":
        return nll
    return nll.mean() if reduction == "mean" else nll.sum()


class SLModule(pl.LightningModule):
    """Wraps a plain ``KoiKoiNet``; logs ``{split}/loss``, ``{split}/acc`` and ``{split}/acc_<decision>``."""

    def __init__(self, net: nn.Module, lr: float = 1e-3, weight_decay: float = 0.0, scheduler: str = "none",
                 label_smoothing: float = 0.0, max_epochs: int = 20, plateau_patience: int = 1,
                 ema: float = 0.0) -> None:
        super().__init__()
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {SCHEDULERS}, got {scheduler!r}")
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing!r}")
        if not 0.0 <= ema < 1.0:
            raise ValueError(f"ema must be in [0, 1), got {ema!r}")
        self.net = net
        self.ema = ema
        # An exponential moving average of the weights, validated and kept instead of the raw ones:
        # on this small dataset it averages out the noise of the last few hundred steps.
        self.ema_net = copy.deepcopy(net).requires_grad_(False) if ema > 0 else None
        self.lr, self.weight_decay, self.scheduler = lr, weight_decay, scheduler
        self.label_smoothing, self.max_epochs, self.plateau_patience = label_smoothing, max_epochs, plateau_patience
        self.save_hyperparameters(ignore=["net"])
        # accuracy compares interchangeable cards as one (the paper's counting; see engine.cards.CANONICAL)
        self.register_buffer("canonical", torch.from_numpy(CANONICAL_TOKEN), persistent=False)
        self.acc = nn.ModuleDict({
            f"{split}_{name}": MulticlassAccuracy(num_classes=NUM_TOKENS, average="micro")
            for split in ("train", "val") for name in ("all", *DECISION_NAMES)
        })

    def forward(self, x: torch.Tensor, decision: torch.Tensor) -> torch.Tensor:
        return self.net(x, decision)

    @property
    def eval_net(self) -> nn.Module:
        """The network validated and kept: the weight average with ``ema``, else the trained one."""
        return self.ema_net if self.ema_net is not None else self.net

    def on_train_batch_end(self, outputs, batch, batch_idx: int) -> None:
        if self.ema_net is not None:
            with torch.no_grad():  # one multi-tensor op, not one op per parameter
                torch._foreach_lerp_(list(self.ema_net.parameters()), [p.detach() for p in self.net.parameters()],
                                     1.0 - self.ema)

    def _step(self, batch, split: str) -> torch.Tensor:
        x, legal, action, decision = batch
        values = (self.net if split == "train" else self.eval_net)(x, decision)
        losses = masked_cross_entropy(values, legal, action, self.label_smoothing, reduction="none")
        loss = losses.mean()
        pred = self.canonical[masked(values.detach(), legal).argmax(-1)]
        action = self.canonical[action]
        n = action.shape[0]
        self.log(f"{split}/loss", loss, on_step=False, on_epoch=True, prog_bar=split == "val", batch_size=n)
        acc = self.acc[f"{split}_all"]
        acc.update(pred, action)
        self.log(f"{split}/acc", acc, on_step=False, on_epoch=True, prog_bar=True, batch_size=n)
        for d, name in enumerate(DECISION_NAMES):
            sel = decision == d
            k = int(sel.sum())
            if k == 0:
                continue
            m = self.acc[f"{split}_{name}"]
            m.update(pred[sel], action[sel])
            self.log(f"{split}/acc_{name}", m, on_step=False, on_epoch=True, batch_size=k)
            self.log(f"{split}/loss_{name}", losses.detach()[sel].mean(), on_step=False, on_epoch=True, batch_size=k)
        return loss

    def training_step(self, batch, batch_idx: int) -> torch.Tensor:
        return self._step(batch, "train")

    def validation_step(self, batch, batch_idx: int) -> None:
        self._step(batch, "val")

    def configure_optimizers(self):
        # foreach: multi-tensor updates (torch picks the per-parameter loop on CPU by default)
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr, weight_decay=self.weight_decay, foreach=True)
        if self.scheduler == "cosine":
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, self.max_epochs))
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}
        if self.scheduler == "plateau":
            sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5,
                                                               patience=self.plateau_patience)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val/loss"}}
        return opt
