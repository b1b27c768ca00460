"""The ``search:<model>?option=value&...`` agent spec, parsed and checked without loading anything.

``search:models/rl/wp?deals=32&decisions=koikoi,discard`` is the model in ``models/rl/wp`` searching
at its koi-koi and discard decisions on 32 deals per action (docs/search.md lists the options). A bad
option is a ``ValueError`` of one line that names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from urllib.parse import parse_qsl

from ..agents.specs import split_spec
from ..engine import DECISION_NAMES

THINK_DEALS = 256  # the most deals per action under a time budget when ``deals`` is not given
WINPROB = "models/winprob/winprob.json"


@dataclass(frozen=True)
class SearchOptions:
    """How a search agent searches (the spec's query options; these defaults where one is not given)."""

    deals: int = 32  # deals per action (with ``think``: the most per action)
    decisions: tuple[int, ...] = (2,)  # decision types searched (discard 0, pick 1, koikoi 2)
    think: float | None = None  # seconds per searched decision: deals in waves while the budget lasts
    top: int = 0  # search only the model's ``top`` best actions; 0: every legal action
    margin: float = 1.0  # search only where the model's two best actions' probabilities differ by less
    reward: str = "wp"  # wp (the win-probability table's) | point
    winprob: str = WINPROB  # the win-probability table of the wp reward
    confidence: float = 0.0  # leave the model's choice only for a paired gain of more than this many standard errors

    def query(self) -> str:
        """The options that differ from the defaults, as a spec's query (``deals=8&decisions=koikoi``)."""
        default = SearchOptions()
        parts = []
        for f in fields(self):
            v = getattr(self, f.name)
            if v == getattr(default, f.name):
                continue
            if f.name == "decisions":
                v = ",".join(DECISION_NAMES[d] for d in v)
            elif f.name == "think":
                v = f"{v:g}s"
            parts.append(f"{f.name}={v}")
        return "&".join(parts)


OPTIONS = tuple(f.name for f in fields(SearchOptions))


def parse_search(spec: str) -> tuple[str, SearchOptions]:
    """The model directory and the options of a ``search:`` spec; ``ValueError`` naming a bad option."""
    model, query = split_spec(spec)
    if not model:
        raise ValueError(f"agent {spec!r}: a search agent needs a model directory, e.g. search:models/sl?deals=32")
    try:
        return model, parse_options(query)
    except ValueError as e:
        raise ValueError(f"agent {spec!r}: {e}") from None


def parse_options(query: str) -> SearchOptions:
    """``deals=32&decisions=koikoi,discard`` as options; ``ValueError`` (one line) naming a bad one."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ValueError(f"search options {query!r} must be name=value pairs joined by &") from None
    given: dict[str, str] = {}
    for name, value in pairs:
        if name not in OPTIONS:
            raise ValueError(f"unknown search option {name!r}; use {', '.join(OPTIONS)}")
        if name in given:
            raise ValueError(f"search option {name!r} given twice")
        given[name] = value
    values = {}
    for name, value in given.items():
        try:
            values[name] = _PARSE[name](value)
        except ValueError as e:
            raise ValueError(f"search option {name}={value!r}: {e}") from None
    if "think" in values and "deals" not in values:
        values["deals"] = THINK_DEALS
    return SearchOptions(**values)


def _int(low: int):
    def parse(v: str) -> int:
        try:
            n = int(v)
        except ValueError:
            raise ValueError(f"must be an integer >= {low}") from None
        if n < low:
            raise ValueError(f"must be an integer >= {low}")
        return n
    return parse


def _top(v: str) -> int:
    n = _int(0)(v)
    if n == 1:
        raise ValueError("must be 0 (every legal action) or >= 2 (one action leaves nothing to search)")
    return n


def _decisions(v: str) -> tuple[int, ...]:
    names = [x.strip() for x in v.split(",") if x.strip()]
    bad = [x for x in names if x not in DECISION_NAMES]
    if not names or bad:
        raise ValueError(f"must be a comma-separated list of {', '.join(DECISION_NAMES)}")
    return tuple(sorted({DECISION_NAMES.index(x) for x in names}))


def _think(v: str) -> float:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*", v)
    if not m or float(m.group(1)) <= 0:
        raise ValueError("must be a time > 0, e.g. 0.5s or 500ms")
    return float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)


def _number(inside: Callable[[float], bool], words: str) -> Callable[[str], float]:
    """A parser of a number in a range (``words`` says which; NaN is in none)."""
    def parse(v: str) -> float:
        try:
            x = float(v)
        except ValueError:
            raise ValueError(f"must be a number {words}") from None
        if not inside(x):
            raise ValueError(f"must be a number {words}")
        return x
    return parse


_fraction = _number(lambda x: 0.0 < x <= 1.0, "in (0, 1]")
_nonnegative = _number(lambda x: 0.0 <= x < float("inf"), ">= 0")


def _reward(v: str) -> str:
    if v not in ("wp", "point"):
        raise ValueError("must be wp or point")
    return v


def _path(v: str) -> str:
    if not v:
        raise ValueError("must be a file path")
    return v


_PARSE = {"deals": _int(1), "decisions": _decisions, "think": _think, "top": _top, "margin": _fraction,
          "reward": _reward, "winprob": _path, "confidence": _nonnegative}
