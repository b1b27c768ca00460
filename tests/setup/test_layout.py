"""The layout shows the architecture (docs/development.md): no import cycle among the library's and the stages'
modules, counting imports inside functions and under ``if TYPE_CHECKING:`` (a cycle hidden in a function is a
cycle all the same); few imports inside functions; small packages with names that say what they hold."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("pipeline", "stages")
MAX_FUNCTION_IMPORTS = 58  # project imports inside function bodies: those of slow third-party packages' users
MAX_TOP_MODULES = 3  # pipeline/ itself keeps cli.py (and __init__.py)
MAX_PACKAGE_MODULES = 15
# a module may share its name with another where it is that thing's command, benchmark or stage
NAMED_AFTER = ("pipeline/commands/", "pipeline/benchmarks/", "stages/")
# top-level definitions many modules share by contract: a command module's ``register(subparsers)`` and
# ``run(args)`` (pipeline/cli.py), a benchmark's ``add_arguments(parser)`` and ``run(args)`` (commands/bench.py)
PROTOCOL = {"pipeline/commands/": {"register", "run"}, "pipeline/benchmarks/": {"add_arguments", "run"}}


def _modules() -> dict[str, tuple[Path, bool]]:
    mods = {}
    for package in PACKAGES:
        for f in sorted((ROOT / package).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            mods[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return mods


MODULES = _modules()


def _target(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[str, bool]]:
    """``(imported project module, inside a function)`` for every import statement of ``module``."""
    f, is_pkg = MODULES[module]
    found = []

    def visit(node: ast.AST, in_fn: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            fn = in_fn or isinstance(ch, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(ch, ast.Import):
                found.extend((t, fn) for a in ch.names if (t := _target(a.name)))
            elif isinstance(ch, ast.ImportFrom):
                if ch.level:
                    anchor = module.split(".") if is_pkg else module.split(".")[:-1]
                    base = ".".join(anchor[:len(anchor) - (ch.level - 1)] + ([ch.module] if ch.module else []))
                else:
                    base = ch.module or ""
                targets = {_target(f"{base}.{a.name}") if f"{base}.{a.name}" in MODULES else _target(base)
                           for a in ch.names}
                found.extend((t, fn) for t in targets if t)
            visit(ch, fn)

    visit(ast.parse(f.read_text(), str(f)), False)
    return [(t, fn) for t, fn in found if t != module]


IMPORTS = {m: _imports(m) for m in MODULES}


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    edges = {m: {t for t, _ in IMPORTS[m]} for m in MODULES}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in MODULES:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    cycles = _cycles()
    assert not cycles, "import cycles (imports inside functions count): " + "; ".join(" <-> ".join(c) for c in cycles)


def test_few_imports_inside_functions():
    inside = sorted(f"{m}: {t}" for m, ts in IMPORTS.items() for t, fn in ts if fn)
    assert len(inside) <= MAX_FUNCTION_IMPORTS, (
        f"{len(inside)} imports of project modules inside functions (at most {MAX_FUNCTION_IMPORTS}): import at "
        "module level unless it closes a cycle or pulls a slow package (torch, mlflow) into a light module")


def test_packages_are_small_and_the_top_level_holds_the_cli():
    per_package = Counter(m.rpartition(".")[0] for m, (_, is_pkg) in MODULES.items() if not is_pkg)
    assert per_package["pipeline"] <= MAX_TOP_MODULES, sorted(m for m in MODULES if m.rpartition(".")[0] == "pipeline")
    big = {p: n for p, n in per_package.items() if n > MAX_PACKAGE_MODULES}
    assert not big, f"packages of more than {MAX_PACKAGE_MODULES} modules: {big}"


def test_one_name_one_meaning():
    by_name: dict[str, list[str]] = {}
    for f, _ in MODULES.values():
        rel = str(f.relative_to(ROOT))
        if f.name not in ("__init__.py", "base.py") and not rel.startswith(NAMED_AFTER):
            by_name.setdefault(f.name, []).append(rel)
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"modules of one name in different places: {shared}"


def test_one_public_name_one_definition():
    """Two public top-level classes or functions of one name in different modules of pipeline/ are two meanings of
    one word (issue 88: two ``RolloutSpec``, two ``agent_name``): rename one, or keep one where the logic is one."""
    by_name: dict[str, list[str]] = {}
    for f, _ in MODULES.values():
        rel = str(f.relative_to(ROOT))
        if not rel.startswith("pipeline/"):
            continue
        allowed = next((names for prefix, names in PROTOCOL.items() if rel.startswith(prefix)), set())
        for node in ast.parse(f.read_text(), str(f)).body:
            if (isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                    and not node.name.startswith("_") and node.name not in allowed):
                by_name.setdefault(node.name, []).append(rel)
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"public classes or functions of one name in different modules: {shared}"
