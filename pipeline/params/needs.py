"""What the stages will need beyond valid values (paths, devices), checked before DVC removes any output; a path
is present when it exists or a stage of the ``dvc.yaml`` beside the params file makes it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from ..agents.specs import BUILTIN, is_search, model_of
from ..engine.records import ENV_VAR, has_records, records_folder
from ..net.model_dir import is_model_dir
from ..runtime.hardware import play_device, resolve_accelerator, resolve_device
from ..runtime.phase_pairs import phase_pair
from ..search.spec import OWN, SELF, parse_options, parse_search
from .base import ParamError
from .load import Params
from .sections import STRONGEST

MODEL_STAGES = ("sl_train", "rl_phase1", "rl_phase2")  # the stages whose first output is the model they train


def stage_outputs(dvc_file: Path) -> dict[str, list[str]]:
    """Each stage of ``dvc_file`` (``foreach`` ones as ``name@item``) with the paths it writes; ``{}`` without it."""
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
    """``ParamError`` for the first path or device a stage would refuse (the project: the params file's folder)."""
    project = Path(params_file).resolve().parent
    stages = stage_outputs(project / "dvc.yaml")
    runs = {name.split("@")[0] for name in stages}
    made = [p for paths in stages.values() for p in paths]
    models_made = {paths[0] for name, paths in stages.items() if name.split("@")[0] in MODEL_STAGES and paths}
    source = str(params_file)

    def present(path: str, model: bool) -> bool:
        norm = os.path.normpath(path)
        if model:
            return norm in models_made or is_model_dir(project / path)
        return any(norm == p or norm.startswith(p + os.sep) for p in made) or (project / path).is_dir()

    def need_model(key: str, spec: str) -> None:
        model = model_of(spec) if is_search(spec) else spec
        if is_search(spec):  # its rollout policy too (the spec's options parse: the params models checked them)
            need_rollout(key, parse_search(spec)[1].rollout)
        if model in BUILTIN or present(model, model=True):
            return
        raise ParamError(f"{source}: {key} must be a model directory (model.pt + config.json) or the model a stage "
                         f"of dvc.yaml trains, got {spec!r}")

    def need_rollout(key: str, rollout: str) -> None:
        made_here = stages.get("rollout", [])[:1]  # the rollout stage's model
        if rollout in (SELF, OWN) or os.path.normpath(rollout) in made_here or is_model_dir(project / rollout):
            return
        raise ParamError(f"{source}: {key}: search option rollout={rollout!r} must be a rollout model directory or "
                         "the one the rollout stage of dvc.yaml writes (models/rollout), own or self")

    if "records" in runs and not params.sl_dataset.synthetic:
        _check_records(params, project, source)
    if "winprob" in runs:
        need_model("winprob.agent", params.winprob.agent)
    if "rollout" in runs:
        need_model("rollout.teacher", params.rollout.teacher)
    rl = params.rl
    phases = (1, 2) if rl.phase2.loops.point or rl.phase2.loops.wp else (1,)  # phase 2 without a loop searches nothing
    if any(f"rl_phase{phase}" in runs and rl.algorithm_of(phase) == "expert_it" for phase in phases):
        need_rollout("rl.expert.rollout", rl.expert.rollout)
    if "duels" in runs:
        duels = params.duels
        for i, spec in enumerate(duels.agents):
            need_model(f"duels.agents[{i}]", spec)
        for variant in duels.phase_pairs:
            for model in phase_pair(variant):
                need_model("duels.phase_pairs", model)
        if duels.search is not None:
            need_rollout("duels.search.options", parse_options(duels.search.options).rollout)
            for i, model in enumerate(duels.search.models):
                if model != STRONGEST:  # strongest needs a model among the agents: DuelsParams says so
                    need_model(f"duels.search.models[{i}]", model)
        if duels.attention is not None:
            need_model("duels.attention.model", duels.attention.model)
    _check_devices(params, runs, source)


def _check_records(params: Params, project: Path, source: str) -> None:
    """A records folder that is there must hold records; one that is not needs ``sl_dataset.records_git``."""
    p = params.sl_dataset
    folder, named_by = records_folder(p.records_dir, project)
    value = os.environ.get(ENV_VAR) if named_by.startswith("$") else p.records_dir
    if folder is not None and folder.exists():
        if not has_records(folder):
            raise ParamError(f"{source}: {named_by} must be a folder of *.json game records, got {value!r} "
                             f"({folder} holds none)")
    elif p.records_git is None:
        raise ParamError(f"{source}: {named_by} must be a folder of game records, or sl_dataset.records_git must "
                         f"say where to fetch them, got {value!r} and records_git null")


def _check_devices(params: Params, runs: set[str], source: str) -> None:
    """``cuda`` (or ``gpu``) where torch sees none, refused now by the rule each stage that runs resolves it with."""
    try:
        if "duels" in runs:
            play_device(params.duels.device, "duels.device")
        if "winprob" in runs:
            play_device(params.winprob.device, "winprob.device")
        if runs & {"rl_phase1", "rl_phase2"}:
            play_device(params.rl.selfplay.device, "rl.selfplay.device", params.rl.selfplay.backend)
            resolve_device(params.rl.learner_device, "rl.learner_device")
        if "sl_train" in runs:
            resolve_accelerator(params.sl_train.accelerator, "sl_train.accelerator")
    except ValueError as e:
        raise ParamError(f"{source}: {e}") from None
