"""MkDocs hooks (``mkdocs.yml`` ``hooks:``): the references and the results, generated at build time.

A page holds its text and a marker; the build replaces the marker with what is generated from the code or from
the committed ``results/``, so no page can drift from them:

- ``<!-- cli-reference -->`` (``docs/cli.md``): every ``koikoi`` command's ``--help`` text, from the argparse
  parsers (``pipeline/cli.py`` and ``pipeline/commands/``);
- ``<!-- params-reference -->`` (``docs/params.md``): every ``params.yaml`` key, from the pydantic models of
  ``pipeline/params/`` (the field's description, type and range, Optuna range) and its value in ``params.yaml``;
- ``<!-- results:NAME -->`` (the product pages): the last ``make repro``'s figures (``RESULTS``).

The README is not a page of the site: ``make readme`` (and ``make repro`` after ``dvc repro``) runs this file
(``python -m docs.hooks``), which rewrites the results table between ``README_BEGIN`` and ``README_END`` in
``README.md``; ``tests/setup/test_docs.py`` fails when the committed README differs from it.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
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


# ---- results ----------------------------------------------------------------------------------------
# Read from the committed results/ as any version of the stages wrote them: a missing file or key is said in the
# table, never an error, so that the site builds and the README regenerates before the first `make repro`.

README_BEGIN = "<!-- results-table: generated from results/ by `make readme` (docs/hooks.py); do not edit -->"
README_END = "<!-- /results-table -->"
RESULTS_MARKER = re.compile(r"<!-- results:([a-z]+) -->")
MISSING = "not in `results/`: run `make repro`"
AGENTS = {"rl_wp": "RL-WP", "rl_point": "RL-Point", "sl": "SL", "heuristic": "Heuristic", "random": "Random",
          "rl_phase1_wp": "RL-WP phase 1", "rl_phase1_point": "RL-Point phase 1"}


def _json(root: Path, rel: str) -> dict:
    path = root / "results" / rel
    return json.loads(path.read_text()) if path.is_file() else {}


def _ci(d: dict) -> tuple[float, float] | None:
    """A figure's 95% interval as any stage writes it: ``ci95: [low, high]``, ``ci95_low``/``ci95_high`` or
    ``ci_low``/``ci_high`` (a curve row)."""
    for lo, hi in (("ci95_low", "ci95_high"), ("ci_low", "ci_high")):
        if lo in d and hi in d:
            return float(d[lo]), float(d[hi])
    ci = d.get("ci95")
    return (float(ci[0]), float(ci[1])) if isinstance(ci, list | tuple) and len(ci) == 2 else None


def _figure(value: float | None, ci: tuple[float, float] | None = None, bold: bool = False) -> str:
    """``0.577 [0.547, 0.607]``."""
    if value is None:
        return MISSING
    text = f"**{value:.3f}**" if bold else f"{value:.3f}"
    return text + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _rate(d: dict | None, bold: bool = False) -> str:
    d = d or {}
    return _figure(d.get("win_rate"), _ci(d), bold)


def _games(run: dict | None) -> str:
    """How a duel ended: ``H1 after 672 games`` (sequential) or ``500 games``."""
    run = run or {}
    if "games" not in run:
        return ""
    sprt = run.get("sprt") or {}
    decided = f"{sprt['decision']} after " if sprt.get("decision") in ("H0", "H1") else ""
    return f"{decided}{run['games']:,} games"


def _accuracy(acc: float | None, n: int | None) -> str:
    """An accuracy over ``n`` decisions with its 95% binomial (normal) interval."""
    if acc is None or not n:
        return _figure(acc)
    half = 1.96 * math.sqrt(acc * (1 - acc) / n)
    return f"{_figure(acc, (acc - half, acc + half))} ({n:,})"


def _agent(key: str) -> str:
    """A duels key's agent by name: ``search_rl_wp`` -> ``RL-WP + search``."""
    if key.startswith("search_"):
        return f"{_agent(key.removeprefix('search_').split('__')[0])} + search"
    return AGENTS.get(key, key)


def _phase_label(root: Path, variant: str) -> str:
    """``phase 2`` where the shipped model trained in phase 2, ``phase 1`` where phase 2 ran no loop."""
    loops = _json(root, f"rl/{variant}/run.json").get("loops")
    return "phase 1" if loops == 0 else "phase 2"


def repro_time(root: Path) -> tuple[float, int, list[str]] | None:
    """The stages' seconds summed over their ``run.json`` (``stages.run_stage``), how many recorded one, and the
    CPUs they name; None before any stage recorded its time."""
    runs = [json.loads(p.read_text()) for p in sorted((root / "results").rglob("run.json"))
            if "tune" not in p.relative_to(root / "results").parts]
    timed = [r for r in runs if isinstance(r.get("seconds"), int | float)]
    if not timed:
        return None
    return sum(r["seconds"] for r in timed), len(timed), sorted({str(r.get("cpu", "an unnamed CPU")) for r in timed})


