"""The docs site: the generated CLI reference (docs/hooks.py) has every ``koikoi`` command with its
``--help``, and the nav names every page (the params reference: tests/params/test_descriptions.py).
``make test`` builds the whole site with ``mkdocs build --strict``, so a broken link or anchor fails."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from pipeline.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_has_every_command_and_its_help():
    page = _hooks().cli_reference()
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        assert f"## `koikoi {name}`" in page
        assert p.format_usage().split()[1] == "koikoi"  # usage: koikoi <name> ...
        for action in p._actions:
            for option in action.option_strings:
                assert option in page, f"koikoi {name} {option}"
    assert "### `koikoi bench engine`" in page


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(nav):
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from pages(value) if isinstance(value, list) else [value]

    assert sorted(pages(config["nav"])) == sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert config["hooks"] == ["docs/hooks.py"]


def test_generated_pages_keep_their_markers():
    hooks = _hooks()
    assert hooks.CLI_MARKER in (DOCS / "cli.md").read_text()
    assert hooks.PARAMS_MARKER in (DOCS / "params.md").read_text()


def test_the_stage_lists_name_every_stage():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    index, development, readme = ((p).read_text() for p in (DOCS / "index.md", DOCS / "development.md",
                                                             ROOT / "README.md"))
    for name in stages:
        assert f"| `{name}`" in index or f"| `{name}@" in index, f"docs/index.md: {name}"  # foreach: name@item
        assert f"`{name}" in development.split("## The DVC pipeline")[1].split("##")[0], f"development.md: {name}"
        assert name == "tune" or f"`{name}" in readme.split("## What `make repro` runs")[1], f"README: {name}"


def test_every_benchmark_target_is_listed_and_the_tools_are_named():
    benchmarks = (DOCS / "benchmarks.md").read_text()
    for module in (ROOT / "pipeline/benchmarks").glob("*.py"):
        if module.stem != "__init__":
            assert f"| `{module.stem.replace('_', '-')}` |" in benchmarks, module.stem
    assert "optuna-dashboard" in (DOCS / "tuning.md").read_text()
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    play = sub.choices["play"].format_help()
    assert "search:<model directory>" in " ".join(play.split())  # the searcher is an opponent too


def test_the_readme_table_is_what_make_readme_makes_of_the_committed_results():
    readme = (ROOT / "README.md").read_text()
    assert _hooks().update_readme(readme, ROOT) == readme, "README.md differs from results/: run `make readme`"
    assert len(readme.splitlines()) <= 120, "README.md: at most 120 lines"


def _write(root: Path, files: dict[str, object]) -> Path:
    for rel, doc in files.items():
        path = root / "results" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return root


SPRT = {"h0": 0.5, "h1": 0.53, "decision": "H1"}
DUELS = {"duels/metrics.json": {"rl_wp_vs_sl": {"win_rate": 0.5357, "ci95_low": 0.5079, "ci95_high": 0.5636},
                                "rl_point_vs_sl": {"win_rate": 0.5401, "ci95_low": 0.5118, "ci95_high": 0.5684},
                                "rl_wp_vs_rl_phase1_wp": {"win_rate": 0.4746, "ci95_low": 0.4359, "ci95_high": 0.5133},
                                "search_rl_wp_vs_sl": {"win_rate": 0.577, "ci95_low": 0.5467, "ci95_high": 0.6073}},
         "duels/run.json": {"rl_wp_vs_sl": {"games": 672, "sprt": SPRT}, "rl_point_vs_sl": {"games": 736, "sprt": SPRT},
                            "rl_wp_vs_rl_phase1_wp": {"games": 256, "sprt": {**SPRT, "decision": "H0"}},
                            "search_rl_wp_vs_sl": {"games": 500}},
         "duels/table.md": "# Duels\n\n## Pairings\n\n| A vs B |\n|---|\n",
         "sl/metrics.json": {"val": {"acc": 0.7758, "acc_discard": 0.7553, "acc_pick": 0.9196, "acc_koikoi": 0.8237},
                             "best_epoch": 7, "epochs": 8},
         "sl/run.json": {"samples": {"val": 3421, "val_discard": 2832, "val_pick": 311, "val_koikoi": 278},
                         "val_games": 32}}
# the shape of the stages before issue 88 (results/ of 441d631's run): no stage's time, phase 2 for both rewards
OLD = {**DUELS, "duels/champion.json": {"spec": "search:models/rl/wp?rollout=models/rollout", "win_rate": 0.577,
                                        "ci95": [0.5467, 0.6073], "games": 500, "point_diff": 2.222,
                                        "confirmation": {"win_rate": 0.577, "ci95": [0.5467, 0.6073], "games": 500,
                                                         "seed": 1000000}, "candidates": []},
       "rl/point/run.json": {"phase": 2, "loops": 1}, "rl/wp/run.json": {"phase": 2, "loops": 1},
       "rl/wp/metrics.json": {"global_games": 1952, "win_rate": 0.535, "ci95_low": 0.4851, "ci95_high": 0.5849,
                              "train_seconds": 75.0},
       "rl_phase1/wp/curve.csv": "loop,games,win_rate,point_diff,eval_games,ci_low,ci_high\n0,0,0.5,0.0,64,0.3,0.6\n"
                                 "1,1792,0.5,0.281,64,0.43,0.57\n",
       "rl/wp/curve.csv": "loop,games,win_rate,point_diff,eval_games,ci_low,ci_high\n0,0,0.5,0.0,64,0.3,0.6\n"
                          "1,1792,0.5,0.281,64,0.43,0.57\n2,1952,0.5625,1.938,64,0.4654,0.6596\n"}
# the shape of this version: each stage's seconds and CPU, RL-Point without a phase-2 loop, the curve's CPU seconds
# and its duel against phase 1, a champion without a separate confirmation
NEW = {**DUELS, "duels/champion.json": {"spec": "search:models/rl/wp", "win_rate": 0.6, "ci95": [0.57, 0.63],
                                        "games": 500, "point_diff": 2.5, "candidates": [
                                            {"spec": "search:models/rl/wp", "against": "models/sl", "games": 256,
                                             "win_rate": 0.58, "ci95": [0.53, 0.63], "sprt": SPRT}]},
       "rl/point/run.json": {"phase": 2, "loops": 0, "seconds": 20.0, "cpu": "AMD EPYC 9B14, 2 cores"},
       "rl/wp/run.json": {"phase": 2, "loops": 1, "seconds": 400.0, "cpu": "AMD EPYC 9B14, 2 cores"},
       "sl/run.json": {**DUELS["sl/run.json"], "seconds": 300.0, "cpu": "AMD EPYC 9B14, 2 cores"},
       "duels/run.json": {**DUELS["duels/run.json"], "seconds": 480.0, "cpu": "AMD EPYC 9B14, 2 cores"},
       "tune/run.json": {"seconds": 99999.0},  # the frozen stage is no part of make repro
       "rl_phase1/wp/curve.csv": "loop,games,seconds,win_rate,point_diff,eval_games,ci_low,ci_high,vs_phase1,"
                                 "vs_phase1_low,vs_phase1_high\n0,0,0.0,0.5,0.0,64,0.3,0.6,,,\n"
                                 "1,1792,250.0,0.5,0.281,64,0.43,0.57,,,\n",
       "rl/wp/curve.csv": "loop,games,seconds,win_rate,point_diff,eval_games,ci_low,ci_high,vs_phase1,"
                          "vs_phase1_low,vs_phase1_high\n0,0,0.0,0.5,0.0,64,0.3,0.6,,,\n1,1792,250.0,0.5,0.281,64,"
                          "0.43,0.57,,,\n2,2192,565.0,0.55,1.0,400,0.52,0.58,0.521,0.49,0.55\n"}


def test_the_results_read_the_stages_old_and_new_shapes(tmp_path):
    hooks = _hooks()
    old = hooks.readme_table(_write(tmp_path / "old", OLD))
    assert "`search:models/rl/wp?rollout=models/rollout`, against SL on fresh deals (500 games) | **0.577** [0.547, " \
           "0.607], +2.22 points a game" in old
    assert "RL-Point (phase 2) against SL | **0.540** [0.512, 0.568], H1 after 736 games | 0.616" in old
    assert "0.776 [0.762, 0.790] (3,421)" in old and "0.475 [0.436, 0.513], H0 after 256 games" in old
    assert "not recorded in `results/`" in old
    new_root = _write(tmp_path / "new", NEW)
    new = hooks.readme_table(new_root)
    assert "`search:models/rl/wp`, against SL on fresh deals (500 games) | **0.600** [0.570, 0.630]" in new
    assert "RL-Point (phase 1) against SL" in new and "RL-WP (phase 2) against SL" in new
    assert "**20.0 minutes** on AMD EPYC 9B14, 2 cores (4 stages' `run.json`)" in new  # 1,200 s; tune left out
    rl = hooks.rl_results(new_root)
    assert "| 2 | 2,192 | 9.4 | 0.550 [0.520, 0.580] | 0.521 [0.490, 0.550] | 400 |" in rl
    assert "RL-Point's curve" not in rl  # no phase-2 loop: its model is phase 1's
    assert "| `search:models/rl/wp` | `models/sl` | 0.580 [0.530, 0.630] | H1 after 256 games |" in \
        hooks.duels_results(new_root)
    assert "| RL-WP + search | SL | 0.577 [0.547, 0.607] | 500 games |" in hooks.search_results(new_root)


def test_missing_results_are_said_not_raised(tmp_path):
    hooks = _hooks()
    (tmp_path / "results").mkdir()
    assert hooks.readme_table(tmp_path).count(hooks.MISSING) >= 4
    for name, generate in hooks.RESULTS.items():
        assert generate(tmp_path), name
    with pytest.raises(ValueError, match="markers"):
        hooks.update_readme("# no table here\n", tmp_path)
