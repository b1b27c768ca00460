"""The Lightning data module over a packed SL dataset; batches are unpacked only on the device (a few MB)."""

from pathlib import Path

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from ..net.encoding import NUM_FEATURES
from ..net.model import swap_months
from .dataset import SampleSet, load_split
from .packing import Layout, TorchUnpacker


def tensor_dataset(s: SampleSet) -> TensorDataset:
    return TensorDataset(torch.from_numpy(s.bits), torch.from_numpy(s.values), torch.from_numpy(s.legal),
                         torch.from_numpy(s.action), torch.from_numpy(s.decision))


class SLDataModule(pl.LightningDataModule):
    """Train/val loaders of ``(x, legal, action, decision)``, from a dataset directory or in-memory sets."""

    def __init__(self, dataset_dir: str | Path | None = None, batch_size: int = 256, num_workers: int = 0,
                 seed: int = 0, train: SampleSet | None = None, val: SampleSet | None = None,
                 layout: Layout | None = None, augment: bool = False) -> None:
        super().__init__()
        if dataset_dir is None and (train is None or val is None or layout is None):
            raise ValueError("SLDataModule needs dataset_dir, or train, val and layout")
        if batch_size < 1 or num_workers < 0:
            raise ValueError(f"batch_size must be >= 1 and num_workers >= 0, got {batch_size}, {num_workers}")
        self.dataset_dir = Path(dataset_dir) if dataset_dir is not None else None
        self.batch_size, self.num_workers, self.seed = batch_size, num_workers, seed
        self.train_set, self.val_set, self.layout = train, val, layout
        if self.dataset_dir is not None:
            self.train_set, self.layout = load_split(self.dataset_dir, "train")
            self.val_set, _ = load_split(self.dataset_dir, "val")
        self.unpacker = TorchUnpacker(self.layout)
        if augment and self.layout.num_features != NUM_FEATURES:
            raise ValueError(f"augment: the dataset has {self.layout.num_features} feature rows, this encoding "
                             f"{NUM_FEATURES}; rebuild it (dvc repro sl_dataset)")
        self.augment = augment

    @property
    def num_features(self) -> int:
        return self.layout.num_features

    def _loader(self, s: SampleSet, shuffle: bool) -> DataLoader:
        gen = torch.Generator().manual_seed(self.seed) if shuffle else None
        return DataLoader(tensor_dataset(s), batch_size=self.batch_size, shuffle=shuffle, generator=gen,
                          num_workers=self.num_workers, persistent_workers=self.num_workers > 0)

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_set, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, shuffle=False)

    def on_after_batch_transfer(self, batch, dataloader_idx: int):
        bits, values, legal, action, decision = batch
        x = self.unpacker.to(bits.device)(bits, values)
        if self.augment and self.trainer is not None and self.trainer.training:
            x = swap_months(x)
        return x, legal, action, decision
