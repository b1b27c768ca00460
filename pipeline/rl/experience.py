"""The last loops' samples (``rl.replay``), fitted again beside each new loop's.

Rollout targets are scarce (a few thousand koi-koi calls per loop) and noisy, and a fit on one loop's
calls alone replaces what the previous loops taught: the network ends up fitted to the last loop's few
calls (docs/rl-experiments.md, R1). Keeping the last ``loops`` loops' samples makes every fit one on
several loops' calls, and phase 2 starts with phase 1's, so self-play adds to phase 1's fit instead
of overwriting it.

``state.pt`` is read with ``weights_only`` (plain containers and tensors only), so the samples are
stored as tuples of their observation's fields (``pack``) and rebuilt on loading (``unpack``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import astuple, fields

import numpy as np
import torch

from ..engine import Observation, Turn
from ..selfplay.batched import Sample

_TURNS = [f.name for f in fields(Observation)].index("turns")  # the one field of nested dataclasses


def _pack(s: Sample) -> tuple:
    obs = astuple(s.obs)  # the turns become plain tuples too
    target = None if s.target is None else torch.from_numpy(np.ascontiguousarray(s.target))
    return obs, s.action, s.reward, target


def _unpack(t: tuple) -> Sample:
    obs, action, reward, target = t
    obs = list(obs)
    obs[_TURNS] = tuple(Turn(*turn) for turn in obs[_TURNS])
    return Sample(Observation(*obs), action, reward, None if target is None else target.numpy())


class Replay:
    """The samples of the last ``loops`` loops (0: none are kept), oldest loop first."""

    def __init__(self, loops: int, packed: list[list[tuple]] | None = None) -> None:
        self.loops: deque[list[Sample]] = deque(maxlen=loops)
        self._packed: deque[list[tuple]] = deque(maxlen=loops)  # packed once, written at every checkpoint
        for loop in packed or ():
            self.loops.append([_unpack(t) for t in loop])
            self._packed.append(loop)

    def add(self, samples: list[Sample]) -> None:
        if not self.loops.maxlen:
            return
        self.loops.append(list(samples))
        self._packed.append([_pack(s) for s in samples])

    def samples(self) -> list[Sample]:
        return [s for loop in self.loops for s in loop]

    def __len__(self) -> int:
        return sum(len(loop) for loop in self.loops)

    def pack(self) -> list[list[tuple]]:
        """Plain containers and tensors, for ``state.pt``."""
        return list(self._packed)
