"""params.yaml as one typed ``Params``: the only place the pipeline reads its params file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from ..runtime.paths import repo_root
from .base import ParamError, Section, validated
from .rl import RLParams, WinProbParams
from .sections import (
    DuelsParams,
    EngineTestsParams,
    RegistryParams,
    RolloutParams,
    SLDatasetParams,
    SLTrainParams,
    TuneParams,
)

PARAMS_FILE = "params.yaml"


class Params(Section):
    """Every section of params.yaml (one per DVC stage family)."""

    registry: RegistryParams = Field(description="the MLflow model registry; read by sl_train, rl_phase2 and duels")
    engine_tests: EngineTestsParams = Field(description="the engine_tests stage: the engine's tests and its speed")
    duels: DuelsParams = Field(description="the duels stage: the round-robin, its report and figures")
    sl_dataset: SLDatasetParams = Field(description="the sl_dataset stage: human game records to training samples")
    sl_train: SLTrainParams = Field(description="the sl_train stage: the network and its supervised training")
    tune: TuneParams = Field(description="the frozen tune stage and koikoi tune: Optuna studies")
    winprob: WinProbParams = Field(description="the winprob stage: the win-probability table RL-WP is rewarded with")
    rl: RLParams = Field(description="the rl_phase1 and rl_phase2 stages: reinforcement learning")
    rollout: RolloutParams = Field(description="the rollout stage: the searcher's cheap playout policy, distilled "
                                   "from a network")


def read_doc(path: str | Path = PARAMS_FILE) -> dict[str, Any]:
    """The params file as a plain mapping (unchecked: for overriding before ``parse_params``)."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ParamError(f"{path}: no such params file") from None
    except (OSError, yaml.YAMLError) as e:
        raise ParamError(f"{path}: cannot read it as YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(doc, dict):
        raise ParamError(f"{path}: must be a mapping of sections, got {type(doc).__name__}")
    return doc


def parse_params(doc: Any, source: str = PARAMS_FILE) -> Params:
    """``doc`` (a params.yaml mapping) checked; ``ParamError`` naming the first bad dotted key."""
    return validated(Params, doc, source)


def load_params(path: str | Path = PARAMS_FILE) -> Params:
    """The params file at ``path``, every section checked (``ParamError`` on the first problem)."""
    return parse_params(read_doc(path), str(path))


def with_overrides(doc: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with each dotted key of ``overrides`` (``"rl.phase1.loops": 2``) set."""
    import copy

    out = copy.deepcopy(dict(doc))
    for key, value in overrides.items():
        *parents, leaf = key.split(".")
        d = out
        for i, p in enumerate(parents):
            if not isinstance(d.get(p), dict):
                raise ParamError(f"{'.'.join(parents[:i + 1])} is not a section with keys, cannot set {key}")
            d = d[p]
        d[leaf] = value
    return out


def params_with(overrides: Mapping[str, Any], path: str | Path | None = None) -> Params:
    """The project's params.yaml (or ``path``) with the dotted ``overrides`` set, checked."""
    path = path or repo_root() / PARAMS_FILE
    return parse_params(with_overrides(read_doc(path), overrides), str(path))
