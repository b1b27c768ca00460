"""Every DVC stage's code deps are exactly the code its command runs: the files of ``stages/`` and ``pipeline/``
that its module imports, directly or through other modules (static, with ``ast``: imports inside functions count,
they run too; those under ``if TYPE_CHECKING:`` do not, they never run), with a whole directory where the stage
imports every file of it, and the test files it runs (``engine_tests``: tests/engine). A missing dep would let ``dvc
repro`` skip a stage whose code changed; an unused one reruns it for nothing. On a failure the message prints the
stage's right list, to paste into dvc.yaml."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("stages", "pipeline")  # the stage entry points, and the library they call
RUNS = {"engine_tests": ("tests/engine",)}  # code a stage runs beyond its imports: engine_tests runs these tests


def _module_file(name: str) -> Path | None:
    """The file of a dotted module name under ``stages/`` or ``pipeline/`` (a package: its ``__init__.py``)."""
    path = ROOT.joinpath(*name.split("."))
    for f in (path.with_suffix(".py"), path / "__init__.py"):
        if f.is_file():
            return f
    return None


def _module_name(f: Path) -> str:
    parts = f.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    """Whether ``node`` is ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    test = getattr(node, "test", None) if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (its ``else`` runs)."""
    nodes, todo = [], [tree]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo += ([*node.orelse] if _type_checking(node) else ast.iter_child_nodes(node))
    return nodes


def _imported(f: Path) -> set[str]:
    """Dotted names of the ``stages`` and ``pipeline`` modules ``f`` imports, with the packages their import
    runs."""
    own = _module_name(f)
    package = own if f.name == "__init__.py" else own.rpartition(".")[0]
    names: set[str] = set()
    for node in _run_nodes(ast.parse(f.read_text(), str(f))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)  # ``from pkg import submodule``
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[0] not in PACKAGES:
            continue
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__, a/b/__init__ too
            if _module_file(".".join(parts[:i])) is not None:
                found.add(".".join(parts[:i]))
    return found


def closure(module: str, runs: tuple[str, ...] = ()) -> set[Path]:
    """The files of ``module``, of the ``.py`` files under ``runs``, and of every ``stages`` or ``pipeline`` module
    they import, transitively."""
    parts = module.split(".")
    todo = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}  # ``python -m a.b`` runs a/__init__ first
    for d in runs:
        for f in (ROOT / d).rglob("*.py"):
            todo |= _imported(f)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo |= _imported(_module_file(name)) - seen
    return {_module_file(n) for n in seen}


def _tracked(d: Path) -> list[Path]:
    """The files DVC hashes for a directory dep ``d`` (no caches: .dvcignore leaves those out)."""
    return [f for f in d.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"]


def code_deps(module: str, runs: tuple[str, ...] = ()) -> list[str]:
    """The deps a stage running ``python -m module`` (and the code under ``runs``) needs: each file of its
    closure, as its directory where the closure holds every file of that directory (the outermost such one)."""
    files = closure(module, runs)
    whole = {d for f in files for d in f.parents if ROOT in d.parents and set(_tracked(d)) <= files}
    deps = {next((str(d.relative_to(ROOT)) for d in reversed(f.parents) if d in whole), str(f.relative_to(ROOT)))
            for f in files}
    return sorted(deps | set(runs))


def _is_code(dep: str) -> bool:
    return dep.split("/")[0] in PACKAGES or dep.startswith("tests/")


def _read_pipeline() -> tuple[list, set[Path]]:
    """DVC's own reading of dvc.yaml (``foreach`` and ``vars`` resolved): ``(name, cmd, deps)`` of every
    stage, and the files of ``stages/``, ``pipeline/`` and ``tests/`` that ``.dvcignore`` hides from DVC."""
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        stages = [(s.addressing, s.cmd, [str(d.def_path) for d in s.deps]) for s in repo.index.stages]
        ignored = {f for package in (*PACKAGES, "tests") for f in (ROOT / package).rglob("*.py")
                   if repo.dvcignore.is_ignored_file(str(f))}
    return stages, ignored


STAGES, IGNORED = _read_pipeline()


def _stage_module(cmd: str) -> str:
    return re.match(r"python -m ([\w.]+)", cmd).group(1)


def _expected(name: str, cmd: str) -> list[str]:
    return code_deps(_stage_module(cmd), RUNS.get(name.split("@")[0], ()))


def test_every_stage_runs_a_module_of_stages():
    for name, cmd, _ in STAGES:
        assert re.match(r"python -m stages\.\w+ ", cmd), f"{name}: {cmd}"


@pytest.mark.parametrize(("name", "cmd", "deps"), STAGES, ids=[s[0] for s in STAGES])
def test_stage_code_deps_are_exactly_what_its_command_runs(name, cmd, deps):
    expected = _expected(name, cmd)
    listed = [d for d in deps if _is_code(d)]
    missing, unused = sorted(set(expected) - set(listed)), sorted(set(listed) - set(expected))
    paste = "".join(f"\n      - {d}" for d in expected)
    assert not (missing or unused), (f"{name}: its code deps in dvc.yaml differ from what its command imports "
                                     f"(missing: {missing}; unused: {unused}); its code deps are:{paste}")


def test_the_walk_follows_relative_lazy_and_run_imports():
    files = {str(f.relative_to(ROOT)) for f in closure("stages.duels")}
    assert {"pipeline/duel/arena.py", "pipeline/duel/attention.py", "pipeline/engine/state.py",
            "pipeline/search/player.py"} <= files  # search: imported inside a function of lineup.loader
    assert "pipeline/play/app.py" not in files
    # a test of tests/engine imports it
    assert ROOT / "pipeline/sl/records_source.py" in closure("stages.params_check", ("tests/engine",))


def test_type_checking_imports_are_no_deps():
    """An import only a type checker runs is no dep: editing the networks leaves the SL dataset up to date."""
    tree = ast.parse("import typing\nif typing.TYPE_CHECKING:\n    import pipeline.net.model\n"
                     "else:\n    import pipeline.engine.cards\ndef f():\n    import pipeline.runtime.paths\n")
    imported = {a.name for node in _run_nodes(tree) if isinstance(node, ast.Import) for a in node.names}
    assert imported == {"typing", "pipeline.engine.cards", "pipeline.runtime.paths"}
    deps = code_deps("stages.sl_dataset")
    assert not any(d.startswith(("pipeline/net/model.py", "pipeline/net/layers.py", "pipeline/net/inference.py"))
                   for d in deps), deps


def test_a_directory_stands_for_its_files_only_when_all_are_imported():
    deps = code_deps("pipeline.engine.state")
    assert "pipeline/engine/state.py" in deps and "pipeline/engine" not in deps  # random_play.py is not imported
    assert "pipeline/runtime/paths.py" in code_deps("stages.params_check")  # runtime/train_guards.py is not


def test_code_no_stage_runs_leaves_every_stage_up_to_date():
    """The play app, the CLI and its commands, the benchmarks and the RL loop (for the stages before RL) are
    nobody's dep, so editing them leaves those stages up to date."""
    for name, cmd, _ in STAGES:
        deps = _expected(name, cmd)
        for never in ("pipeline/play", "pipeline/commands", "pipeline/cli.py", "pipeline/cli_args.py",
                      "pipeline/benchmarks"):
            assert not any(d.startswith(never) for d in deps), f"{name} runs {never}"
        if name in ("params_check", "engine_tests", "records", "sl_dataset", "sl_train", "winprob"):
            assert not any(d.startswith(("pipeline/rl/", "pipeline/search/player", "pipeline/search/agent"))
                           for d in deps), f"{name}: {deps}"


def test_dvc_sees_all_the_code():
    assert not IGNORED, f".dvcignore hides code a stage may run: {sorted(map(str, IGNORED))}"


def test_the_library_never_imports_the_stages():
    importers = sorted(str(f.relative_to(ROOT)) for f in (ROOT / "pipeline").rglob("*.py")
                       if any(name.split(".")[0] == "stages" for name in _imported(f)))
    assert not importers, f"pipeline/ is the library the stages call: {', '.join(importers)}"


def test_rl_stage_commands_pass_the_layout_the_rl_tests_run():
    from stages.rl_phase import PhasePaths

    rl = [(name, cmd) for name, cmd, _ in STAGES if name.startswith("rl_phase") and "@" in name]
    assert sorted(name for name, _ in rl) == ["rl_phase1@point", "rl_phase1@wp", "rl_phase2@point", "rl_phase2@wp"]
    for name, cmd in rl:
        phase, variant = int(name[len("rl_phase")]), name.split("@")[1]
        assert cmd.split() == ["python", "-m", "stages.rl_phase", str(phase), variant,
                               *PhasePaths.layout(phase, variant).argv()], name
