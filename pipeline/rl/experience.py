"""The last loops' samples (``rl.replay``), fitted again beside each new loop's so one loop's few koi-koi calls
do not overwrite what earlier loops taught.

Each loop's samples are checkpointed as one ``marshal`` blob in a uint8 tensor: ``state.pt`` loads
``weights_only``, and ``torch.save`` of a tuple per sample field was most of a loop's time on a GPU machine.
"""

import marshal
from collections import deque
from itertools import takewhile
from operator import attrgetter

import numpy as np
import torch

from ..engine import Observation, Turn
from ..selfplay.batched import Sample
from .batches import EncodedSamples

_OBS_FIELDS = list(Observation._fields)
_TURNS = _OBS_FIELDS.index("turns")  # the one field of nested named tuples (marshal takes plain tuples only)
_obs_values = attrgetter(*_OBS_FIELDS)  # a tuple of the fields in order, in one C call
_turn_values = attrgetter(*Turn._fields)


def _pack(s: Sample) -> tuple:
    obs = _obs_values(s.obs)
    obs = (*obs[:_TURNS], tuple(map(_turn_values, obs[_TURNS])), *obs[_TURNS + 1:])
    t = s.target
    target = None if t is None else (t.dtype.str, t.shape, np.ascontiguousarray(t).tobytes())
    return obs, int(s.action), float(s.reward), target


def _unpack(t: tuple) -> Sample:
    obs, action, reward, target = t
    obs = list(obs)
    obs[_TURNS] = tuple(Turn(*turn) for turn in obs[_TURNS])
    if target is not None:
        dtype, shape, raw = target
        target = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return Sample(Observation(*obs), action, reward, target)


def pack_samples(samples: list[Sample]) -> torch.Tensor:
    """``samples`` as one uint8 tensor (a ``weights_only`` file holds it); ``unpack_samples`` gives them back."""
    return torch.frombuffer(bytearray(marshal.dumps([_pack(s) for s in samples], 4)), dtype=torch.uint8)


def unpack_samples(blob: torch.Tensor) -> list[Sample]:
    return [_unpack(t) for t in marshal.loads(blob.numpy().tobytes())]


class Replay:
    """The samples of the last ``loops`` loops (0: none are kept), oldest loop first, with each loop's encoded
    features once a fit has encoded them (``encoded``; not checkpointed: a resumed run encodes them again)."""

    def __init__(self, loops: int, packed: list[torch.Tensor] | None = None) -> None:
        self.loops: deque[list[Sample]] = deque(maxlen=loops)
        self._packed: deque[torch.Tensor] = deque(maxlen=loops)  # packed once, written at every checkpoint
        self._encoded: deque[EncodedSamples | None] = deque(maxlen=loops)
        for loop in packed or ():
            samples = unpack_samples(loop)
            self.loops.append(samples)
            self._packed.append(loop)
            self._encoded.append(None)

    def add(self, samples: list[Sample], encoded: EncodedSamples | None = None) -> None:
        """Keep a loop's ``samples`` (and their ``encoded`` features, where a fit made them)."""
        if not self.loops.maxlen:
            return
        if encoded is not None and len(encoded) != len(samples):
            raise ValueError(f"{len(encoded)} encoded samples for {len(samples)} samples")
        self.loops.append(list(samples))
        self._packed.append(pack_samples(samples))
        self._encoded.append(encoded)

    def samples(self) -> list[Sample]:
        return [s for loop in self.loops for s in loop]

    def encoded(self) -> list[EncodedSamples]:
        """The encoded features of the leading loops that have them, oldest first (a ``SampleBuffer``'s head)."""
        return list(takewhile(lambda e: e is not None, self._encoded))

    def __len__(self) -> int:
        return sum(len(loop) for loop in self.loops)

    def pack(self) -> list[torch.Tensor]:
        return list(self._packed)
