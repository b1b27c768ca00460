"""The Lightning fit of a ``RolloutNet`` to a teacher's policy, and what the fit is judged by."""

import lightning.pytorch as pl
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from ..engine import DECISION_NAMES
from ..net.encoding import CANONICAL_TOKEN
from ..rollout.network import RolloutConfig, RolloutNet
from ..runtime.progress import on_terminal
from ..runtime.train_guards import guards
from .teacher_games import Positions


def soft_cross_entropy(values: torch.Tensor, valid: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per sample ``-sum_t target_t log softmax(values)_t`` over the ``valid`` tokens (the padding gets no mass)."""
    logp = torch.log_softmax(values.float().masked_fill(~valid, float("-inf")), dim=-1)
    return -(target * logp.masked_fill(~valid, 0.0)).sum(-1)


def judge(values: torch.Tensor, valid: torch.Tensor, tokens: torch.Tensor, target: torch.Tensor,
          decision: torch.Tensor) -> dict[str, float]:
    """``agreement`` with the teacher's arg-max (interchangeable cards alike) and ``kl``, overall and per type."""
    canonical = torch.from_numpy(CANONICAL_TOKEN).to(tokens.device)
    ce = soft_cross_entropy(values, valid, target)
    entropy = -(target * torch.log(target.clamp_min(1e-30))).sum(-1)
    kl = ce - entropy
    student = tokens.gather(1, values.masked_fill(~valid, float("-inf")).argmax(1, keepdim=True)).squeeze(1)
    teacher = tokens.gather(1, target.argmax(1, keepdim=True)).squeeze(1)
    agree = (canonical[student] == canonical[teacher]).float()
    out = {"agreement": float(agree.mean()), "kl": float(kl.mean())}
    for d, name in enumerate(DECISION_NAMES):
        sel = decision == d
        if bool(sel.any()):
            out[f"agreement_{name}"] = float(agree[sel].mean())
            out[f"kl_{name}"] = float(kl[sel].mean())
    return out


def tensors(p: Positions) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in (p.x, p.valid, p.g, p.decision, p.target,
                                                                       p.tokens))


class DistillModule(pl.LightningModule):
    """Wraps a plain ``RolloutNet``; batches are ``tensors(positions)``."""

    def __init__(self, net: RolloutNet, lr: float = 1e-3) -> None:
        super().__init__()
        self.net = net
        self.lr = lr
        self.save_hyperparameters(ignore=["net"])

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> torch.Tensor:
        x, valid, g, decision, target, _ = batch
        loss = soft_cross_entropy(self.net(x, g, decision), valid, target).mean()
        self.log("train/loss", loss, on_step=False, on_epoch=True, batch_size=len(x))
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        x, valid, g, decision, target, tokens = batch
        values = self.net(x, g, decision)
        n = len(x)
        self.log("val/loss", soft_cross_entropy(values, valid, target).mean(), batch_size=n, prog_bar=True)
        for k, v in judge(values, valid, tokens, target, decision).items():
            self.log(f"val/{k}", v, batch_size=n)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.net.parameters(), lr=self.lr, foreach=True)


def fit_rollout(train: Positions, val: Positions, config: RolloutConfig, *, epochs: int, lr: float, batch_size: int,
                seed: int, logger: object = None, progress: bool = False) -> RolloutNet:
    """A ``RolloutNet`` of ``config`` fit to ``train`` (weights and batch order seeded), validated on ``val``."""
    torch.manual_seed(seed)
    net = RolloutNet(config)
    order = torch.Generator().manual_seed(seed)
    train_dl = DataLoader(TensorDataset(*tensors(train)), batch_size=batch_size, shuffle=True, generator=order)
    val_dl = DataLoader(TensorDataset(*tensors(val)), batch_size=4096)
    trainer = pl.Trainer(max_epochs=epochs, accelerator="cpu", devices=1, logger=logger or False,
                         callbacks=guards("rollout"), enable_progress_bar=progress and on_terminal(),
                         enable_model_summary=False, enable_checkpointing=False, num_sanity_val_steps=0,
                         deterministic="warn", log_every_n_steps=50)
    trainer.fit(DistillModule(net, lr), train_dl, val_dl)
    return net.eval()


def judge_net(net: RolloutNet, p: Positions) -> dict[str, float]:
    x, valid, g, decision, target, tokens = tensors(p)
    with torch.inference_mode():
        return judge(net.eval()(x, g, decision), valid, tokens, target, decision)
