"""A model's greedy choices on held-out samples, for their top-1 agreement with human choices (``koikoi sl-cv``)."""

import numpy as np
import torch

from ..net.model import KoiKoiNet, masked
from .datamodule import SLDataModule, tensor_dataset


@torch.inference_mode()
def predict(net: KoiKoiNet, dm: SLDataModule, batch_size: int = 512) -> np.ndarray:
    """Greedy legal action of ``net`` for every sample of ``dm``'s val set."""
    net.eval()
    unpack = dm.unpacker.cpu()
    out = []
    ds = tensor_dataset(dm.val_set)
    for i in range(0, len(ds), batch_size):
        bits, values, legal, _, decision = ds[i:i + batch_size]
        out.append(masked(net(unpack(bits, values), decision), legal).argmax(-1).numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
