"""Search spaces written as data, so params.yaml (``tune.space``) and tests can narrow them.

A space maps a name to a spec: a list is a categorical choice, a mapping ``{low, high[, log][, step]}``
a numeric range (float when either bound is a float, else int), anything else a fixed value. A
target's ``derive`` turns the sampled values into the keys of its params.yaml section.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import optuna

Space = Mapping[str, Any]

# Heads and width are sampled as heads x head_dim: the width always divides by the heads, and every
# trial keeps one fixed distribution per parameter (TPE and the importance plot need that).
SL_SPACE: dict[str, Any] = {
    "lr": {"low": 1.0e-4, "high": 3.0e-3, "log": True},
    "weight_decay": {"low": 1.0e-6, "high": 1.0e-2, "log": True},
    "heads": [2, 4, 8],
    "head_dim": [16, 32, 64],
    "layers": {"low": 1, "high": 4},
    "ff": [128, 256, 512, 1024],
    "dropout": {"low": 0.0, "high": 0.3},
    "batch_size": [64, 128, 256, 512],
    "shared_trunk": [False, True],
    "augment": [True, False],
    "ema": [0.0, 0.99, 0.995],
    "label_smoothing": {"low": 0.0, "high": 0.2},
}

# ``reward_scale`` scales the round reward of the variant being tuned (``rl.reward_scale.<variant>``).
RL_SPACE: dict[str, Any] = {
    "lr": {"low": 1.0e-5, "high": 1.0e-3, "log": True},
    "batch_size": [64, 128, 256, 512],
    "epsilon_start": {"low": 0.05, "high": 0.5},
    "epsilon_end": {"low": 0.0, "high": 0.05},
    "games_per_loop": [32, 64, 128, 256],
    "reward_scale": {"low": 0.01, "high": 1.0, "log": True},
}


def sample(trial: optuna.Trial, space: Space) -> dict[str, Any]:
    """One value per entry of ``space`` (see the module docstring for the spec forms)."""
    out: dict[str, Any] = {}
    for name, spec in space.items():
        if isinstance(spec, list | tuple):
            if not spec:
                raise ValueError(f"tune.space.{name}: empty choice list")
            out[name] = trial.suggest_categorical(name, list(spec))
        elif isinstance(spec, Mapping):
            unknown = set(spec) - {"low", "high", "log", "step"}
            if unknown or not {"low", "high"} <= set(spec):
                raise ValueError(f"tune.space.{name}: a range needs low and high (and may have log, step), "
                                 f"got {dict(spec)}")
            low, high, log = spec["low"], spec["high"], bool(spec.get("log", False))
            for bound in ("low", "high", "step"):
                v = spec.get(bound)
                if v is None and bound == "step":
                    continue
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    raise ValueError(f"tune.space.{name}.{bound} must be a finite number, got {v!r}")
            if low > high:
                raise ValueError(f"tune.space.{name}: low {low} > high {high}")
            if isinstance(low, float) or isinstance(high, float):
                out[name] = trial.suggest_float(name, float(low), float(high), log=log, step=spec.get("step"))
            else:
                out[name] = trial.suggest_int(name, int(low), int(high), log=log, step=int(spec.get("step", 1)))
        else:
            out[name] = spec
    return out


def first_values(space: Space) -> dict[str, Any]:
    """One valid value per sampled entry (a choice's first, a range's low), for ``optuna.trial.FixedTrial``:
    checks a space against the target's params before any trial runs."""
    out = {}
    for name, spec in space.items():
        if isinstance(spec, list | tuple) and spec:
            out[name] = spec[0]
        elif isinstance(spec, Mapping) and "low" in spec:
            out[name] = spec["low"]
    return out


def derive_sl(values: Mapping[str, Any]) -> dict[str, Any]:
    """Sampled SL values -> ``sl_train`` keys: ``width = heads * head_dim``."""
    out = dict(values)
    if "head_dim" in out:
        out["width"] = int(out.pop("head_dim")) * int(out.get("heads", 1))
    return out


def derive_rl(values: Mapping[str, Any], variant: str = "point") -> dict[str, Any]:
    """Sampled RL values -> the nested ``rl`` keys (``epsilon.start``, ``reward_scale.<variant>``, ...)."""
    out = dict(values)
    eps = {k: out.pop(f"epsilon_{k}") for k in ("start", "end") if f"epsilon_{k}" in out}
    if eps:
        out["epsilon"] = eps
    if "reward_scale" in out:
        out["reward_scale"] = {variant: out.pop("reward_scale")}
    return out


@dataclass(frozen=True)
class Target:
    """What a study tunes: its default space, how samples become params, and the params.yaml section."""

    name: str
    section: str
    space: Space
    derive: Callable[[Mapping[str, Any]], dict[str, Any]]


TARGETS = {
    "sl": Target("sl", "sl_train", SL_SPACE, derive_sl),
    "rl": Target("rl", "rl", RL_SPACE, derive_rl),
}


def merged_space(target: str, overrides: Space | None = None) -> dict[str, Any]:
    """The target's default space with ``overrides`` (params.yaml ``tune.space.<target>``) on top."""
    return {**TARGETS[target].space, **(overrides or {})}
