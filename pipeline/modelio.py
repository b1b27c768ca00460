"""Model directories: ``model.pt`` (state_dict) and ``config.json`` ({"config": ..., "meta": ...}).

A directory is loadable on its own. ``meta`` always records the feature layout (``FEATURE_VERSION``,
``NUM_FEATURES``) so a model trained on another layout fails with a clear error instead of garbage.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from .encoding import FEATURE_VERSION, NUM_FEATURES
from .model import KoiKoiNet, ModelConfig

MODEL_FILE = "model.pt"
CONFIG_FILE = "config.json"


def save_model(net: KoiKoiNet, directory: str | Path, meta: dict | None = None) -> Path:
    """Write ``net`` to ``directory`` (created if needed); returns the directory."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {**(meta or {}), "feature_version": FEATURE_VERSION, "num_features": NUM_FEATURES}
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    torch.save(state, d / MODEL_FILE)
    (d / CONFIG_FILE).write_text(json.dumps({"config": net.config.to_dict(), "meta": meta}, indent=2) + "\n")
    return d


def is_model_dir(directory: str | Path) -> bool:
    d = Path(directory)
    return (d / MODEL_FILE).is_file() and (d / CONFIG_FILE).is_file()


def load_model(directory: str | Path) -> tuple[KoiKoiNet, dict]:
    """Load ``(net, meta)`` from a model directory; the net is on CPU in eval mode.

    Raises ``FileNotFoundError`` when ``directory`` lacks model.pt/config.json, and ``ValueError``
    for a malformed config or a model built for another feature layout.
    """
    d = Path(directory)
    if not is_model_dir(d):
        raise FileNotFoundError(f"not a model directory (needs {MODEL_FILE} and {CONFIG_FILE}): {d}")
    try:
        doc = json.loads((d / CONFIG_FILE).read_text())
        config = ModelConfig.from_dict(doc["config"])
        meta = dict(doc.get("meta", {}))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ValueError(f"bad model config {d / CONFIG_FILE}: {e}") from None
    version = meta.get("feature_version")
    if config.num_features != NUM_FEATURES or version != FEATURE_VERSION:
        raise ValueError(f"model in {d} was built for features {version!r} ({config.num_features} rows), "
                         f"this code encodes {FEATURE_VERSION!r} ({NUM_FEATURES} rows); retrain it")
    net = KoiKoiNet(config)
    try:
        net.load_state_dict(torch.load(d / MODEL_FILE, map_location="cpu", weights_only=True))
    except (RuntimeError, OSError, EOFError) as e:
        raise ValueError(f"cannot load weights {d / MODEL_FILE}: {str(e).splitlines()[0]}") from None
    net.eval()
    return net, meta
