"""Merge tuned values into params.yaml, editing only the lines of the keys that change.

Comments, blank lines, ordering and every other section survive untouched. Updates are nested
mappings (``{"rl": {"epsilon": {"start": 0.3}}}``); a leaf key missing from an existing mapping is
appended at its end, a missing mapping is an error. The edited text is parsed back and compared
with the intended result; anything that does not round-trip is refused instead of written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml


def yaml_scalar(value: Any) -> str:
    """``value`` as a one-line YAML scalar (floats keep a dot so YAML 1.1 reads them back as floats)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000)
    return text.removesuffix("\n...\n").strip()


def leaves(updates: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, value)`` for every non-mapping value of a nested mapping."""
    for k, v in updates.items():
        if isinstance(v, Mapping):
            yield from leaves(v, (*prefix, str(k)))
        else:
            yield (*prefix, str(k)), v


def _content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _block(lines: list[str], start: int, end: int, indent: str, key: str) -> tuple[int, int] | None:
    """The lines of the mapping under ``indent + key:`` within [start, end): (header index, end of block)."""
    head = re.compile(rf"^{re.escape(indent)}{re.escape(key)}\s*:\s*(#.*)?$")
    for i in range(start, end):
        if head.match(lines[i].rstrip("\n")):
            stop = i + 1
            for j in range(i + 1, end):
                if _content(lines[j]):
                    if len(_indent(lines[j])) <= len(indent):
                        break
                    stop = j + 1
            return i, stop
    return None


def _set(lines: list[str], path: tuple[str, ...], value: Any) -> None:
    start, end, indent = 0, len(lines), ""
    for depth, key in enumerate(path[:-1]):
        span = _block(lines, start, end, indent, key)
        if span is None:
            raise ValueError(f"params.yaml has no mapping {'.'.join(path[:depth + 1])}")
        start, end = span[0] + 1, span[1]
        inner = next((_indent(lines[j]) for j in range(start, end) if _content(lines[j])), None)
        indent = inner if inner is not None and len(inner) > len(indent) else indent + "  "
    leaf = re.compile(rf"^{re.escape(indent)}{re.escape(path[-1])}\s*:\s*[^#\s][^#]*?(\s+#.*)?$")
    for j in range(start, end):
        m = leaf.match(lines[j].rstrip("\n"))
        if m:
            new = f"{indent}{path[-1]}: {yaml_scalar(value)}"
            if m.group(1):  # keep the comment in its column when the new value leaves room
                column = m.start(1) + len(m.group(1)) - len(m.group(1).lstrip())
                new = new.ljust(column - 1) + " " + m.group(1).lstrip()
            lines[j] = new + "\n"
            return
    lines.insert(end, f"{indent}{path[-1]}: {yaml_scalar(value)}\n")


def _merged(doc: Any, updates: Mapping[str, Any]) -> Any:
    out = dict(doc) if isinstance(doc, dict) else {}
    for k, v in updates.items():
        out[k] = _merged(out.get(k), v) if isinstance(v, Mapping) else v
    return out


def merge_text(text: str, updates: Mapping[str, Any]) -> str:
    """``text`` (params.yaml) with the nested ``updates`` applied line by line; ``ValueError`` if impossible."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for path, value in leaves(updates):
        _set(lines, path, value)
    out = "".join(lines)
    if yaml.safe_load(out) != _merged(yaml.safe_load(text) or {}, updates):
        raise ValueError("params.yaml: editing the lines in place would not give the merged params "
                         "(flow-style or multi-line values?); merge by hand")
    return out


def apply_params(params_path: str | Path, updates: Mapping[str, Any]) -> list[str]:
    """Merge ``updates`` into the file; returns the dotted names of the values that changed."""
    path = Path(params_path)
    text = path.read_text()
    old = yaml.safe_load(text) or {}
    changed = []
    for keys, value in leaves(updates):
        cur: Any = old
        for k in keys:
            cur = cur.get(k, KeyError) if isinstance(cur, dict) else KeyError
        if cur is KeyError or cur != value or type(cur) is not type(value):
            changed.append(".".join(keys))
    new = merge_text(text, updates)
    if new != text:
        path.write_text(new)
    return changed


def exp_run_line(updates: Mapping[str, Any]) -> str:
    """The ``dvc exp run`` command that tries these values without editing params.yaml."""
    sets = " ".join(f"-S '{'.'.join(k)}={yaml_scalar(v)}'" for k, v in leaves(updates))
    return f"dvc exp run {sets}"
