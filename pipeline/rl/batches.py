"""A loop's RL samples encoded once and kept bit-packed (``sl.packing``) for the learner's passes.

Encoding each mini-batch as drawn would encode every sample again in each of the ``rl.epochs`` passes and in the
loops that replay it; the packed features are unpacked bit for bit on the learner's device.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..net.encoding import NUM_FEATURES, NUM_TOKENS, PROGRESS_START, encode
from ..selfplay.batched import Sample
from ..sl.packing import Layout, pack

# Rows before the game progress are 0/1 (card bit masks, static card attributes); the progress rows hold one value
# per sample, repeated over the tokens (encoding.encode). ``pack`` checks both on every chunk.
LAYOUT = Layout(NUM_FEATURES, NUM_TOKENS, np.arange(PROGRESS_START), np.arange(PROGRESS_START, NUM_FEATURES), True)
_TENSORS = ("bits", "values", "decision", "action", "reward")  # one row per sample, in sample order
CHUNK = 1024  # observations encoded at once: bounds the float32 features held at a time (54 KB each)


class EncodedSamples:
    """``samples`` encoded and packed once; ``batch(indices)`` is a mini-batch of them (packed features)."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        n = len(samples)
        bits, values = [np.zeros((0, PROGRESS_START, 7), np.uint8)], [np.zeros((0, NUM_FEATURES - PROGRESS_START),
                                                                               np.float32)]
        for i in range(0, n, CHUNK):
            packed = pack(encode([s.obs for s in samples[i:i + CHUNK]]), LAYOUT)
            bits.append(packed["bits"])
            values.append(packed["values"].astype(np.float32))  # float16 where exact: float32 is exact too
        self.bits = torch.from_numpy(np.concatenate(bits))
        self.values = torch.from_numpy(np.concatenate(values))
        self.decision = torch.tensor([s.obs.decision for s in samples], dtype=torch.long)
        self.action = torch.tensor([s.action for s in samples], dtype=torch.long)
        self.reward = torch.tensor([s.reward for s in samples], dtype=torch.float32)
        self.has_target = [s.target is not None for s in samples]
        self.target = torch.from_numpy(np.stack([np.full(NUM_TOKENS, np.nan, np.float32) if s.target is None
                                                 else s.target for s in samples])) if any(self.has_target) else None

    @classmethod
    def concat(cls, parts: Sequence[EncodedSamples]) -> EncodedSamples:
        """The samples of ``parts`` in order, as if encoded together (each part's tensors copied once)."""
        has_target = [h for part in parts for h in part.has_target]
        target = torch.cat([torch.full((len(part), NUM_TOKENS), torch.nan) if part.target is None else part.target
                            for part in parts]) if any(has_target) else None
        return cls._of({name: torch.cat([getattr(part, name) for part in parts]) for name in _TENSORS},
                       has_target, target)

    def since(self, start: int) -> EncodedSamples:
        """The samples from ``start`` on, copied (a view would keep the whole buffer's tensors alive)."""
        has_target = self.has_target[start:]
        target = self.target[start:].clone() if self.target is not None and any(has_target) else None
        return self._of({name: getattr(self, name)[start:].clone() for name in _TENSORS}, has_target, target)

    @classmethod
    def _of(cls, tensors: dict[str, torch.Tensor], has_target: list[bool], target: torch.Tensor | None
            ) -> EncodedSamples:
        out = cls.__new__(cls)
        out.__dict__.update(tensors, has_target=has_target, target=target)
        return out

    def __len__(self) -> int:
        return len(self.has_target)

    def batch(self, indices: Sequence[int]) -> tuple[torch.Tensor, ...]:
        """(bits, values, decision, action, reward) of ``indices``, plus (target, support) for branch-target samples:
        ``learner.collate``'s batch with the features still packed."""
        ix = torch.as_tensor(indices, dtype=torch.long)
        out = (self.bits[ix], self.values[ix], self.decision[ix], self.action[ix], self.reward[ix])
        if not self.has_target[indices[0]]:
            return out
        t = self.target[ix]
        if torch.isnan(t).any():  # logit targets: NaN off the branched actions
            return (*out, t.nan_to_num(0.0), ~torch.isnan(t))
        return (*out, t, t > 0)  # distribution targets: > 0 on the branched actions
