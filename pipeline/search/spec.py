"""The ``search:<model>?option=value&...`` agent spec, parsed and checked without loading anything.

``search:models/rl/wp?k=4&deals=32`` is the model in ``models/rl/wp`` searching at every decision type (discard,
pick, koi-koi) among its 4 likeliest actions on 32 deals, its playouts played by the rollout policy phase 2 left
beside it (``models/rl/wp/rollout``; ``rollout=DIR`` names another, ``rollout=self`` lets the network play them).
The options and their defaults are the fields of ``SearchOptions``; a bad option is a one-line ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from urllib.parse import parse_qsl, quote

from ..agents.specs import BUILTIN, PREFIX, is_search, split_spec
from ..engine import DECISION_NAMES
from ..net.model_dir import MODEL_FILE

WINPROB = "models/winprob/winprob.json"
SELF = "self"  # ``rollout=self``: the playouts are played by the searched network itself
OWN = "own"  # ``rollout=own``: the rollout policy kept beside the model (``<model>/rollout``), else ``self``
OWN_DIR = "rollout"  # where a model directory keeps the rollout policy distilled from it (phase 2 writes it)


@dataclass(frozen=True)
class SearchOptions:
    """How a search agent searches (the spec's query options; these defaults where one is not given)."""

    deals: int = 32  # deals drawn per searched decision, shared by every candidate; 0: no search (the network's move)
    k: int = 4  # candidates: the network's k likeliest legal actions; 0: every legal action
    z: float = 2.0  # standard errors of paired gain that one nat of the network's log-prior is worth (T = z * SE)
    gap: float = 1.5  # nats: an action further below the likeliest is not a candidate (its gain would need > gap*z SE)
    rollout: str = OWN  # who plays the playouts: own (the model's rollout/, else self) | self | a rollout model dir
    decisions: tuple[int, ...] = (0, 1, 2)  # decision types searched (discard 0, pick 1, koikoi 2)
    reward: str = "wp"  # wp (the win-probability table's) | point
    winprob: str = WINPROB  # the win-probability table of the wp reward

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
            elif isinstance(v, float):
                v = f"{v:g}"
            parts.append(f"{f.name}={v}")
        return "&".join(parts)


OPTIONS = tuple(f.name for f in fields(SearchOptions))


def rollout_path(model: str, rollout: str) -> str | None:
    """The rollout policy directory a searcher of ``model`` with option ``rollout=`` plays out with (None: the
    searched network plays its own playouts)."""
    if rollout == SELF:
        return None
    if rollout == OWN:
        own = Path(model) / OWN_DIR
        return str(own) if (own / MODEL_FILE).is_file() else None
    return rollout


def read_paths(spec: str) -> dict[str, str]:
    """Every file or directory the agent ``spec`` reads, by what names it: ``model`` (a model directory, or a
    searcher's) and each option of ``PATH_OPTIONS`` a searcher reads (``rollout`` by ``rollout_path`` unless none,
    ``winprob`` under the wp reward); a built-in agent none. Whatever keeps or keys an agent (the champion's logged
    model and its version, a tune study) takes them all from here."""
    if not is_search(spec):
        return {} if spec in BUILTIN else {"model": spec}
    model, options = parse_search(spec)
    read = {n: getattr(options, n) for n in PATH_OPTIONS} | {"rollout": rollout_path(model, options.rollout)}
    read["winprob"] = read["winprob"] if options.reward == "wp" else None
    return {"model": model} | {n: p for n, p in read.items() if p is not None}


def with_paths(spec: str, paths: Mapping[str, str]) -> str:
    """``spec`` reading ``paths`` (``read_paths``' names: ``model``, an option) in place of its own, its other
    options as they are."""
    model, query = split_spec(spec)
    segs = [s for s in query.split("&") if s and s.partition("=")[0] not in paths]
    segs += [f"{n}={quote(str(p), safe='/')}" for n, p in paths.items() if n != "model"]
    return f"{PREFIX}{paths.get('model', model)}" + (f"?{'&'.join(segs)}" if segs else "")


def plays_out_with_a_policy(spec: str) -> bool:
    """Whether agent ``spec`` is a searcher whose playouts a rollout policy model plays."""
    return "rollout" in read_paths(spec)


def play_device_of(specs: Sequence[str], device: str, auto: bool) -> str:
    """Where a duel of ``specs`` plays, given the resolved ``device`` of a device option (``auto``: it said auto):
    on the CPUs, where auto chose the GPU but a searcher plays out with a rollout policy, whose many small forward
    passes the workers' own cores serve several times faster than one GPU they all share (the rule of
    ``rl.devices``, measured there)."""
    if auto and device == "cuda" and any(plays_out_with_a_policy(s) for s in specs):
        return "cpu"
    return device


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
    return SearchOptions(**values)


def _int(low: int) -> Callable[[str], int]:
    def parse(v: str) -> int:
        try:
            n = int(v)
        except ValueError:
            raise ValueError(f"must be an integer >= {low}") from None
        if n < low:
            raise ValueError(f"must be an integer >= {low}")
        return n
    return parse


def _k(v: str) -> int:
    n = _int(0)(v)
    if n == 1:
        raise ValueError("must be 0 (every legal action) or >= 2 (one candidate leaves nothing to search)")
    return n


def _decisions(v: str) -> tuple[int, ...]:
    names = [x.strip() for x in v.split(",") if x.strip()]
    bad = [x for x in names if x not in DECISION_NAMES]
    if not names or bad:
        raise ValueError(f"must be a comma-separated list of {', '.join(DECISION_NAMES)}")
    return tuple(sorted({DECISION_NAMES.index(x) for x in names}))


def _positive(v: str) -> float:
    try:
        x = float(v)
    except ValueError:
        raise ValueError("must be a number > 0") from None
    if not 0.0 < x < float("inf"):  # NaN is refused too
        raise ValueError("must be a number > 0")
    return x


def _reward(v: str) -> str:
    if v not in ("wp", "point"):
        raise ValueError("must be wp or point")
    return v


def _path(v: str) -> str:
    if not v:
        raise ValueError("must be a file path")
    return v


_PARSE = {"deals": _int(0), "k": _k, "z": _positive, "gap": _positive, "rollout": _path, "decisions": _decisions,
          "reward": _reward, "winprob": _path}
# The options that name a file or directory (parsed by ``_path``): a new one is read and kept like these.
PATH_OPTIONS = tuple(name for name, parse in _PARSE.items() if parse is _path)
