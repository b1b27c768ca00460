"""The docs site: the generated CLI reference (docs/hooks.py) has every ``koikoi`` command with its
``--help``, and the nav names every page (the params reference: tests/params/test_descriptions.py).
``make test`` builds the whole site with ``mkdocs build --strict``, so a broken link or anchor fails."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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

    assert sorted(pages(config["nav"])) == sorted(p.name for p in DOCS.glob("*.md"))
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
        assert name == "tune" or f"`{name}" in readme.split("## What `make repro` ships")[1], f"README: {name}"


def test_every_benchmark_target_is_listed_and_the_tools_are_named():
    benchmarks = (DOCS / "benchmarks.md").read_text()
    for module in (ROOT / "pipeline/benchmarks").glob("*.py"):
        if module.stem != "__init__":
            assert f"| `{module.stem.replace('_', '-')}` |" in benchmarks, module.stem
    assert "optuna-dashboard" in (DOCS / "tuning.md").read_text()
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    play = sub.choices["play"].format_help()
    assert "search:<model directory>" in " ".join(play.split())  # the searcher is an opponent too
