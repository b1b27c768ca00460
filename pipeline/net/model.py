"""The paper's card-playing network: position-wise embedding, post-LN Transformer encoder, one value per token;
one network per decision type (as the paper), or one shared trunk with three output layers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import torch
from torch import nn

from ..engine import DECISION_NAMES
from ..engine.cards import MONTH_SWAPS
from .encoding import NUM_FEATURES, ROWS
from .layers import CardLogit, EncoderLayer, FastDropout, TokenNorm, YakuCross
from .limits import MAX_FF, MAX_HEADS, MAX_LAYERS, MAX_WIDTH

NUM_DECISIONS = 3
MAX_SIZES = {"width": MAX_WIDTH, "ff": MAX_FF, "heads": MAX_HEADS, "layers": MAX_LAYERS}


@dataclass
class ModelConfig:
    num_features: int = NUM_FEATURES
    width: int = 256
    ff: int = 512
    heads: int = 4
    layers: int = 2
    dropout: float = 0.1
    shared_trunk: bool = False
    yaku_cross: tuple[str, ...] = ()  # decision types given the YakuCross rows (shared trunk: if any)
    card_logit: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        d["yaku_cross"] = list(self.yaku_cross)
        d["card_logit"] = list(self.card_logit)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"ModelConfig: unknown key(s) {unknown}; known: {sorted(known)}")
        return cls(**d)

    def __post_init__(self) -> None:
        for name in ("num_features", "width", "ff", "heads", "layers"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"ModelConfig.{name} must be a positive int, got {v!r}")
            if v > MAX_SIZES.get(name, v):  # before anything is allocated: a config may come from anywhere
                raise ValueError(f"ModelConfig.{name} must be <= {MAX_SIZES[name]}, got {v!r}")
        if self.width % self.heads:
            raise ValueError(f"ModelConfig.width ({self.width}) must be divisible by heads ({self.heads})")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"ModelConfig.dropout must be in [0, 1), got {self.dropout!r}")
        for key in ("yaku_cross", "card_logit"):  # lists of decision types
            v = getattr(self, key)
            if not isinstance(v, list | tuple) or not all(d in DECISION_NAMES for d in v):
                raise ValueError(f"ModelConfig.{key} must list decision types from {DECISION_NAMES}, got {v!r}")
            setattr(self, key, tuple(d for d in DECISION_NAMES if d in v))  # JSON lists, any order
            if v and self.num_features != NUM_FEATURES:
                raise ValueError(f"ModelConfig.{key} reads rows of the {NUM_FEATURES}-row encoding, "
                                 f"but num_features is {self.num_features}")


_MONTH_ROWS = tuple((ROWS["month"] + a - 1, ROWS["month"] + b - 1) for a, b in MONTH_SWAPS)


def swap_months(x: torch.Tensor) -> torch.Tensor:
    """Features ``(B, F, T)`` with each pair of ``MONTH_SWAPS`` relabelled in a random half of the batch
    (SL's and RL's augmentation). Only the month rows move: the other attributes of those cards agree."""
    x = x.clone()
    for ra, rb in _MONTH_ROWS:
        flip = (torch.rand(x.shape[0], device=x.device) < 0.5).view(-1, 1)
        a, b = x[:, ra], x[:, rb]
        x[:, ra], x[:, rb] = torch.where(flip, b, a), torch.where(flip, a, b)
    return x


class Trunk(nn.Module):
    """Features (B, T, F) -> token embeddings (B, T, width): [YakuCross,] two ReLU layers, the encoder."""

    def __init__(self, c: ModelConfig, yaku_cross: bool = False) -> None:
        super().__init__()
        self.cross = YakuCross() if yaku_cross else nn.Identity()
        n_in = c.num_features + (YakuCross.ROWS_ADDED if yaku_cross else 0)
        self.embed = nn.Sequential(nn.Linear(n_in, c.width), nn.ReLU(),
                                   nn.Linear(c.width, c.width), nn.ReLU(), TokenNorm())
        layer = EncoderLayer(c.width, c.heads, c.ff, c.dropout, batch_first=True, norm_first=False)
        layer.dropout, layer.dropout1, layer.dropout2 = (FastDropout(c.dropout) for _ in range(3))
        # nested tensors only help with padding masks, which a fixed 50-token input never has
        self.encoder = nn.TransformerEncoder(layer, c.layers, enable_nested_tensor=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.encoder(self.embed(self.cross(h)))

    def attention(self, h: torch.Tensor) -> list[torch.Tensor]:
        """Per-layer attention maps (B, heads, T, T), recomputed layer by layer."""
        h = self.embed(self.cross(h))
        maps = []
        for layer in self.encoder.layers:
            _, w = layer.self_attn(h, h, h, need_weights=True, average_attn_weights=False)
            maps.append(w)
            h = layer(h)
        return maps


class KoiKoiNet(nn.Module):
    """``forward(x (B, F, T), decision (B,)) -> (B, T)`` raw values, one per token."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        super().__init__()
        self.config = c = config or ModelConfig()
        if c.shared_trunk:
            self.trunk = Trunk(c, bool(c.yaku_cross))
            self.out = nn.Linear(c.width, NUM_DECISIONS)  # three output layers side by side
        else:
            self.trunks = nn.ModuleList(Trunk(c, d in c.yaku_cross) for d in DECISION_NAMES)
            self.outs = nn.ModuleList(nn.Linear(c.width, 1) for _ in range(NUM_DECISIONS))
        self.card_logits = nn.ModuleDict({d: CardLogit() for d in c.card_logit})

    def _check(self, x: torch.Tensor, decision: torch.Tensor) -> None:
        if x.dim() != 3 or x.shape[1] != self.config.num_features:
            raise ValueError(f"KoiKoiNet: x must be (B, {self.config.num_features}, T), got {tuple(x.shape)}")
        if decision.shape != (x.shape[0],):
            raise ValueError(f"KoiKoiNet: decision must be ({x.shape[0]},), got {tuple(decision.shape)}")

    def forward(self, x: torch.Tensor, decision: torch.Tensor) -> torch.Tensor:
        self._check(x, decision)
        h = x.transpose(1, 2)  # (B, T, F): tokens as the sequence
        if self.config.shared_trunk:
            v = self.out(self.trunk(h))  # (B, T, 3)
            out = v.gather(2, decision.view(-1, 1, 1).expand(-1, v.shape[1], 1)).squeeze(2).float()
            for d, name in enumerate(DECISION_NAMES):
                if name in self.card_logits and bool((decision == d).any()):
                    idx = (decision == d).nonzero().squeeze(1)
                    out = out.index_add(0, idx, self.card_logits[name](h.index_select(0, idx)).float())
            return out
        present = torch.unique(decision).tolist()
        if len(present) == 1:  # the usual case (batches grouped by decision): no gather/scatter
            return self._values(present[0], h)
        out = h.new_zeros(h.shape[0], h.shape[1], dtype=torch.float32)
        for d in present:
            idx = (decision == d).nonzero().squeeze(1)
            out = out.index_copy(0, idx, self._values(d, h.index_select(0, idx)))
        return out

    def _values(self, d: int, h: torch.Tensor) -> torch.Tensor:
        """Network ``d`` on samples of its own decision type: (B, T, F) -> (B, T) float32."""
        v = self.outs[d](self.trunks[d](h)).squeeze(2).float()
        name = DECISION_NAMES[d]
        return v + self.card_logits[name](h).float() if name in self.card_logits else v

    @torch.no_grad()
    def attention_weights(self, x: torch.Tensor, decision: torch.Tensor) -> list[torch.Tensor]:
        """Per-layer attention maps ``(B, heads, T, T)`` (rows sum to 1), computed in eval mode."""
        self._check(x, decision)
        was = self.training
        self.eval()
        try:
            h = x.transpose(1, 2)
            if self.config.shared_trunk:
                return [w.float() for w in self.trunk.attention(h)]
            B, T, c = h.shape[0], h.shape[1], self.config
            maps = [h.new_zeros(B, c.heads, T, T, dtype=torch.float32) for _ in range(c.layers)]
            for d in torch.unique(decision).tolist():
                idx = (decision == d).nonzero().squeeze(1)
                for i, w in enumerate(self.trunks[d].attention(h.index_select(0, idx))):
                    maps[i].index_copy_(0, idx, w.float())
            return maps
        finally:
            self.train(was)


def masked(values: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """``values`` with illegal entries set to -inf (``legal``: bool, same shape)."""
    return values.masked_fill(~legal, float("-inf"))

