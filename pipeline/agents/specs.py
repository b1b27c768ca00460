"""What an agent spec names, without loading it: ``random``, ``heuristic``, a model directory or ``search:...``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

BUILTIN = ("random", "heuristic")
PREFIX = "search:"
SEARCH = "search_"  # the key prefix of a search agent over a model (``search:models/rl/wp?...`` -> ``search_rl_wp``)
OPTIONS = "__"  # between a searcher's model and its options in a key that keeps them (``duel_keys``)


def is_search(spec: str) -> bool:
    return spec.startswith(PREFIX)


def is_model_spec(spec: str) -> bool:
    """Whether ``spec`` names a model directory itself (not a built-in agent, not a searcher over a model)."""
    return spec not in BUILTIN and not is_search(spec)


def model_of(spec: str) -> str:
    """The model directory a ``search:`` spec searches with; any other spec as it is (no checks)."""
    return split_spec(spec)[0] if is_search(spec) else spec


def split_spec(spec: str) -> tuple[str, str]:
    """``search:DIR?QUERY`` -> ``(DIR, QUERY)`` (no checks)."""
    model, _, query = spec[len(PREFIX):].partition("?")
    return model, query


def key_name(spec: str) -> str:
    """A metrics key for an agent spec: ``models/rl/wp`` -> ``rl_wp``; a searcher's is ``search_`` + its model's."""
    if is_search(spec):
        return SEARCH + key_name(model_of(spec))
    p = spec.rstrip("/")
    if p.startswith("models/"):
        p = p[len("models/"):]
    elif Path(p).is_absolute():
        p = Path(p).name
    return re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_").lower() or "agent"


def duel_keys(specs: Iterable[str]) -> dict[str, str]:
    """Each distinct spec's ``key_name``; searchers over one model keep their options (``search_rl_wp__deals_8``)."""
    specs = list(dict.fromkeys(specs))
    plain = {s: key_name(s) for s in specs}
    shared = {k for k in plain.values() if sum(v == k for v in plain.values()) > 1}
    return {s: _with_options(s) if is_search(s) and k in shared else k for s, k in plain.items()}


def _with_options(spec: str) -> str:
    query = re.sub(r"[^A-Za-z0-9]+", "_", split_spec(spec)[1]).strip("_").lower()
    return f"{key_name(spec)}{OPTIONS}{query}" if query else key_name(spec)
