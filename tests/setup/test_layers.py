"""The layers are a contract (docs/development.md, "Layout"): ``LAYERS`` lists the packages floor by floor, from the
ground up, and a package may import only the packages of the floors below its own. An import that runs back up
(to its own floor or higher) fails, and so does a package that no floor names.

What counts: every import statement of the library and the stages, the ones inside functions and under ``if
TYPE_CHECKING:`` too. Both are dependencies of meaning, though the second never runs: a lower package that names an
upper one's type, or imports it late to dodge a cycle, knows that upper package all the same. (The DVC deps count
only what runs: tests/setup/test_dvc_deps.py.)"""

from __future__ import annotations

import re

from test_layout import IMPORTS, MODULES, ROOT

# From the ground up. Packages on one floor are peers: neither imports the other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("pipeline",),  # pipeline/__init__.py: a Ctrl-C's one line, for every program
    ("runtime",),  # what every process runs on, ParamError, curves, the phase pairs' paths
    ("engine",),  # the rules, pure Python
    ("net",),  # the encoding and the networks
    ("agents", "env", "rollout"),  # the agent vocabulary and kinds; the PettingZoo environment; the rollout policy
    ("selfplay",),  # the batched game engine
    ("value",),  # the win-probability table
    ("search",),  # the searcher
    ("lineup",),  # any agent spec as an agent: builds all of the above
    ("params", "analysis"),  # the params models, checking specs, reward models and paths of the floors below; games
    # judged move by move
    ("tracking",),  # MLflow
    ("duel",),
    ("sl", "distill"),  # supervised learning; the rollout policy's distillation
    ("rl",),
    ("tune", "play", "cli_args"),
    ("benchmarks",),
    ("commands",),
    ("cli", "stages"),  # the koikoi command; the DVC stages
)
FLOOR = {package: floor for floor, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str:
    """The layer unit of a module: ``stages``; ``pipeline`` (its ``__init__``), ``cli`` and ``cli_args`` (modules of
    ``pipeline/`` itself); else its package under ``pipeline/``."""
    parts = module.split(".")
    return parts[0] if parts[0] == "stages" or len(parts) == 1 else parts[1]


def upward(imports: dict[str, list[tuple[str, bool]]]) -> list[str]:
    """``importer -> imported`` for each import of a package on the floor of the importer's package or above."""
    return sorted(f"{m} -> {t}" + (" (inside a function)" if fn else "")
                  for m, targets in imports.items() for t, fn in targets
                  if package_of(m) != package_of(t) and FLOOR[package_of(t)] >= FLOOR[package_of(m)])


def test_every_package_stands_on_one_floor():
    packages = {package_of(m) for m in MODULES}
    named = [p for floor in LAYERS for p in floor]
    assert len(named) == len(set(named)), f"a package on two floors: {named}"
    assert packages == set(named), (f"packages on no floor: {sorted(packages - set(named))}; floors naming no "
                                    f"package: {sorted(set(named) - packages)} (tests/setup/test_layers.py LAYERS)")


def test_no_import_runs_back_up_the_layers():
    found = upward(IMPORTS)
    assert not found, ("imports of a package on the importer's floor or above (LAYERS, docs/development.md): "
                       + "; ".join(found))


def test_an_upward_import_fails_the_contract():
    """The check itself: an engine module importing the networks, or a peer importing a peer, is caught."""
    assert upward({"pipeline.engine.state": [("pipeline.net.model", False)]}) == [
        "pipeline.engine.state -> pipeline.net.model"]
    assert upward({"pipeline.play.app": [("pipeline.tune.study", True)]}) == [
        "pipeline.play.app -> pipeline.tune.study (inside a function)"]
    assert upward({"pipeline.net.model": [("pipeline.engine.state", False)]}) == []


def _docs_floors() -> dict[str, int]:
    """The floor column of docs/development.md's layout table: ``{package: floor}``."""
    text = (ROOT / "docs/development.md").read_text()
    floors = {}
    for floor, paths in re.findall(r"^\| (\d+) \| ([^|]+) \|", text, re.M):
        for path in re.findall(r"`([^`]+)`", paths):
            module = path.removesuffix(".py").removesuffix("/__init__").strip("/").replace("/", ".")
            floors[package_of(module)] = int(floor)
    return floors


def test_the_docs_table_gives_the_same_floors():
    assert _docs_floors() == FLOOR, "docs/development.md's layout table and LAYERS differ"
