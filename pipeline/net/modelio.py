"""Model directories: ``model.pt`` (state_dict) and ``config.json`` ({"config": ..., "meta": ...}); ``meta``
records the feature layout, so a model of another layout fails with a clear error, not garbage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch

from ..runtime import atomic
from .encoding import FEATURE_VERSION, NUM_FEATURES
from .model import KoiKoiNet, ModelConfig
from .model_dir import CONFIG_FILE, MODEL_FILE, is_model_dir


def save_model(net: KoiKoiNet, directory: str | Path, meta: dict | None = None) -> Path:
    """Write ``net`` to ``directory`` (created if needed); returns it."""
    meta = {**(meta or {}), "feature_version": FEATURE_VERSION, "num_features": NUM_FEATURES}
    return write_model_dir(net, directory, {"config": net.config.to_dict(), "meta": meta})


def write_model_dir(net: torch.nn.Module, directory: str | Path, doc: dict) -> Path:
    """``net``'s weights, then ``doc`` as config.json, each atomically: a config always describes whole weights."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    atomic.torch_save({k: v.detach().cpu() for k, v in net.state_dict().items()}, d / MODEL_FILE)
    atomic.write_text(d / CONFIG_FILE, json.dumps(doc, indent=2) + "\n")
    return d


def load_config(directory: str | Path) -> tuple[ModelConfig, dict]:
    """``(config, meta)`` of a model directory, its weights unread; raises as ``load_model`` does for its config."""
    d = Path(directory)
    if not is_model_dir(d):
        raise FileNotFoundError(f"not a model directory (needs {MODEL_FILE} and {CONFIG_FILE}): {d}")
    try:
        doc = json.loads((d / CONFIG_FILE).read_text())
        if isinstance(doc, dict) and doc.get("kind") is not None:  # another network (the rollout stage's)
            raise ValueError(f"it holds a {doc['kind']!r} model, not a KoiKoiNet")
        config = ModelConfig.from_dict(doc["config"])
        meta = dict(doc.get("meta", {}))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ValueError(f"bad model config {d / CONFIG_FILE}: {e}") from None
    version = meta.get("feature_version")
    if config.num_features != NUM_FEATURES or version != FEATURE_VERSION:
        raise ValueError(f"{d / MODEL_FILE} was built for features {version!r} ({config.num_features} rows), "
                         f"this code encodes {FEATURE_VERSION!r} ({NUM_FEATURES} rows); retrain it")
    return config, meta


def load_model(directory: str | Path) -> tuple[KoiKoiNet, dict]:
    """Load ``(net, meta)`` from a model directory; the net is on CPU in eval mode."""
    d = Path(directory)
    config, meta = load_config(d)
    fix = f"retrain it (the stage that writes {d}) or restore it (dvc checkout)"
    return load_weights(lambda: KoiKoiNet(config), d, fix), meta


def load_weights(build: Callable[[], torch.nn.Module], d: Path, fix: str) -> torch.nn.Module:
    """The network ``build`` makes with model directory ``d``'s weights, size checked first, on the CPU in eval mode."""
    check_size(build, d / MODEL_FILE, d / CONFIG_FILE, fix)
    net = build()
    try:
        net.load_state_dict(read_weights(d / MODEL_FILE, fix))
    except (TypeError, RuntimeError) as e:  # other tensor names or shapes than config.json describes
        raise ValueError(f"weights {d / MODEL_FILE} do not fit {d / CONFIG_FILE} ({str(e).splitlines()[0][:120]}): "
                         f"{fix}") from None
    return net.eval()


MIN_BYTES = 2  # bytes per number of the smallest precision weights are saved in (bf16, fp16)


def check_size(build: Callable[[], torch.nn.Module], weights: Path, config_file: Path, fix: str) -> None:
    """``ValueError`` unless ``weights`` can hold the network ``build`` makes (built on the meta device, so
    nothing is allocated)."""
    with torch.device("meta"):
        numbers = sum(t.numel() for t in build().state_dict().values())
    size = weights.stat().st_size if weights.is_file() else 0
    if size < MIN_BYTES * numbers:
        raise ValueError(f"{config_file} describes {numbers:,} weights but {weights} holds {size:,} bytes (at least "
                         f"{MIN_BYTES * numbers:,} needed): {fix}")


def read_weights(path: str | Path, fix: str = "restore or rebuild it") -> dict:
    """A state dict loaded safely (``weights_only``) on the CPU; ``ValueError`` naming the file and ``fix``."""
    path = Path(path)
    size = path.stat().st_size if path.is_file() else 0
    if size == 0:
        raise ValueError(f"{path} is empty (a kill while it was written?): {fix}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated zip, random bytes, a pickle with objects: all unreadable here
        reason = type(e).__name__ if "weights_only" in str(e) else f"{type(e).__name__}: {str(e).splitlines()[0]}"
        raise ValueError(f"{path} is corrupt or not a torch file ({reason[:120]}): "
                         f"{fix}") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path} holds a {type(state).__name__}, not a state dict: {fix}")
    return state
