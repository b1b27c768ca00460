"""The network's building blocks beside ``torch.nn``'s (``model`` assembles them): a parameter-free token norm,
a cheaper dropout and encoder layer for CPU training, and the yaku-aware inputs and card logit.
"""

from __future__ import annotations

import torch
from torch import nn

from .encoding import NUM_TOKENS, ROWS, YAKU_NAMES


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
    an SL training step in a profile. Same parameters and the same fused fast path in eval, unless ``fused`` is
    off: a compiled copy's layers run the unfused ops, which the compiled graph fuses itself (the fused kernel
    fails a stride check under torch.compile, seen with torch 2.13). A flag of the layer, not torch's process-wide
    switch (``torch.backends.mha``), so that threads sharing a process (the play server's) never turn the kernel
    off for each other's eager networks.
    """

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
