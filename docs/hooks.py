"""MkDocs hooks (``mkdocs.yml`` ``hooks:``): the CLI and params reference pages, generated at build time.

``docs/cli.md`` and ``docs/params.md`` hold their introduction and a marker; the build replaces the
marker with the reference generated from the code itself, so neither page can drift from it:

- ``<!-- cli-reference -->``: every ``koikoi`` command's ``--help`` text, from the argparse parsers
  (``pipeline/cli.py`` and ``pipeline/commands/``);
- ``<!-- params-reference -->``: every ``params.yaml`` key, from the pydantic models of
  ``pipeline/params/`` (the field's description, type and range, Optuna range) and its value in
  ``params.yaml``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import yaml

CLI_MARKER = "<!-- cli-reference -->"
PARAMS_MARKER = "<!-- params-reference -->"
HELP_COLUMNS = "100"  # argparse wraps help text to $COLUMNS: fixed, so the page does not depend on the terminal


# ---- CLI ------------------------------------------------------------------------------------------

def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``(name, one-line help, parser)`` of each subcommand of ``parser``, in the order of ``--help``."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            out += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return out


def _help_text(parser: argparse.ArgumentParser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        return parser.format_help().rstrip()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _cli_section(parser: argparse.ArgumentParser, summary: str, level: int) -> list[str]:
    lines = [f"{'#' * level} `{parser.prog}`", ""]
    if summary:
        lines += [summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else "."), ""]
    lines += ["```text", _help_text(parser), "```", ""]
    for _, sub_summary, sub in _subcommands(parser):
        lines += _cli_section(sub, sub_summary, min(level + 1, 4))
    return lines


def cli_reference() -> str:
    """Markdown: ``koikoi --help``, then each command's ``--help`` (nested commands under it)."""
    from pipeline.cli import build_parser

    parser = build_parser()
    lines = ["```text", _help_text(parser), "```", ""]
    for _, summary, sub in _subcommands(parser):
        lines += _cli_section(sub, summary, 2)
    return "\n".join(lines)


# ---- params -----------------------------------------------------------------------------------------

def _value(v: Any) -> str:
    """A params.yaml value as YAML flow text."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v if v else '""'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _ref(schema: dict[str, Any]) -> str | None:
    """The nested model a property names (``$ref``, or ``$ref`` or null), else None."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    refs = [s["$ref"] for s in schema.get("anyOf", []) if "$ref" in s]
    return refs[0].rsplit("/", 1)[-1] if refs else None


def _kind(s: dict[str, Any]) -> str:
    """What a property accepts, in words, from its JSON schema."""
    if "anyOf" in s:
        return " or ".join(_kind(x) for x in s["anyOf"])
    if "$ref" in s:
        return "mapping"
    if "enum" in s:
        return "one of " + ", ".join(f"`{_value(x)}`" for x in s["enum"])
    if "const" in s:
        return f"`{_value(s['const'])}`"
    t = s.get("type")
    if t in ("integer", "number"):
        bounds = [f"{op} {s[k]}" for k, op in (("minimum", ">="), ("exclusiveMinimum", ">"),
                                               ("maximum", "<="), ("exclusiveMaximum", "<")) if k in s]
        word = "integer" if t == "integer" else "number"
        text = f"{word} {', '.join(bounds)}" if bounds else word
        return text + (f", a multiple of {s['multipleOf']}" if "multipleOf" in s else "")
    if t == "boolean":
        return "`true` or `false`"
    if t == "string":
        return "non-empty string" if s.get("minLength") else "string"
    if t == "array":
        text = "list of " + _kind(s.get("items", {})).replace("one of ", "")
        return text + (f" (at least {s['minItems']})" if "minItems" in s else "")
    if t == "object":
        return "mapping"
    if t == "null":
        return "`null`"
    return "any value"


def _tune(spec: Any) -> str:
    if isinstance(spec, dict):
        return f"{spec['low']} to {spec['high']}" + (", log scale" if spec.get("log") else "")
    return _value(spec)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _section(defs: dict[str, Any], model: str, key: str, doc: Any, level: int, note: str = "",
             held_by: dict[str, Any] | None = None) -> list[str]:
    """A table of ``model``'s leaf fields, then a subsection per nested model, under heading ``key``; ``held_by``:
    the property holding it, whose ``tune`` may give its leaves their ranges."""
    from pipeline.params.base import leaf_tune

    schema = defs[model]
    lines = [f"{'#' * min(level, 4)} `{key}`", ""]
    if note:
        lines += [note[0].upper() + note[1:] + ".", ""]
    rows, nested = [], []
    for name, prop in schema["properties"].items():
        value = doc.get(name) if isinstance(doc, dict) else None
        ref = _ref(prop)
        if ref is not None:  # a nested section (one that may be null too): a subsection of its own
            nested.append((name, ref, value or {}, prop))
            continue
        if "tune" not in prop:  # a shared section's leaf: its range is the holding field's
            prop = {**prop, **leaf_tune(held_by, name)}
        desc = prop.get("description", "")
        if "tune" in prop:
            desc += f". Tuned over {_tune(prop['tune'])}"
            if "algorithms" in prop:
                desc += f" (when `rl.algorithm` is {' or '.join(prop['algorithms'])})"
        rows.append(f"| `{name}` | `{_cell(_value(value))}` | {_cell(_kind(prop))} | {_cell(desc)} |")
    if rows:
        lines += ["| key | value in params.yaml | accepts | description |", "|---|---|---|---|", *rows, ""]
    for name, ref, value, prop in nested:
        lines += _section(defs, ref, f"{key}.{name}", value, level + 1, prop.get("description", ""), prop)
    return lines


def params_reference(params_file: Path) -> str:
    """Markdown: one section per params.yaml section, one row per key, from the pydantic models."""
    from pipeline.params import Params

    schema = Params.model_json_schema()
    doc = yaml.safe_load(params_file.read_text())
    lines: list[str] = []
    for section, prop in schema["properties"].items():
        lines += _section(schema["$defs"], _ref(prop), section, doc.get(section, {}), 2, prop.get("description", ""))
    return "\n".join(lines)


# ---- the hook ---------------------------------------------------------------------------------------

def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    from mkdocs.exceptions import PluginError

    generators = {"cli.md": (CLI_MARKER, cli_reference),
                  "params.md": (PARAMS_MARKER, lambda: params_reference(Path(config.config_file_path).parent
                                                                        / "params.yaml"))}
    if page.file.src_uri not in generators:
        return markdown
    marker, generate = generators[page.file.src_uri]
    if marker not in markdown:
        raise PluginError(f"docs/{page.file.src_uri}: the marker {marker} is missing (the generated reference "
                          f"goes there)")
    return markdown.replace(marker, generate())
