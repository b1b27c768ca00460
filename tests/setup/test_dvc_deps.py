"""Every DVC stage lists the code it runs: each file of ``stages/`` and ``pipeline/`` that its command's
module imports, directly or through other modules (static, with ``ast``; imports inside functions count, they run too),
is a dep of the stage or lies under one, and is not left out by ``.dvcignore``. A module added to a
stage's imports without a dep would let ``dvc repro`` skip a stage whose code changed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("stages", "pipeline")  # the stage entry points, and the library they call


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


def _imported(f: Path) -> set[str]:
    """Dotted names of the ``stages`` and ``pipeline`` modules ``f`` imports, with the packages their import
    runs."""
    own = _module_name(f)
    package = own if f.name == "__init__.py" else own.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(f.read_text(), str(f))):
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


def closure(module: str) -> set[Path]:
    """The files of ``module`` and of every ``stages`` or ``pipeline`` module it imports, transitively."""
    seen: set[str] = set()
    parts = module.split(".")
    todo = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]  # ``python -m a.b`` runs a/__init__ first
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imported(_module_file(name)) - seen)
    return {_module_file(n) for n in seen}


def _read_pipeline() -> tuple[list, set[Path]]:
    """DVC's own reading of dvc.yaml (``foreach`` and ``vars`` resolved): ``(name, cmd, deps)`` of every
    stage, and the files of ``stages/`` and ``pipeline/`` that ``.dvcignore`` hides from DVC."""
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        stages = [(s.addressing, s.cmd, [str(d.def_path) for d in s.deps]) for s in repo.index.stages]
        ignored = {f for package in PACKAGES for f in (ROOT / package).rglob("*.py")
                   if repo.dvcignore.is_ignored_file(str(f))}
    return stages, ignored


STAGES, IGNORED = _read_pipeline()


def test_every_stage_runs_a_module_of_stages():
    for name, cmd, _ in STAGES:
        assert re.match(r"python -m stages\.\w+ ", cmd), f"{name}: {cmd}"


@pytest.mark.parametrize(("name", "cmd", "deps"), STAGES, ids=[s[0] for s in STAGES])
def test_stage_deps_cover_the_modules_its_command_imports(name, cmd, deps):
    module = re.match(r"python -m ([\w.]+)", cmd).group(1)
    files = closure(module)
    assert {ROOT / "stages/__init__.py", ROOT / "pipeline/__init__.py", _module_file(module)} <= files  # the walk works
    covered = [ROOT / d for d in deps]
    missing = sorted(str(f.relative_to(ROOT)) for f in files
                     if f in IGNORED or not any(f == d or d in f.parents for d in covered))
    assert not missing, f"{name}: add to its deps in dvc.yaml (or take out of .dvcignore): {', '.join(missing)}"


def test_the_walk_follows_relative_and_lazy_imports():
    files = {str(f.relative_to(ROOT)) for f in closure("stages.duels")}
    assert {"pipeline/duel/arena.py", "pipeline/duel/attention.py", "pipeline/engine/state.py"} <= files
    assert "pipeline/play/app.py" not in files


def test_the_library_never_imports_the_stages():
    importers = sorted(str(f.relative_to(ROOT)) for f in (ROOT / "pipeline").rglob("*.py")
                       if any(name.split(".")[0] == "stages" for name in _imported(f)))
    assert not importers, f"pipeline/ is the library the stages call: {', '.join(importers)}"


def test_dvcignore_hides_only_code_no_stage_runs():
    assert ROOT / "pipeline/play/app.py" in IGNORED and ROOT / "pipeline/commands/duel.py" in IGNORED
    assert ROOT / "pipeline/benchmarks/engine.py" not in IGNORED  # engine_tests times the engine with it


def test_rl_stage_commands_pass_the_layout_the_rl_tests_run():
    from stages.rl_phase import PhasePaths

    rl = [(name, cmd) for name, cmd, _ in STAGES if name.startswith("rl_phase")]
    assert sorted(name for name, _ in rl) == ["rl_phase1@point", "rl_phase1@wp", "rl_phase2@point", "rl_phase2@wp"]
    for name, cmd in rl:
        phase, variant = int(name[len("rl_phase")]), name.split("@")[1]
        assert cmd.split() == ["python", "-m", "stages.rl_phase", str(phase), variant,
                               *PhasePaths.layout(phase, variant).argv()], name
