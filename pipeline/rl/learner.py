"""The policy network's learner: a Lightning module fitting the network with the RL algorithm's loss, over a
buffer whose mini-batches each hold one decision type (one of the three networks, as in the paper)."""

from collections.abc import Iterator, Sequence

import lightning.pytorch as pl
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

from ..engine import DECISION_NAMES
from ..net.encoding import encode
from ..net.model import swap_months
from ..runtime.progress import on_terminal
from ..runtime.train_guards import guards
from ..selfplay.batched import Sample
from ..sl.packing import TorchUnpacker
from .algorithms.base import Algorithm
from .batches import LAYOUT, EncodedSamples


class SampleBuffer(Dataset):
    """A loop's samples, indexed by decision type; ``encoded``: the leading (replayed) samples' features."""

    def __init__(self, samples: Sequence[Sample] = (), encoded: Sequence[EncodedSamples] = ()) -> None:
        self.samples: list[Sample] = []
        self.by_type: list[list[int]] = [[], [], []]
        self.head = list(encoded)
        self._encoded: EncodedSamples | None = None
        self.extend(samples)
        if sum(map(len, self.head)) > len(self.samples):
            raise ValueError("more encoded samples than samples")

    def extend(self, samples: Sequence[Sample]) -> None:
        for s in samples:
            self.by_type[s.obs.decision].append(len(self.samples))
            self.samples.append(s)
        self._encoded = None

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> Sample:
        return self.samples[i]

    def encode(self) -> EncodedSamples:
        """Every sample's features packed (``batches.EncodedSamples``), each sample encoded once."""
        if self._encoded is None:
            tail = EncodedSamples(self.samples[sum(map(len, self.head)):])
            self._encoded = EncodedSamples.concat([*self.head, tail]) if self.head else tail
        return self._encoded

    def __getitems__(self, indices: list[int]) -> tuple[torch.Tensor, ...]:
        return self.encode().batch(indices)

    def counts(self) -> dict[str, int]:
        return {DECISION_NAMES[d]: len(ix) for d, ix in enumerate(self.by_type)}


