"""Each param is described once, in its pydantic field: every field of every params model (nested ones too)
has a one-line description, and the params reference generated from the models (docs/params.md, by
docs/hooks.py) lists every params.yaml key with its value and that description."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import yaml
from pydantic import BaseModel

from pipeline.params import Params, dotted, read_doc

ROOT = Path(__file__).resolve().parents[2]


def _models(model: type[BaseModel]) -> Iterator[tuple[str, type[BaseModel]]]:
    """``(dotted prefix, model)`` of ``model`` and of every model a field of it holds (``X | None`` too)."""
    yield "", model
    for name, field in model.model_fields.items():
        for t in (field.annotation, *get_args(field.annotation)):
            if isinstance(t, type) and issubclass(t, BaseModel):
                yield from ((f"{name}.{p}", m) for p, m in _models(t))


def fields() -> list[tuple[str, str | None]]:
    """``(dotted key, description)`` of every field of every params model."""
    return [(f"{prefix}{field.alias or name}", field.description)
            for prefix, model in _models(Params) for name, field in model.model_fields.items()]


def test_the_walk_reaches_the_nested_sections():
    keys = {k for k, _ in fields()}
    assert {"registry.register", "rl.branch.temperature.wp", "rl.expert.temperature.point",
            "duels.attention.turn", "tune.rl.variant", "winprob.inference"} <= keys
    assert len(keys) > 100


def test_every_params_field_has_a_one_line_description():
    missing = [k for k, d in fields() if not (d and d.strip())]
    assert not missing, f"fields without Field(description=...): {', '.join(missing)}"
    multiline = [k for k, d in fields() if "\n" in d]
    assert not multiline, f"descriptions over one line: {', '.join(multiline)}"


def test_params_reference_has_every_key_with_its_value_and_description():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.params_reference(ROOT / "params.yaml")
    described = dict(fields())
    rows = {}
    heading = ""
    for line in page.splitlines():
        if line.startswith("#"):
            heading = line.split("`")[1]
        elif line.startswith("| `"):
            key, value = re.findall(r"`([^`]*)`", line)[:2]
            rows[f"{heading}.{key}"] = (value, line)
    leaves = dotted(read_doc(ROOT / "params.yaml"))
    # the free mappings (a label -> path map, the search-space narrowing) are one row each
    expected = {k for k in leaves if not k.startswith("duels.rl_curves.")} | {"duels.rl_curves", "tune.space"}
    assert set(rows) == expected
    for key, (value, line) in rows.items():
        assert described[key] in line.replace("\\|", "|"), key
        if key in leaves:
            assert yaml.safe_load(value or '""') == leaves[key] or value == str(leaves[key]), key
