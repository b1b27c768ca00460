"""Best-epoch selection for the three networks, each on its own validation loss (the paper trains them apart):
the koi-koi network overfits within a few epochs while the discard network still improves."""

import copy

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.trainer.states import TrainerFn

from ..net.model import KoiKoiNet
from . import DECISION_NAMES


class PerDecisionBest(Callback):
    """Keeps each decision type's network at its best validation loss (or accuracy); stops after ``patience``."""

    def __init__(self, patience: int, monitor: str = "loss") -> None:
        if monitor not in ("loss", "acc"):
            raise ValueError(f"monitor must be 'loss' or 'acc', got {monitor!r}")
        self.patience, self.monitor = patience, monitor
        self.sign = 1.0 if monitor == "loss" else -1.0  # best_score holds sign * value: lower is better
        self.best_score = {n: float("inf") for n in DECISION_NAMES}
        self.best_epoch = {n: 0 for n in DECISION_NAMES}
        self.states: dict[str, dict[str, torch.Tensor]] = {}
        self.waited = 0

    @staticmethod
    def _parts(net: KoiKoiNet, d: int) -> torch.nn.ModuleDict:
        parts = {"trunk": net.trunks[d], "out": net.outs[d]}
        if DECISION_NAMES[d] in net.card_logits:
            parts["card_logit"] = net.card_logits[DECISION_NAMES[d]]
        return torch.nn.ModuleDict(parts)

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.sanity_checking or trainer.state.fn != TrainerFn.FITTING:
            return
        improved = False
        for d, name in enumerate(DECISION_NAMES):
            value = trainer.callback_metrics.get(f"val/{self.monitor}_{name}")
            if value is None or not self.sign * float(value) < self.best_score[name]:
                continue
            self.best_score[name], self.best_epoch[name] = self.sign * float(value), trainer.current_epoch + 1
            net = getattr(pl_module, "eval_net", pl_module.net)  # the weight average when there is one
            state = self._parts(net, d).state_dict()
            self.states[name] = copy.deepcopy({k: v.detach().cpu() for k, v in state.items()})
            improved = True
        self.waited = 0 if improved else self.waited + 1
        if self.waited >= self.patience:
            trainer.should_stop = True

    def restore(self, net: KoiKoiNet) -> None:
        """Load each network's best weights into ``net`` (those never validated stay as they are)."""
        for d, name in enumerate(DECISION_NAMES):
            if name in self.states:
                self._parts(net, d).load_state_dict(self.states[name])

    def state_dict(self) -> dict:
        return {"best_score": self.best_score, "best_epoch": self.best_epoch, "states": self.states,
                "waited": self.waited}

    def load_state_dict(self, state_dict: dict) -> None:
        self.best_score = dict(state_dict["best_score"])
        self.best_epoch = dict(state_dict["best_epoch"])
        self.states = dict(state_dict["states"])
        self.waited = int(state_dict["waited"])