class TypedBatchSampler(Sampler[list[int]]):
    """Shuffled mini-batches that each hold one decision type; every sample once per pass."""

    def __init__(self, buffer: SampleBuffer, batch_size: int, seed: int) -> None:
        self.buffer, self.batch_size, self.seed = buffer, batch_size, seed
        self.epoch = 0  # each pass (epoch) shuffles anew, reproducibly

    def _batches(self) -> list[list[int]]:
        rng = np.random.default_rng((self.seed, self.epoch) if self.epoch else self.seed)
        self.epoch += 1
        batches = []
        for ix in self.buffer.by_type:
            perm = rng.permutation(np.asarray(ix, dtype=np.int64))
            batches += [perm[i:i + self.batch_size].tolist() for i in range(0, len(perm), self.batch_size)]
        order = rng.permutation(len(batches))
        return [batches[i] for i in order]

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches())

    def __len__(self) -> int:
        return sum(-(-len(ix) // self.batch_size) for ix in self.buffer.by_type)


def collate(samples: Sequence[Sample]) -> tuple[torch.Tensor, ...]:
    """(features, decision, action, reward) tensors for one mini-batch, plus (target, legal) for branch-target samples
    (what a pass's batches are once unpacked on the device)."""
    obs = [s.obs for s in samples]
    x = torch.from_numpy(encode(obs))
    d = torch.tensor([o.decision for o in obs], dtype=torch.long)
    a = torch.tensor([s.action for s in samples], dtype=torch.long)
    r = torch.tensor([s.reward for s in samples], dtype=torch.float32)
    if samples[0].target is None:
        return x, d, a, r
    t = torch.from_numpy(np.stack([s.target for s in samples]))
    if torch.isnan(t).any():  # logit targets: NaN off the branched actions
        support = ~torch.isnan(t)
        return x, d, a, r, t.nan_to_num(0.0), support
    return x, d, a, r, t, t > 0  # distribution targets: > 0 on the branched actions


class KeptAdamModule(pl.LightningModule):
    """A LightningModule with one Adam optimizer kept across fits (its moments carry over, into checkpoints too), its
    losses summed per group on the device and read once by ``mean_losses`` (no host sync per step)."""

    def __init__(self, net: nn.Module, lr: float, augment: bool, groups: Sequence[str], prefix: str) -> None:
        super().__init__()
        self.net = net
        self.lr = lr
        self.augment = augment  # relabel interchangeable months in training batches (model.swap_months)
        self.groups, self.prefix = tuple(groups), prefix
        self.optimizer: torch.optim.Optimizer | None = None
        self.reset_stats()

    def reset_stats(self) -> None:
        self.loss_sum: torch.Tensor | None = None  # float64 (groups,)
        self.loss_n: torch.Tensor | None = None  # int64 (groups,)

    def add_losses(self, losses: torch.Tensor, n: int, index: torch.Tensor | None = None) -> None:
        """Count ``n`` samples' mean ``losses``: one per group (``index`` None), or one for group ``index``."""
        if self.loss_sum is None:
            self.loss_sum = torch.zeros(len(self.groups), dtype=torch.float64, device=losses.device)
            self.loss_n = torch.zeros(len(self.groups), dtype=torch.long, device=losses.device)
        values = losses.detach().double().reshape(-1) * n
        if index is None:
            self.loss_sum += values
            self.loss_n += n
        else:
            self.loss_sum.index_add_(0, index, values)
            self.loss_n.index_add_(0, index, torch.full((1,), n, dtype=torch.long, device=losses.device))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        if self.optimizer is None:
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        return self.optimizer

    def mean_losses(self) -> dict[str, float]:
        """``<prefix>/<group>``: the mean loss of the last fit per group that had samples."""
        if self.loss_sum is None:
            return {}
        total, n = self.loss_sum.tolist(), self.loss_n.tolist()
        return {f"{self.prefix}/{g}": total[i] / n[i] for i, g in enumerate(self.groups) if n[i]}


class PolicyLearner(KeptAdamModule):
    """The RL learner: each mini-batch's loss is the RL algorithm's. No defaults: params.yaml owns them."""

    def __init__(self, net: nn.Module, *, lr: float, algorithm: Algorithm, augment: bool) -> None:
        super().__init__(net, lr, augment, DECISION_NAMES, "loss")
        self.algorithm = algorithm
        self.unpacker = TorchUnpacker(LAYOUT)  # a pass's batches arrive with their features packed (batches.py)
        self.show_progress = False  # log the loss to the progress bar (which reads it back every step)

    def on_after_batch_transfer(self, batch: tuple[torch.Tensor, ...], dataloader_idx: int) -> tuple[torch.Tensor, ...]:
        if batch[0].dtype != torch.uint8:
            return batch
        return (self.unpacker.to(batch[0].device)(batch[0], batch[1]), *batch[2:])

    def loss(self, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return self.algorithm.loss(self.net, batch)

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> torch.Tensor:
        if self.augment:
            batch = (swap_months(batch[0]), *batch[1:])
        loss = self.loss(batch)
        n = len(batch[3])
        self.add_losses(loss, n, batch[1][:1])  # a batch holds one decision type (TypedBatchSampler)
        if self.show_progress:
            self.log("train/loss", loss, prog_bar=True, batch_size=n)
        return loss


def fit_pass(learner: PolicyLearner, buffer: SampleBuffer, batch_size: int, seed: int, precision: str = "32-true",
             progress: bool = False, epochs: int = 1, accelerator: str = "cpu") -> dict[str, float]:
    """``epochs`` optimization passes over ``buffer`` (one ``Trainer.fit``); returns mean losses per type. On a GPU
    torch's deterministic algorithms are asked for, so a resumed run repeats an uninterrupted one there too."""
    learner.reset_stats()
    if len(buffer) == 0:
        return {}
    gpu = accelerator == "gpu"
    loader = DataLoader(buffer, batch_sampler=TypedBatchSampler(buffer, batch_size, seed), collate_fn=lambda b: b,
                        pin_memory=gpu)
    learner.show_progress = progress and on_terminal()
    trainer = pl.Trainer(max_epochs=epochs, accelerator=accelerator, devices=1, precision=precision, logger=False,
                         enable_checkpointing=False, enable_model_summary=False, callbacks=guards("rl"),
                         enable_progress_bar=learner.show_progress, deterministic="warn" if gpu else None,
                         num_sanity_val_steps=0, log_every_n_steps=1, default_root_dir=None)
    learner.train()  # self-play leaves the net in eval mode; training wants dropout back
    trainer.fit(learner, loader)
    learner.net.eval()
    return learner.mean_losses()
