"""Fitting ``model.CardLogit`` before SL: a conditional logit solved in full batch, then held fixed."""

import numpy as np
import torch

from ..net.encoding import NUM_TOKENS
from ..net.layers import CardLogit
from ..net.model import KoiKoiNet
from . import DECISION_NAMES
from .datamodule import SLDataModule
from .module import masked_cross_entropy


@torch.enable_grad()
def fit_card_logit(logit: CardLogit, h: torch.Tensor, legal: torch.Tensor, action: torch.Tensor,
                   c: float = 30.0, max_iter: int = 500) -> float:
    """Fit ``logit`` by L-BFGS with scikit-learn's L2 penalty; returns the mean training loss (nan: no samples)."""
    n = h.shape[0]
    if n == 0:
        return float("nan")
    f = logit.features(h.float()).detach().double()
    w = torch.zeros(CardLogit.N_IN, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(NUM_TOKENS, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=max_iter, tolerance_grad=1e-9, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = masked_cross_entropy(f @ w + b, legal, action) + ((w * w).sum() + (b * b).sum()) / (2 * c * n)
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        logit.weight.copy_(w)
        logit.bias.copy_(b)
        return float(masked_cross_entropy(f @ w + b, legal, action))


def fit_card_logits(net: KoiKoiNet, dm: SLDataModule, c: float) -> dict[str, float]:
    """Fit and freeze each ``CardLogit`` of ``net`` on its decision type's unaugmented training samples."""
    losses = {}
    s = dm.train_set
    for name, logit in net.card_logits.items():
        sel = np.flatnonzero(s.decision == DECISION_NAMES.index(name))
        with torch.no_grad():
            x = dm.unpacker(torch.from_numpy(s.bits[sel]), torch.from_numpy(s.values[sel]))
        losses[name] = fit_card_logit(logit, x.transpose(1, 2), torch.from_numpy(s.legal[sel]),
                                      torch.from_numpy(s.action[sel]), c)
        logit.requires_grad_(False)
    return losses
