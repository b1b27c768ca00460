"""``RolloutNet``: a per-token MLP with a global embedding, one output per decision type; its model directory, a
``KoiKoiNet``'s with ``"kind": "rollout"`` in ``config.json``, so neither loader takes the other's."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
from torch import nn

from ..net.limits import MAX_LAYERS, MAX_WIDTH
from ..net.model_dir import CONFIG_FILE, MODEL_FILE, is_model_dir
from ..net.modelio import load_weights, write_model_dir
from .features import FEATURE_VERSION, NUM_GLOBAL_FEATURES, NUM_TOKEN_FEATURES

KIND = "rollout"
NUM_DECISIONS = 3


@dataclass
class RolloutConfig:
    hidden: int = 64
    layers: int = 2
    token_features: int = NUM_TOKEN_FEATURES
    global_features: int = NUM_GLOBAL_FEATURES

    def __post_init__(self) -> None:
        limits = {"hidden": MAX_WIDTH, "layers": MAX_LAYERS, "token_features": 4096, "global_features": 4096}
        for name, most in limits.items():
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= most:
                raise ValueError(f"RolloutConfig.{name} must be an int in [1, {most}], got {v!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RolloutConfig:
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"RolloutConfig: unknown key(s) {unknown}")
        return cls(**d)


class RolloutNet(nn.Module):
    """``forward(x (B, L, Ft), g (B, Fg), decision (B,)) -> (B, L)``: one value per token."""

    def __init__(self, config: RolloutConfig | None = None) -> None:
        super().__init__()
        self.config = c = config or RolloutConfig()
        self.token = nn.Linear(c.token_features, c.hidden)
        self.glob = nn.Linear(c.global_features, c.hidden, bias=False)
        self.hidden = nn.ModuleList(nn.Linear(c.hidden, c.hidden) for _ in range(c.layers - 1))
        self.out = nn.Linear(c.hidden, NUM_DECISIONS)

    def forward(self, x: torch.Tensor, g: torch.Tensor, decision: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.token(x) + self.glob(g).unsqueeze(1))
        for layer in self.hidden:
            h = torch.relu(layer(h))
        v = self.out(h)  # (B, L, 3)
        return v.gather(2, decision.view(-1, 1, 1).expand(-1, v.shape[1], 1)).squeeze(2)


def save_rollout(net: RolloutNet, directory: str | Path, meta: dict | None = None) -> Path:
    """Write ``net`` as a rollout model directory; returns it."""
    meta = {**(meta or {}), "feature_version": FEATURE_VERSION}
    return write_model_dir(net, directory, {"kind": KIND, "config": net.config.to_dict(), "meta": meta})


def read_rollout_config(directory: str | Path) -> tuple[RolloutConfig, dict]:
    """``(config, meta)`` of a rollout model directory; one-line errors."""
    d = Path(directory)
    if not is_model_dir(d):
        raise FileNotFoundError(f"not a model directory (needs {MODEL_FILE} and {CONFIG_FILE}): {d}")
    try:
        doc = json.loads((d / CONFIG_FILE).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"bad rollout config {d / CONFIG_FILE}: {type(e).__name__}: {e}") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise ValueError(f"{d} is not a rollout policy ({CONFIG_FILE} has no \"kind\": \"{KIND}\"; a KoiKoiNet's "
                         "model directory?)")
    try:
        config, meta = RolloutConfig.from_dict(doc["config"]), dict(doc.get("meta", {}))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"bad rollout config {d / CONFIG_FILE}: {type(e).__name__}: {e}") from None
    version = meta.get("feature_version")
    if version != FEATURE_VERSION or config.token_features != NUM_TOKEN_FEATURES \
            or config.global_features != NUM_GLOBAL_FEATURES:
        raise ValueError(f"{d / MODEL_FILE} was built for rollout features {version!r}, this code makes "
                         f"{FEATURE_VERSION!r}: run the rollout stage again")
    return config, meta


def load_rollout_net(directory: str | Path) -> tuple[RolloutNet, dict]:
    """``(net, meta)`` of a rollout model directory, on the CPU in eval mode."""
    d = Path(directory)
    config, meta = read_rollout_config(d)
    return load_weights(lambda: RolloutNet(config), d, f"run the rollout stage again to rewrite {d}"), meta