def readme_rows(root: Path) -> list[tuple[str, str, str]]:
    """The README's results: (what, this run's figure, the paper's)."""
    metrics, runs = _json(root, "duels/metrics.json"), _json(root, "duels/run.json")
    champ = _json(root, "duels/champion.json")
    conf = champ.get("confirmation") or champ
    if champ.get("spec"):
        points = f", {conf.get('point_diff', champ.get('point_diff', 0)):+.2f} points a game"
        champion = (f"**The champion**, `{champ['spec']}`, against SL on fresh deals ({conf.get('games', 0):,} "
                    "games)", _rate(conf, bold=True) + points)
    else:
        champion = ("**The champion** against SL", f"none: {champ['reason']}" if champ.get("reason") else MISSING)
    rows = [(*champion, "0.636 (its strongest, RL-WP)")]
    for variant, name, paper in (("wp", "RL-WP", "0.636 (10 million games)"), ("point", "RL-Point", "0.616")):
        key = f"rl_{variant}_vs_sl"
        games = _games(runs.get(key))
        rows.append((f"{name} ({_phase_label(root, variant)}) against SL", _rate(metrics.get(key), bold=True)
                     + (f", {games}" if games else ""), paper))
    sl, sl_run = _json(root, "sl/metrics.json"), _json(root, "sl/run.json")
    held_out = f" ({sl_run['val_games']} games)" if "val_games" in sl_run else ""
    rows.append((f"SL's agreement with human moves, on the games `sl_train` holds out{held_out}",
                 _accuracy(sl.get("val", {}).get("acc"), sl_run.get("samples", {}).get("val")),
                 "0.759 (5-fold CV over 200 games)"))
    key = "rl_wp_vs_rl_phase1_wp"
    games = _games(runs.get(key))
    rows.append(("RL-WP after phase 2 against its phase-1 network, head to head", _rate(metrics.get(key))
                 + (f", {games}" if games else ""), "-"))
    timing = repro_time(root)
    if timing is None:
        time_text = "not recorded in `results/` (the stages record it from this version on)"
    else:
        seconds, stages, cpus = timing
        time_text = f"**{seconds / 60:.1f} minutes** on {' / '.join(cpus)} ({stages} stages' `run.json`)"
    rows.append(("`make repro` from empty outputs: the stages' time", time_text, "-"))
    return rows


def readme_table(root: Path) -> str:
    """The README's results table, markers included."""
    lines = [README_BEGIN, "", "| result | this `make repro` [95% interval] | the paper |",
             "|---|---|---|", *(f"| {a} | {b} | {c} |" for a, b, c in readme_rows(root)), "", README_END]
    return "\n".join(lines)


def update_readme(readme: str, root: Path) -> str:
    """``readme`` with its results table generated again from ``root/results``."""
    if README_BEGIN not in readme or README_END not in readme:
        raise ValueError(f"README.md: the markers {README_BEGIN} and {README_END} are missing (the table goes "
                         "between them)")
    head, rest = readme.split(README_BEGIN, 1)
    return head + readme_table(root) + rest.split(README_END, 1)[1]


def _table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *("| " + " | ".join(r) + " |" for r in rows)])


def sl_results(root: Path) -> str:
    m, run = _json(root, "sl/metrics.json"), _json(root, "sl/run.json")
    if not m:
        return MISSING
    val, n = m.get("val", {}), run.get("samples", {})
    cells = [_accuracy(val.get(f"acc_{d}"), n.get(f"val_{d}")) for d in ("discard", "pick", "koikoi")]
    rows = [["paper, Table I (5-fold CV, 200 games)", "0.740", "0.903", "0.802", "0.759"],
            [f"`sl_train`'s held-out games ({run.get('val_games', '?')})", *cells,
             _accuracy(val.get("acc"), n.get("val"))]]
    timing = f" in {run['seconds'] / 60:.1f} minutes on {run['cpu']}" if "seconds" in run else ""
    return (_table(["accuracy [95%] (decisions)", "discard", "pick", "koi-koi", "overall"], rows)
            + f"\n\nBest epoch {m.get('best_epoch', '?')} of {m.get('epochs', '?')}{timing}.")


