"""Model directories: ``model.pt`` (state_dict) and ``config.json`` ({"config": ..., "meta": ...}).

A directory is loadable on its own. ``meta`` always records the feature layout (``FEATURE_VERSION``,
``NUM_FEATURES``) so a model trained on another layout fails with a clear error instead of garbage; every network
file is loaded and checked by one function (``_load_network``).
"""

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
    """Write ``net`` to ``directory`` (created if needed); returns it.

    Each file is written beside its target and renamed over it, so a kill leaves the old file or the
    new one, never a truncated one (the weights go first: a config always describes whole weights)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {**(meta or {}), "feature_version": FEATURE_VERSION, "num_features": NUM_FEATURES}
    doc = {"config": net.config.to_dict(), "meta": meta}
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
    _check_layout(config, meta, d / MODEL_FILE)
    return config, meta


def _check_layout(config: ModelConfig, meta: dict, weights: Path) -> None:
    """``ValueError`` (one line naming the network's file) unless ``config`` reads this code's feature layout."""
    version = meta.get("feature_version")
    if config.num_features != NUM_FEATURES or version != FEATURE_VERSION:
        raise ValueError(f"{weights} was built for features {version!r} ({config.num_features} rows), "
                         f"this code encodes {FEATURE_VERSION!r} ({NUM_FEATURES} rows); retrain it")


def load_model(directory: str | Path) -> tuple[KoiKoiNet, dict]:
    """Load ``(net, meta)`` from a model directory; the net is on CPU in eval mode.

    Raises ``FileNotFoundError`` when ``directory`` lacks model.pt/config.json, and ``ValueError``
    for a malformed config or a model built for another feature layout.
    """
    d = Path(directory)
    config, meta = load_config(d)
    return _load_network(d, config, meta, MODEL_FILE, KoiKoiNet), meta


def _fix(d: Path) -> str:
    return f"retrain it (the stage that writes {d}) or restore it (dvc checkout)"


def _load_network(d: Path, config: ModelConfig, meta: dict, name: str,
                  cls: Callable[[ModelConfig], torch.nn.Module]) -> torch.nn.Module:
    """Network file ``name`` of model directory ``d`` (``config``, the directory's ``meta``), built by
    ``cls(config)`` and loaded on the CPU in eval mode: every network of a directory is loaded, and its feature
    layout, size and weights checked, by this one function."""
    _check_layout(config, meta, d / name)
    fix = _fix(d)
    check_size(lambda: cls(config), d / name, d / CONFIG_FILE, fix)
    net = cls(config)
    try:
        net.load_state_dict(read_weights(d / name, fix))
    except (TypeError, RuntimeError) as e:  # other tensor names or shapes than config.json describes
        raise ValueError(f"weights {d / name} do not fit {d / CONFIG_FILE} ({str(e).splitlines()[0][:120]}): "
                         f"{fix}") from None
    return net.eval()


MIN_BYTES = 2  # bytes per number of the smallest precision weights are saved in (bf16, fp16)


def check_size(build: Callable[[], torch.nn.Module], weights: Path, config_file: Path, fix: str) -> None:
    """``ValueError`` (one line) unless ``weights`` is large enough to hold the network ``build`` makes: the
    network is built on the meta device (shapes, no memory), so a config that asks for more than its weight
    file holds is refused before anything is allocated (``ModelConfig`` bounds each size first)."""
    with torch.device("meta"):
        numbers = sum(t.numel() for t in build().state_dict().values())
    size = weights.stat().st_size if weights.is_file() else 0
    if size < MIN_BYTES * numbers:
        raise ValueError(f"{config_file} describes {numbers:,} weights but {weights} holds {size:,} bytes (at least "
                         f"{MIN_BYTES * numbers:,} needed): {fix}")


def read_weights(path: str | Path, fix: str = "restore or rebuild it") -> dict:
    """A state dict saved with ``torch.save``, loaded safely (tensors and plain containers only) on the CPU.

    ``ValueError`` with one line naming the file and what to do (``fix``) when it is empty, cut short or
    not a torch file at all (torch's own message would advise turning safe loading off: never do that here).
    """
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
