"""What a model directory holds (``model.pt`` + ``config.json``), told without torch."""

from __future__ import annotations

from pathlib import Path

MODEL_FILE = "model.pt"
CONFIG_FILE = "config.json"


def is_model_dir(directory: str | Path) -> bool:
    d = Path(directory)
    return (d / MODEL_FILE).is_file() and (d / CONFIG_FILE).is_file()


def need_model_dir(directory: str | Path, what: str) -> None:
    """``FileNotFoundError`` naming ``what`` unless ``directory`` is a model directory (a stage's input check)."""
    if not is_model_dir(directory):
        raise FileNotFoundError(f"{what} {directory} is not a model directory (model.pt + config.json); "
                                "run its stage first")
