"""Merge tuned values into params.yaml through a round-trip YAML parser (ruamel.yaml): comments, order and flow
style survive, and the merged file must pass the params models before it is written."""

import io
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML

from ..params import parse_params
from ..runtime import atomic


def yaml_scalar(value: Any) -> str:
    """``value`` as a one-line YAML scalar (floats keep a dot so YAML 1.1 reads them back as floats)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000)
    return text.removesuffix("\n...\n").strip()


def leaves(updates: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for k, v in updates.items():
        if isinstance(v, Mapping):
            yield from leaves(v, (*prefix, str(k)))
        else:
            yield (*prefix, str(k)), v


def _round_trip() -> YAML:
    rt = YAML()  # typ "rt": keeps comments, key order and each mapping's block or flow style
    rt.width = 10_000  # never fold a long line (a flow mapping and its comment stay on one line)
    rt.preserve_quotes = True  # records_dir: "" stays in double quotes
    rt.representer.add_representer(type(None), lambda r, v: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    # PyYAML (our loader) reads YAML 1.1, where 1e-05 is a string: write floats as PyYAML does (1.0e-05)
    rt.representer.add_representer(
        float, lambda r, v: r.represent_scalar("tag:yaml.org,2002:float", yaml_scalar(v)))
    return rt


def merge_text(text: str, updates: Mapping[str, Any], source: str = "params.yaml") -> tuple[str, list[str]]:
    """``text`` with the nested ``updates`` applied, and the dotted keys whose value changed."""
    rt = _round_trip()
    doc = rt.load(text)
    changed = []
    for keys, value in leaves(updates):
        node = doc
        for depth, k in enumerate(keys[:-1]):
            node = node.get(k) if isinstance(node, Mapping) else None
            if not isinstance(node, Mapping):
                raise ValueError(f"{source} has no mapping {'.'.join(keys[:depth + 1])}")
        old = node.get(keys[-1], KeyError)
        if old is KeyError or old != value or type(old) is not type(value) and not isinstance(old, type(value)):
            node[keys[-1]] = value
            changed.append(".".join(keys))
    out = io.StringIO()
    rt.dump(doc, out)
    return out.getvalue(), changed


def apply_params(params_path: str | Path, updates: Mapping[str, Any]) -> list[str]:
    """Merge ``updates`` into the file if the result passes the params models; returns the keys changed."""
    path = Path(params_path)
    text = path.read_text()
    new, changed = merge_text(text, updates, str(path))
    if changed:
        parse_params(yaml.safe_load(new), str(path))  # a ParamError leaves the file as it was
        atomic.write_text(path, new)
    return changed


def exp_run_line(updates: Mapping[str, Any]) -> str:
    """The ``dvc exp run`` command that tries these values without editing params.yaml."""
    sets = " ".join(f"-S '{'.'.join(k)}={yaml_scalar(v)}'" for k, v in leaves(updates))
    return f"dvc exp run {sets}"


CONFIRM_GAMES = 2000  # games of the duel that confirms a search study's best


def confirm_line(spec: str, budget: Mapping[str, Any], params: Any, games: int = CONFIRM_GAMES) -> str:
    """The ``koikoi duel`` that confirms a search study's best ``spec`` on fresh deals, in the duels stage's format."""
    fresh = budget["seed"] + budget["games"] // 2
    return shlex.join(["koikoi", "duel", spec, budget["opponent"], "--games", str(games), "--seed", str(fresh),
                       "--rounds", str(params.duels.rounds), "--points", str(params.duels.points)])


def budget_warnings(summary: Mapping[str, Any], params: Any) -> list[str]:
    """Why a study's winner may not be the best for the stage: another budget, or too few trials."""
    name = summary.get("study")
    budget = summary.get("budget")
    out = []
    if not isinstance(budget, Mapping):
        out.append(f"study {name!r} does not say what budget its trials had (its summary.json predates it): "
                   "compare tune.max_epochs (or tune.rl.loops) with the stage's before trusting its winner")
    elif summary.get("target") == "search":
        games, seed = budget.get("games"), budget.get("seed")
        spec = summary.get("best_spec")
        out.append(f"study {name!r} picked its best of {summary.get('trials_complete', 0)} trials on the same {games} "
                   f"games (deal seeds {seed} on): that pick flatters its win rate there; confirm it on fresh deals"
                   + (f": {confirm_line(spec, budget, params)}" if spec and {"seed", "games", "opponent"} <= set(budget)
                      else ""))
    elif summary.get("target") == "rl":
        loops, stage = budget.get("loops"), params.rl.phase1.loops
        if loops != stage:
            out.append(f"study {name!r} trained each trial {loops} phase-1 loop(s) (tune.rl.loops); rl_phase1 "
                       f"trains {stage} (rl.phase1.loops): the best after {loops} need not be the best after {stage}")
    else:
        stage = params.sl_train.max_epochs
        epochs = budget.get("max_epochs") or stage
        if epochs != stage:
            out.append(f"study {name!r} trained each trial {epochs} epoch(s) (tune.max_epochs); sl_train trains "
                       f"{stage} (sl_train.max_epochs): the best after {epochs} need not be the best after {stage}")
    complete = summary.get("trials_complete", 0)
    if complete < params.tune.startup_trials:
        out.append(f"study {name!r} has {complete} completed trial(s), fewer than tune.startup_trials "
                   f"({params.tune.startup_trials}): its winner is the best of a few random samples")
    return out
