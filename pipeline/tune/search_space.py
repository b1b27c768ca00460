"""The ``search`` target's space: the options of a ``search:<model>?<options>`` spec that a trial samples.

By default ``k`` (a choice), ``deals`` and ``z`` (log ranges) and ``rollout`` (``self``, or the rollout model
directory ``tune.search.rollout`` too); ``tune.space.search`` may narrow or fix these, or name any other search
option (``gap``, a range too; ``decisions``, ``reward``, ``winprob``). Every value a space names is checked by
the spec's own parser (``pipeline.search.spec``) before any trial, so a trial never plays a spec the agent loader
would refuse; a bad entry is one ``ParamError`` line naming ``tune.space.search.<option>``. A trial's values become
a spec with ``trial_spec``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from ..params import ParamError
from ..search.spec import OPTIONS, OWN, PATH_OPTIONS, SELF, parse_options

DEFAULT: dict[str, Any] = {"k": [2, 3, 4, 6, 0], "deals": {"low": 8, "high": 64, "log": True},
                           "z": {"low": 0.5, "high": 4.0, "log": True}}
RANGED = {"k": int, "deals": int, "z": float, "gap": float}  # the options a range may sample, and their types
RANGE_KEYS = ("low", "high", "log", "step")


def text(value: Any) -> str:
    """An option's value as it is written in a spec (a float to 3 significant digits: what a trial plays)."""
    return format(value, ".3g") if isinstance(value, float) else str(value)


def _parsed(name: str, value: Any) -> Any:
    return getattr(parse_options(f"{name}={text(value)}"), name)


def _value(name: str, value: Any, where: str) -> Any:
    """``value`` of option ``name`` checked by the spec's parser (``where``: the entry, for messages)."""
    want = RANGED.get(name, str)
    ok = isinstance(value, int | float) if want is float else isinstance(value, want)
    if isinstance(value, bool) or not ok:
        kind = {int: "an integer", float: "a number", str: "a string"}[want]
        raise ParamError(f"{where} must be {kind}, got {value!r}")
    try:
        _parsed(name, value)
    except ValueError as e:
        raise ParamError(f"{where}: {e}") from None
    return float(value) if want is float else value


def _range(name: str, spec: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A range of option ``name`` checked: its keys, bounds, log and step; every value in it one the parser takes."""
    if name not in RANGED:
        raise ParamError(f"{where} is a range, but {name} takes a list of choices or one value, got {dict(spec)}")
    unknown = sorted(set(spec) - set(RANGE_KEYS))
    if unknown or not {"low", "high"} <= set(spec):
        raise ParamError(f"{where}: a range needs low and high (and may have log, step), got {dict(spec)}")
    out = {b: _value(name, spec[b], f"{where}.{b}") for b in ("low", "high")}
    if out["low"] > out["high"]:
        raise ParamError(f"{where}: low {out['low']} > high {out['high']}")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ParamError(f"{where}.log must be true or false, got {log!r}")
    if log and out["low"] <= 0:
        raise ParamError(f"{where}: a log range needs low > 0, got {out['low']}")
    if "step" in spec:
        step = spec["step"]
        kind = int | float if RANGED[name] is float else int
        if isinstance(step, bool) or not isinstance(step, kind) or not step > 0 or not math.isfinite(step):
            raise ParamError(f"{where}.step must be a positive {RANGED[name].__name__}, got {step!r}")
        if log:
            raise ParamError(f"{where}: a range has log or step, not both")
        out["step"] = float(step) if RANGED[name] is float else step
    if name == "k" and out["low"] <= 1 <= out["high"]:
        raise ParamError(f"{where}: a range from {out['low']} to {out['high']} takes in k=1 (one candidate leaves "
                         "nothing to search); list the values instead, e.g. [0, 2, 4]")
    return {**out, "log": log} if log else out


def _entry(name: str, spec: Any, source: str) -> Any:
    where = f"{source}: tune.space.search.{name}"
    if isinstance(spec, Mapping):
        return _range(name, spec, where)
    if isinstance(spec, list | tuple):
        if not spec:
            raise ParamError(f"{where} is an empty list of choices")
        return [_value(name, v, f"{where}[{i}]") for i, v in enumerate(spec)]
    return _value(name, spec, where)


def search_space(overrides: Mapping[str, Any] | None = None, rollout: str | None = None,
                 source: str = "params.yaml") -> dict[str, Any]:
    """The default space (``rollout``: a rollout model directory a trial may choose beside the model's own and
    ``self``) with ``overrides`` (``tune.space.search`` of ``source``) on top, every entry checked."""
    out: dict[str, Any] = {**DEFAULT, "rollout": [OWN, SELF] + ([rollout] if rollout and rollout not in (SELF, OWN)
                                                                else [])}
    for name, spec in (overrides or {}).items():
        if name not in OPTIONS:
            raise ParamError(f"{source}: tune.space.search.{name} names no search option; use {', '.join(OPTIONS)}")
        out[name] = spec
    return {name: _entry(name, spec, source) for name, spec in out.items()}


def trial_spec(model: str, options: str, values: Mapping[str, Any]) -> tuple[str, str]:
    """``(spec, query)`` of a trial: ``search:<model>?<query>``, the query every value of the trial (the space's, in
    its order) then the fixed ``options`` (``tune.search.options``)."""
    query = "&".join([*(f"{name}={text(v)}" for name, v in values.items()), *filter(None, [options])])
    parse_options(query)  # every entry was checked: a failure here is a bug, not bad input
    return f"search:{model}?{query}", query


def file_choices(model: str, options: str, space: Mapping[str, Any]) -> list[str]:
    """The searchers of a study over ``space`` that differ in the files they read: one per combination of the choices
    of the options that name or pick a file (``PATH_OPTIONS``, ``reward``), every other option at its first value
    (a choice's first, a range's low). Each is loaded before any trial, and their files key the study."""
    picks = [n for n in space if n in (*PATH_OPTIONS, "reward")]
    first = {n: _first(v) for n, v in space.items()}
    choices = [space[n] if isinstance(space[n], list) else [first[n]] for n in picks]
    return [trial_spec(model, options, first | dict(zip(picks, c, strict=True)))[0]
            for c in itertools.product(*choices)]


def _first(spec: Any) -> Any:
    """One value an entry of the space plays (a choice's first, a range's low, a fixed value itself)."""
    if isinstance(spec, Mapping):
        return spec["low"]
    return spec[0] if isinstance(spec, list) else spec


def _holds(name: str, spec: Any, value: Any) -> Any:
    """The entry of ``spec`` that plays ``value`` (a choice, or a value in a range), else None."""
    if isinstance(spec, Mapping):
        low, high, step = spec["low"], spec["high"], spec.get("step")
        inside = low <= value <= high and (step is None or math.isclose((value - low) / step,
                                                                        round((value - low) / step)))
        return value if inside else None
    return next((c for c in spec if _parsed(name, c) == value), None)


def first_trial(space: Mapping[str, Any], options: str) -> dict[str, Any] | None:
    """The values that play the knobs a study starts from (the options' defaults, with ``options`` on top), for the
    study's first trial; None when the space cannot play them."""
    base = parse_options(options)
    out = {}
    for name, spec in space.items():
        if not isinstance(spec, Mapping | list | tuple):
            continue  # fixed: nothing to sample
        value = getattr(base, name)
        held = _holds(name, spec, value)
        if held is None:
            return None
        out[name] = held
    return out

