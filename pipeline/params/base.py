"""What every params section shares: strict pydantic models and the one-line ``ParamError`` message. A field's
``tune`` extra is its Optuna range: a list or ``{low, high[, log]}`` (a section's field: one per leaf name)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..runtime.errors import ParamError
from ..runtime.hardware import INFERENCE_CHOICES


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


def tuned(spec: Any, algorithms: tuple[str, ...] | None = None, **constraints: Any) -> Any:
    """A field tuned over ``spec``; ``algorithms``: the ``rl.algorithm`` values that read it."""
    extra = {"tune": spec} if algorithms is None else {"tune": spec, "algorithms": list(algorithms)}
    return Field(json_schema_extra=extra, **constraints)


def leaf_tune(section_extra: Mapping[str, Any] | None, leaf: str) -> dict[str, Any]:
    """The ``tune`` (and ``algorithms``) extra a section field's spec gives its leaf ``leaf``, or ``{}``."""
    spec = (section_extra or {}).get("tune")
    if not isinstance(spec, Mapping) or leaf not in spec:
        return {}
    return {"tune": spec[leaf], **{k: v for k, v in section_extra.items() if k == "algorithms"}}


Seed = Annotated[int, Field(ge=0)]
Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
Share = Annotated[float, Field(ge=0.0, le=1.0)]
PositiveFloat = Annotated[float, Field(gt=0.0)]
InferenceSetup = Literal[INFERENCE_CHOICES]  # how players run forward passes (pipeline/net/inference.py)
INFERENCE_DOC = ("how the players run forward passes: auto | fp32 | autocast | bf16 | compile-fp32 | compile-bf16; "
                 "auto: compile-bf16 on a CPU with native bf16 (AMX, AVX512-BF16), fp32 on other CPUs, bf16 on a "
                 "GPU with native bf16 (docs/benchmarks.md)")

_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
_TYPES = {"int_type": "an integer", "float_type": "a number", "bool_type": "true or false", "string_type": "a string",
          "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping", "model_attributes_type":
          "a mapping", "finite_number": "a finite number", "int_from_float": "an integer"}


def _what(err: Mapping[str, Any]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "missing":
        return "is missing"
    if kind == "extra_forbidden":
        return "is an unknown key"
    if kind in _BOUNDS:
        return f"must be {_BOUNDS[kind]} {next(iter(ctx.values()))}"
    if kind == "multiple_of":
        return "must be even (each deal is played from both seats)" if ctx["multiple_of"] == 2 \
            else f"must be a multiple of {ctx['multiple_of']}"
    if kind == "literal_error":
        return "must be one of " + ctx["expected"].replace("'", "").replace(" or ", ", ")
    if kind in _TYPES:
        return f"must be {_TYPES[kind]}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    return err["msg"][0].lower() + err["msg"][1:]


def message(err: Mapping[str, Any], source: str, prefix: str = "") -> str:
    """One pydantic error as the ``ParamError`` line: the dotted key, what is wrong, the value given."""
    loc = [str(x) for x in err["loc"] if not isinstance(x, int)]  # a list's index names no key
    key = ".".join(filter(None, [prefix, *loc])) or "(top level)"
    what = _what(err)
    whole = not what.startswith(("must", "is "))  # a model's own check names its field first: "width must be"
    if whole:
        key, what = f"{key}.{what.split(' ', 1)[0]}", what.split(" ", 1)[1]
    if whole or err["type"] in ("missing", "extra_forbidden") or "got " in what:
        return f"{source}: {key} {what}"
    sep = "; got" if err["type"] == "literal_error" else ", got"
    return f"{source}: {key} {what}{sep} {err['input']!r}"


def validated(model: type[Section], doc: Any, source: str = "params.yaml", prefix: str = "") -> Any:
    """``model`` from ``doc``; the first problem as a ``ParamError`` naming ``prefix.<key>``."""
    try:
        return model.model_validate(doc)
    except ValidationError as e:
        raise ParamError(message(e.errors()[0], source, prefix)) from None


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``top`` on top, mappings merged key by key."""
    out = dict(base)
    for k, v in top.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
    return out


def overridden(section: Section, updates: Mapping[str, Any], prefix: str, source: str = "params.yaml") -> Any:
    """``section`` with the nested ``updates`` on top, validated again (a bad update names ``prefix.<key>``)."""
    return validated(type(section), deep_merge(section.model_dump(), updates), source, prefix)


def dotted(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping as ``{"a.b.c": leaf}`` (MLflow params, ``dvc exp run -S`` keys)."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        out.update(dotted(v, key) if isinstance(v, Mapping) and v else {key: v})
    return out


def nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``: dotted keys as the nested mapping they name."""
    out: dict[str, Any] = {}
    for key, v in flat.items():
        *parents, leaf = key.split(".")
        d = out
        for p in parents:
            d = d.setdefault(p, {})
        d[leaf] = v
    return out
