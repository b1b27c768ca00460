"""Compact, lossless storage of encoded samples: 0/1 rows bit-packed, the others once per sample when constant
over tokens, as float16 when that round-trips exactly; ``pack`` verifies the round trip."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Layout:
    """Which feature rows are bit-packed and which are stored as values."""

    num_features: int
    num_tokens: int
    binary_rows: np.ndarray  # int64 (Fb,)
    value_rows: np.ndarray  # int64 (Fv,)
    broadcast: bool  # value rows are constant over tokens: stored (N, Fv), else (N, Fv, T)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"layout_shape": np.array([self.num_features, self.num_tokens, int(self.broadcast)]),
                "layout_binary_rows": self.binary_rows, "layout_value_rows": self.value_rows}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> Layout:
        f, t, b = (int(v) for v in a["layout_shape"])
        return cls(f, t, np.asarray(a["layout_binary_rows"], dtype=np.int64),
                   np.asarray(a["layout_value_rows"], dtype=np.int64), bool(b))


class LayoutPlanner:
    """Accumulates, over batches of features (N, F, T), which rows are 0/1 and which are constant over tokens."""

    def __init__(self) -> None:
        self.binary: np.ndarray | None = None
        self.constant: np.ndarray | None = None
        self.shape: tuple[int, int] | None = None

    def update(self, x: np.ndarray) -> None:
        binary = ((x == 0) | (x == 1)).all(axis=(0, 2))
        constant = (x == x[:, :, :1]).all(axis=(0, 2))
        if self.shape is None:
            self.shape, self.binary, self.constant = x.shape[1:], binary, constant
        else:
            self.binary &= binary
            self.constant &= constant

    def layout(self) -> Layout:
        if self.shape is None:
            raise ValueError("no samples to plan a layout from")
        value_rows = np.flatnonzero(~self.binary)
        broadcast = bool(self.constant[value_rows].all())
        return Layout(self.shape[0], self.shape[1], np.flatnonzero(self.binary), value_rows, broadcast)


def pack(x: np.ndarray, layout: Layout) -> dict[str, np.ndarray]:
    """Features ``x`` (N, F, T) float32 -> {"bits": uint8, "values": float16|float32}, verified lossless."""
    bits = np.packbits(x[:, layout.binary_rows, :].astype(np.uint8), axis=-1)
    v = x[:, layout.value_rows, 0] if layout.broadcast else x[:, layout.value_rows, :]
    half = v.astype(np.float16)
    values = half if np.array_equal(half.astype(np.float32), v) else v.astype(np.float32)
    out = {"bits": bits, "values": values}
    if not np.array_equal(unpack(out, layout), x):
        raise ValueError("feature packing is not lossless for this layout")  # a row broke the plan's assumptions
    return out


def unpack(packed: dict[str, np.ndarray], layout: Layout) -> np.ndarray:
    """The exact float32 features (N, F, T) from ``pack``'s output."""
    bits, values = packed["bits"], packed["values"]
    n = bits.shape[0]
    x = np.empty((n, layout.num_features, layout.num_tokens), dtype=np.float32)
    x[:, layout.binary_rows, :] = np.unpackbits(bits, axis=-1, count=layout.num_tokens)
    v = values.astype(np.float32)
    x[:, layout.value_rows, :] = v[:, :, None] if layout.broadcast else v
    return x


class TorchUnpacker(torch.nn.Module):
    """``unpack`` for torch batches (bits uint8 (B, Fb, bytes), values (B, Fv[, T])) -> float32 (B, F, T)."""

    def __init__(self, layout: Layout) -> None:
        super().__init__()
        self.layout = layout
        self.register_buffer("binary_rows", torch.as_tensor(layout.binary_rows), persistent=False)
        self.register_buffer("value_rows", torch.as_tensor(layout.value_rows), persistent=False)
        # np.packbits is big-endian within a byte: bit 7 is the first token
        self.register_buffer("shifts", torch.arange(7, -1, -1, dtype=torch.uint8), persistent=False)

    def forward(self, bits: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        lay = self.layout
        b = bits.shape[0]
        x = torch.empty(b, lay.num_features, lay.num_tokens, dtype=torch.float32, device=bits.device)
        unpacked = (bits.unsqueeze(-1) >> self.shifts) & 1
        x[:, self.binary_rows, :] = unpacked.flatten(-2)[..., :lay.num_tokens].float()
        v = values.float()
        x[:, self.value_rows, :] = v.unsqueeze(-1).expand(-1, -1, lay.num_tokens) if lay.broadcast else v
        return x
