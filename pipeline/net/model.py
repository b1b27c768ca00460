"""The paper's card-playing network: position-wise embedding, post-LN Transformer encoder, one value per token.

Three decision types (discard, pick, koi-koi) get three independent networks as in the paper, or one
shared trunk with three output layers (``shared_trunk``). ``forward`` routes each sample to the network
of its decision type, running each network only on its own samples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import torch
from torch import nn

from ..engine import DECISION_NAMES
from ..engine.cards import MONTH_SWAPS
from .encoding import NUM_FEATURES, NUM_TOKENS, ROWS, YAKU_NAMES
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
    # decision types whose network gets the YakuCross rows: "discard", "pick", "koikoi" (none in
    # models saved before the option existed); a shared trunk gets them if any is listed
    yaku_cross: tuple[str, ...] = ()
    # decision types whose output adds a CardLogit (none in models saved before the option existed)
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
    """Features ``(B, F, T)`` with each pair of interchangeable months (``MONTH_SWAPS``) relabelled in
    a random half of the batch: SL's and RL's augmentation.

    Only the month rows move: the cards of those months agree in every other attribute, so this is
    the same game with the two months' cards renamed, and the recorded choice stays a legal one (and
    its value the same).
    """
    x = x.clone()
    for ra, rb in _MONTH_ROWS:
        flip = (torch.rand(x.shape[0], device=x.device) < 0.5).view(-1, 1)
        a, b = x[:, ra], x[:, rb]
        x[:, ra], x[:, rb] = torch.where(flip, b, a), torch.where(flip, a, b)
    return x


class TokenNorm(nn.Module):
    """LayerNorm of each embedding channel across the tokens (no parameters).

    The paper's public code normalises this way before its encoder. Without it the post-LN encoder
    trained on the human records barely learned which hand card pairs with a field card without it
    (val discard accuracy stuck near 0.30 for 500 steps, against 0.71 with it).
    """

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (B, T, W)
        return nn.functional.layer_norm(h.transpose(1, 2), h.shape[1:2]).transpose(1, 2)


class FastDropout(nn.Module):
    """Inverted dropout whose mask takes 16 random bits per element, four per 64-bit draw.

    On CPU, ``nn.Dropout`` draws one Mersenne-Twister number per element (``bernoulli_``): 13% of an
    SL training step in a profile, against ~5% for this. ``p`` is rounded to a multiple of 2^-16.
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = float(p)
        self.threshold = round(self.p * 65536) - 32768  # keep an element when its int16 draw >= this

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        n = x.numel()
        words = torch.randint(-(2**63), 2**63 - 1, ((n + 3) // 4,), dtype=torch.int64, device=x.device)
        keep = words.view(torch.int16)[:n].view(x.shape) >= self.threshold
        return x * (keep.to(x.dtype) * (1.0 / (1.0 - self.p)))

    def extra_repr(self) -> str:
        return f"p={self.p}"


class EncoderLayer(nn.TransformerEncoderLayer):
    """``nn.TransformerEncoderLayer`` (post-LN, batch first) whose training path computes attention
    from strided views of the packed projection.

    ``nn.MultiheadAttention`` copies that projection to (3, T, B, E) and back, which took ~15% of
    an SL training step in a profile. Same parameters and the same fused fast path in eval.
    """

    def _sa_block(self, x: torch.Tensor, attn_mask: torch.Tensor | None, key_padding_mask: torch.Tensor | None,
                  is_causal: bool = False) -> torch.Tensor:
        if attn_mask is not None or key_padding_mask is not None:  # never used: a fixed 50-token input
            return super()._sa_block(x, attn_mask, key_padding_mask, is_causal)
        a = self.self_attn
        (B, T, E), H = x.shape, a.num_heads
        qkv = nn.functional.linear(x, a.in_proj_weight, a.in_proj_bias).view(B, T, 3, H, E // H)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (B, H, T, E/H) each
        o = nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=a.dropout if self.training else 0.0)
        return self.dropout1(a.out_proj(o.transpose(1, 2).reshape(B, T, E)))


class YakuCross(nn.Module):
    """Appends, per card token and yaku set, "card in the set" x "share of the set in my pile"
    (and in the opponent's pile): 2 x 9 rows, zero for cards outside the set.

    Both factors are already input rows (the card's yaku-set attributes, the game-wide yaku progress),
    but their product is what tells a card's worth, and on ~1,200 human picks the embedding did not
    learn it: a logistic regression given these products matched the paper's pick accuracy where the
    Transformer without them fell 0.04 short (docs/encoding-model.md, YakuCross).
    """

    N_SETS = len(YAKU_NAMES)
    ROWS_ADDED = 2 * N_SETS

    def __init__(self) -> None:
        super().__init__()
        s, p = ROWS["yaku_set"], ROWS["yaku_progress"]
        self.member = slice(s, s + self.N_SETS)
        self.progress = slice(p, p + self.ROWS_ADDED)  # my pile's shares, then the opponent's

    def products(self, h: torch.Tensor) -> torch.Tensor:  # (B, T, F) -> (B, T, 18)
        member = h[..., self.member]  # (B, T, 9)
        share = h[:, :1, self.progress].view(h.shape[0], 1, 2, self.N_SETS)  # same in every token
        return (member.unsqueeze(2) * share).flatten(2)

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (B, T, F) -> (B, T, F + 18)
        return torch.cat([h, self.products(h)], dim=-1)


class CardLogit(nn.Module):
    """A linear score of each card on its own attributes, added to the Transformer's output: the
    "wide" part of a wide-and-deep network.

    Score of token t = w . [category (4), yaku-set membership (9), the YakuCross products (18)] + b_t,
    with b_t a per-token bias (which card it is). Under the softmax over the legal tokens this is a
    conditional logit. SL solves it first (convex, L2, full batch: ``sl.card_logit``), then trains the
    Transformer on what it leaves. On the ~1,200 human picks per fold the Transformer alone stopped
    at 0.87 while this logit alone reached 0.90 (docs/encoding-model.md, CardLogit): the network did not
    learn what a card is worth from so few samples before it overfit.
    """

    N_IN = 4 + YakuCross.N_SETS + YakuCross.ROWS_ADDED

    def __init__(self) -> None:
        super().__init__()
        self.cross = YakuCross()
        self.category = slice(ROWS["category"], ROWS["category"] + 4)
        self.weight = nn.Parameter(torch.zeros(self.N_IN))
        self.bias = nn.Parameter(torch.zeros(NUM_TOKENS))

    def features(self, h: torch.Tensor) -> torch.Tensor:  # (B, T, F) -> (B, T, N_IN)
        return torch.cat([h[..., self.category], h[..., self.cross.member], self.cross.products(h)], dim=-1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (B, T, F) -> (B, T)
        return self.features(h) @ self.weight + self.bias


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


__all__ = ["NUM_DECISIONS", "NUM_TOKENS", "CardLogit", "KoiKoiNet", "ModelConfig", "masked"]
