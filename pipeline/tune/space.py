"""Search spaces read from the params models' ``tune`` extras, so the ranges live beside the params they sample.

A spec is a list (a choice), a mapping ``{low, high[, log][, step]}`` (a range) or a fixed value; params.yaml
``tune.space.<target>`` may narrow or fix any field, checked against it first.
"""

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import optuna
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ..params import DuelsParams, ParamError, RLParams, SLTrainParams
from ..params.base import Section, leaf_tune, message, nested
from ..selfplay.rewards import REWARD_MODELS
from .search_space import search_space

Space = Mapping[str, Any]
# sl_train.width is sampled per head (width = heads x head_dim): it always divides by the heads, and every
# trial keeps one fixed distribution per parameter (TPE and the importance plot need that).
HEAD_DIM = "head_dim"
_STRICT = ConfigDict(strict=True, allow_inf_nan=False)


@dataclass(frozen=True)
class Target:
    """What a study tunes: the params.yaml section and its model."""

    name: str
    section: str
    model: type[Section]


# a search study's best is a duels.search.options string (search_space.py holds its space)
TARGETS = {"sl": Target("sl", "sl_train", SLTrainParams), "rl": Target("rl", "rl", RLParams),
           "search": Target("search", "duels", DuelsParams)}


def _extra(f: FieldInfo) -> dict[str, Any]:
    return f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}


def _fields(model: type[BaseModel], prefix: str = "",
            section: dict[str, Any] | None = None) -> Iterator[tuple[str, FieldInfo, dict[str, Any]]]:
    """``(dotted key, field, its tune extra or its section's)`` of every leaf field of ``model``."""
    for name, f in model.model_fields.items():
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
            yield from _fields(f.annotation, f"{prefix}{name}.", _extra(f))
        else:
            yield f"{prefix}{name}", f, _extra(f) or leaf_tune(section, name)


def _name(key: str) -> str:
    return HEAD_DIM if key == "width" else key


def default_space(target: str, variant: str = "point", algorithm: str = "rollout_pi") -> dict[str, Any]:
    """The target's tuned fields and their specs, only ``variant``'s and ``algorithm``'s where they differ."""
    if target == "search":
        return search_space()
    out = {}
    for key, _, extra in _fields(TARGETS[target].model):
        spec = extra.get("tune")
        last = key.rsplit(".", 1)[-1]
        if spec is None or (last in REWARD_MODELS and last != variant and "." in key):
            continue
        if target == "rl" and algorithm not in extra.get("algorithms", [algorithm]):
            continue
        out[_name(key)] = spec
    return out


def _check(target: str, name: str, spec: Any, f: FieldInfo, source: str = "params.yaml") -> Any:
    """``spec`` with every value it names checked against the field (ranges of a float field made float)."""
    where = f"tune.space.{target}.{name}"
    adapter = TypeAdapter(Annotated[f.annotation, *f.metadata] if f.metadata else f.annotation, config=_STRICT)
    values = spec if isinstance(spec, list | tuple) else \
        [spec[b] for b in ("low", "high") if b in spec] if isinstance(spec, Mapping) else [spec]
    for v in values:
        try:
            adapter.validate_python(v)
        except ValidationError as e:
            raise ParamError(message(e.errors()[0], source, where)) from None
    if isinstance(spec, Mapping) and f.annotation is float:
        return {**spec, **{b: float(spec[b]) for b in ("low", "high") if isinstance(spec.get(b), int)}}
    return spec


def _values(spec: Any) -> list[Any] | None:
    """The values a choice or a fixed value can take; None for a range."""
    return None if isinstance(spec, Mapping) else list(spec) if isinstance(spec, list | tuple) else [spec]


def _check_widths(out: Mapping[str, Any], source: str) -> None:
    """A space that names ``width`` keeps it divisible by every ``heads`` it can sample."""
    where = f"{source}: tune.space.sl"
    widths, heads = _values(out["width"]), _values(out.get("heads", []))
    if widths is None:
        raise ParamError(f"{where}.width must be a list of widths (a range cannot keep each one divisible by "
                         f"heads), got {dict(out['width'])}; or give head_dim, the width per head")
    if heads is None:
        raise ParamError(f"{where}.heads must be a list when tune.space.sl.width is given, got {dict(out['heads'])}")
    for w in widths:
        for h in heads:
            if isinstance(w, int) and isinstance(h, int) and h > 0 and w % h:
                raise ParamError(f"{where}.width {w} is not divisible by heads {h} (a value of tune.space.sl.heads);"
                                 f" choose widths that every heads value divides, or give head_dim")


def merged_space(target: str, overrides: Space | None = None, variant: str = "point", source: str = "params.yaml",
                 algorithm: str = "rollout_pi", rollout: str | None = None) -> dict[str, Any]:
    """The target's default space with ``overrides`` (``tune.space.<target>`` of ``source``) on top."""
    if target == "search":
        return search_space(overrides, rollout, source)
    fields = {key: f for key, f, _ in _fields(TARGETS[target].model)}
    known = {_name(k): f for k, f in fields.items()}
    if target == "sl":
        known[HEAD_DIM] = known["width"] = fields["width"]
    out = default_space(target, variant, algorithm)
    overrides = overrides or {}
    if target == "sl" and "width" in overrides:
        if HEAD_DIM in overrides:
            raise ParamError(f"{source}: tune.space.sl names both width and head_dim (width = heads x head_dim); "
                             f"give one")
        out.pop(HEAD_DIM, None)  # the widths as given, not per head
    for name, spec in overrides.items():
        if known.get(name) is None:
            raise ParamError(f"{source}: tune.space.{target}.{name} names no {TARGETS[target].section} key")
        out[name] = spec
    checked = {name: _check(target, name, spec, known[name], source) for name, spec in out.items()}
    if "width" in checked:
        _check_widths(checked, source)
    return checked


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
    """One valid value per sampled entry, for a ``FixedTrial`` that checks a space before any trial runs."""
    out = {}
    for name, spec in space.items():
        if isinstance(spec, list | tuple) and spec:
            out[name] = spec[0]
        elif isinstance(spec, Mapping) and "low" in spec:
            out[name] = spec["low"]
    return out


def derive(values: Mapping[str, Any]) -> dict[str, Any]:
    """Sampled values -> the section's nested keys (``head_dim`` -> ``width = heads * head_dim``)."""
    flat = dict(values)
    if HEAD_DIM in flat:
        flat["width"] = int(flat.pop(HEAD_DIM)) * int(flat.get("heads", 1))
    return nested(flat)
