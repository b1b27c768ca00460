"""The network's building blocks beside ``torch.nn``'s (``model`` assembles them)."""

from __future__ import annotations

import torch
from torch import nn

from .encoding import NUM_TOKENS, ROWS, YAKU_NAMES


class TokenNorm(nn.Module):
    """LayerNorm of each channel across the tokens, as the paper's code (without it SL's discard accuracy: 0.30)."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (B, T, W)
        return nn.functional.layer_norm(h.transpose(1, 2), h.shape[1:2]).transpose(1, 2)


class FastDropout(nn.Module):
    """Inverted dropout from 16 random bits per element, ``p`` rounded to 2^-16 (``nn.Dropout``: 13% of an SL step
    on CPU, this ~5%)."""

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
    """``nn.TransformerEncoderLayer`` whose training path computes attention from strided views of the packed
    projection (``nn.MultiheadAttention``'s copies took ~15% of an SL step). ``fused`` off: the unfused ops, for a
    compiled copy (the fused kernel fails under torch.compile); a flag of the layer, not a process-wide switch."""

    fused = True  # the eager fast path (``torch._transformer_encoder_layer_fwd``) in eval mode

    def forward(self, src: torch.Tensor, src_mask: torch.Tensor | None = None,
                src_key_padding_mask: torch.Tensor | None = None, is_causal: bool = False) -> torch.Tensor:
        if self.fused:
            return super().forward(src, src_mask, src_key_padding_mask, is_causal)
        x = src  # nn.TransformerEncoderLayer's own path when its fast path is not taken
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

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
    """Appends "card in the yaku set" x "share of the set in my (the opponent's) pile": 2 x 9 rows (both factors
    are inputs, but the embedding did not learn their product from ~1,200 human picks)."""

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
    """A linear score of each card on its own attributes (plus a per-token bias), added to the Transformer's
    output: the "wide" part of a wide-and-deep network; SL fits it first (``sl.card_logit``)."""

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