def rl_results(root: Path) -> str:
    metrics, runs = _json(root, "duels/metrics.json"), _json(root, "duels/run.json")
    rows = []
    for variant, name in (("wp", "RL-WP"), ("point", "RL-Point")):
        for phase, folder in ((1, "rl_phase1"), (2, "rl")):
            m, run = _json(root, f"{folder}/{variant}/metrics.json"), _json(root, f"{folder}/{variant}/run.json")
            if phase == 2 and run.get("loops") == 0:
                continue  # phase 1's model shipped as it is
            duel = f"rl_{variant}_vs_sl" if phase == 2 else ""
            rows.append([f"{name} phase {phase}", f"{m.get('global_games', 0):,}" if m else "-",
                         f"{m.get('train_seconds', 0) / 60:.1f}" if m else "-",
                         _rate(m) + (f" ({run['eval_games']:,})" if "eval_games" in run else ""),
                         (_rate(metrics.get(duel)) + f", {_games(runs.get(duel))}") if duel in metrics else ""])
    out = [_table(["model", "games trained", "minutes of training", "vs SL, phase's final evaluation (games)",
                   "vs SL, `duels` stage"], rows)]
    for variant, name in (("wp", "RL-WP"), ("point", "RL-Point")):
        curve = root / "results/rl" / variant / "curve.csv"
        if not curve.is_file() or _json(root, f"rl/{variant}/run.json").get("loops") == 0:
            continue
        start = len(list(csv.DictReader((root / "results/rl_phase1" / variant / "curve.csv").open()))) \
            if (root / "results/rl_phase1" / variant / "curve.csv").is_file() else 0
        loops = list(csv.DictReader(curve.open()))[max(start - 1, 0):]
        have = set(loops[0]) if loops else set()
        rows = [[r["loop"], f"{int(r['games']):,}", f"{float(r['seconds']) / 60:.1f}" if "seconds" in have else "-",
                 _rate({k: float(v) for k, v in r.items() if v and k in ("win_rate", "ci_low", "ci_high")}),
                 _figure(float(r["vs_phase1"]), (float(r["vs_phase1_low"]), float(r["vs_phase1_high"])))
                 if r.get("vs_phase1") else "-", r["eval_games"]] for r in loops]
        out.append(f"{name}'s curve from phase 1's last loop (`results/rl/{variant}/curve.csv`):\n\n"
                   + _table(["loop", "games", "CPU minutes", "vs SL", "vs phase 1", "games each"], rows))
    return "\n\n".join(out)


def duels_results(root: Path) -> str:
    champ, table = _json(root, "duels/champion.json"), root / "results/duels/table.md"
    if not champ or not table.is_file():
        return MISSING
    rows = [[f"`{c['spec']}`", f"`{c['against']}`", _rate(c), _games(c)] for c in champ.get("candidates", [])]
    ladder = _table(["candidate", "against the best so far", "win rate [95%]", "games"], rows)
    conf = champ.get("confirmation") or champ
    verdict = (f"The champion: `{champ['spec']}`, {_rate(conf, bold=True)} against SL over {conf.get('games', 0):,} "
               "games on fresh deals." if champ.get("spec") else f"No champion: {champ.get('reason', '?')}.")
    body = table.read_text().split("\n", 1)[1]  # its title is this section's
    return f"{ladder}\n\n{verdict}\n\n" + re.sub(r"^## ", "### ", body, flags=re.M)


def search_results(root: Path) -> str:
    metrics, runs = _json(root, "duels/metrics.json"), _json(root, "duels/run.json")
    rows = [[_agent(k.split("_vs_")[0]), _agent(k.split("_vs_")[1]), _rate(v), _games(runs.get(k))]
            for k, v in metrics.items() if "search_" in k]
    return _table(["A", "B", "A's win rate [95%]", "games"], rows) if rows else MISSING


RESULTS = {"sl": sl_results, "rl": rl_results, "duels": duels_results, "search": search_results}


# ---- the hook ---------------------------------------------------------------------------------------

def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    from mkdocs.exceptions import PluginError

    root = Path(config.config_file_path).parent
    for name in RESULTS_MARKER.findall(markdown):
        if name not in RESULTS:
            raise PluginError(f"docs/{page.file.src_uri}: no results named {name!r}; use one of {', '.join(RESULTS)}")
    markdown = RESULTS_MARKER.sub(lambda m: RESULTS[m.group(1)](root), markdown)
    generators = {"cli.md": (CLI_MARKER, cli_reference),
                  "params.md": (PARAMS_MARKER, lambda: params_reference(root / "params.yaml"))}
    if page.file.src_uri not in generators:
        return markdown
    marker, generate = generators[page.file.src_uri]
    if marker not in markdown:
        raise PluginError(f"docs/{page.file.src_uri}: the marker {marker} is missing (the generated reference "
                          f"goes there)")
    return markdown.replace(marker, generate())


if __name__ == "__main__":  # make readme: python -m docs.hooks
    root = Path(__file__).resolve().parents[1]
    readme = root / "README.md"
    try:
        readme.write_text(update_readme(readme.read_text(), root))
    except ValueError as e:
        sys.exit(f"make readme: error: {e}")
    print(f"make readme: {readme.name}'s results table generated from results/")
