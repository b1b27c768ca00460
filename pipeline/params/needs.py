"""What the pipeline's stages will need beyond valid values: the paths a param names, and the devices it asks for.

``params_check`` (the first stage) calls ``check_needs`` after ``load_params``, so that a param a stage would
refuse only after DVC removed its outputs (a records directory or model that is not there, ``cuda`` on a
machine without CUDA) stops ``dvc repro`` first. Only the stages that ``dvc.yaml`` beside the params file
runs are checked, and a path counts as present when it exists or when a stage of that ``dvc.yaml`` makes
it (``models/sl`` on a fresh clone: ``sl_train`` writes it before ``winprob`` reads it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from ..agents.specs import is_search, model_of
from ..runtime.hardware import resolve_accelerator, resolve_device
from .base import ParamError
from .load import Params

BUILTIN = ("random", "heuristic")
STRONGEST = "strongest"  # duels.search.model: the round-robin's best rated model, chosen when it has run


def stage_outputs(dvc_file: Path) -> dict[str, list[str]]:
    """Each stage of ``dvc_file`` (``foreach`` stages as ``name@item``) with the paths it writes; ``{}`` without
    the file. ``ParamError`` when it cannot be read."""
    try:
        doc = yaml.safe_load(dvc_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, yaml.YAMLError) as e:
        raise ParamError(f"{dvc_file}: cannot read it ({str(e).splitlines()[0]})") from None
    variables: dict[str, Any] = {}
    for v in (doc or {}).get("vars") or []:
        if isinstance(v, dict):
            variables.update(v)
    out: dict[str, list[str]] = {}
    for name, stage in ((doc or {}).get("stages") or {}).items():
        if not isinstance(stage, dict):
            continue
        if "foreach" in stage:
            items = stage["foreach"]
            if isinstance(items, str):
                m = re.fullmatch(r"\$\{\s*(\w+)\s*\}", items)
                items = variables.get(m.group(1), []) if m else []
            body = stage.get("do") or {}
            for item in items if isinstance(items, list) else []:
                out[f"{name}@{item}"] = [p.replace("${item}", str(item)) for p in _paths(body)]
        else:
            out[name] = _paths(stage)
    return out


def _paths(stage: dict) -> list[str]:
    paths = []
    for kind in ("outs", "metrics", "plots"):
        for o in stage.get(kind) or []:
            paths += list(o) if isinstance(o, dict) else [str(o)]
    return [os.path.normpath(p) for p in paths]


def check_needs(params: Params, params_file: str | Path) -> None:
    """``ParamError`` (one line naming the param) for the first path or device a stage of the pipeline would
    refuse; the project is the params file's directory."""
    project = Path(params_file).resolve().parent
    stages = stage_outputs(project / "dvc.yaml")
    runs = {name.split("@")[0] for name in stages}
    made = [p for paths in stages.values() for p in paths]
    source = str(params_file)

    def present(path: str, model: bool) -> bool:
        norm = os.path.normpath(path)
        if any(norm == p or norm.startswith(p + os.sep) for p in made):
            return True
        d = project / path
        return (d / "model.pt").is_file() and (d / "config.json").is_file() if model else d.is_dir()

    def need_model(key: str, spec: str) -> None:
        model = model_of(spec) if is_search(spec) else spec
        if model in BUILTIN or present(model, model=True):
            return
        raise ParamError(f"{source}: {key} must be a model directory (model.pt + config.json) or one a stage of "
                         f"dvc.yaml makes, got {spec!r}")

    if "sl_dataset" in runs:
        records = params.sl_dataset.records_dir
        if records and not present(records, model=False):
            raise ParamError(f"{source}: sl_dataset.records_dir must be a directory of game records (or \"\" to "
                             f"find them), got {records!r}")
    if "winprob" in runs:
        need_model("winprob.agent", params.winprob.agent)
    if "duels" in runs:
        duels = params.duels
        for i, spec in enumerate(duels.agents):
            need_model(f"duels.agents[{i}]", spec)
        if duels.search is not None and duels.search.games:
            if duels.search.model != STRONGEST:
                need_model("duels.search.model", duels.search.model)
            elif all(a in BUILTIN for a in duels.agents):
                raise ParamError(f"{source}: duels.search.model strongest needs a model directory in duels.agents "
                                 f"(or duels.search.games 0), got {duels.agents!r}")
        if duels.attention is not None:
            need_model("duels.attention.model", duels.attention.model)
    _check_devices(params, runs, source)


def _check_devices(params: Params, runs: set[str], source: str) -> None:
    """``cuda`` (or ``gpu``) where torch sees no CUDA GPU, for the stages that run: refused now."""
    devices = {"duels": [("duels.device", params.duels.device)],
               "winprob": [("winprob.device", params.winprob.device)],
               "rl_phase1": [("rl.selfplay.device", params.rl.selfplay.device),
                             ("rl.learner_device", params.rl.learner_device)]}
    devices["rl_phase2"] = devices["rl_phase1"]
    try:
        for stage, keys in devices.items():
            if stage in runs:
                for key, value in keys:
                    resolve_device(value, key)
        if "sl_train" in runs:
            resolve_accelerator(params.sl_train.accelerator, "sl_train.accelerator")
    except ValueError as e:
        raise ParamError(f"{source}: {e}") from None
