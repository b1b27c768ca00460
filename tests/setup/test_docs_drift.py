"""Docs that cannot drift: every file path, module, dotted name, ``koikoi`` flag, ``make`` target, DVC stage and
params key that a product page (``docs/*.md`` but the experiment log in ``docs/log/``), the README or an error
message of ``pipeline/`` cites must exist. Read statically (``ast``): nothing of the project is imported but the CLI's
parser. What is not the project's is left alone: other tools' commands and flags, third-party modules, URLs,
absolute paths and placeholders (``<model>``; ``<variant>`` stands for a reward model), formulas, the file a command's
option names for its output (``--journal a.jsonl``). Names the project owns but does not define as Python are
checked where they live: ``tags.X`` (a tag the code sets), ``[tool.X]`` (pyproject.toml), ``info.seed`` (fields of a
JSON document the code writes), keys below a params mapping empty by default (``tune.space.search.k``)."""

from __future__ import annotations

import ast
import importlib.util
import re
import shlex
import tomllib
from functools import cache
from pathlib import Path

import yaml

from pipeline.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
SOURCES = ("pipeline", "stages", "tests")
EXTENSIONS = ("py", "md", "yaml", "yml", "json", "jsonl", "csv", "png", "pt", "ckpt", "txt", "toml", "db", "js", "html",
              "lock", "pkl", "cfg")
EXAMPLES = {"my.yaml", "attention.png", "log"}  # names the pages make up for an example command's output
PLACEHOLDERS = {"<variant>": "wp", "<reward>": "wp", "${item}": "wp"}
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
OUTPUTS = ("models", "data", "checkpoints", "results", "mlruns")  # folders the stages make
FORMULA = re.compile(r" [=+*/] ")  # a span that is arithmetic (`LLR = N * sum_i q_i ...`), not a name
FLAG = re.compile(r"^--?[a-z][a-z0-9-]*$")


# ---- what exists ------------------------------------------------------------------------------------

@cache
def params_doc() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


@cache
def dvc_stages() -> dict:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


@cache
def dvc_paths() -> frozenset[str]:
    """Every path dvc.yaml names (outs, deps, plots, cmd arguments), ``${item}`` expanded."""
    items = yaml.safe_load((ROOT / "dvc.yaml").read_text())["vars"][0]["variants"]
    words = set(re.findall(r"[\w./${}-]+", (ROOT / "dvc.yaml").read_text()))
    return frozenset(w.replace("${item}", i).rstrip("/") for w in words if "/" in w for i in items)


@cache
def stage_names() -> frozenset[str]:
    items = yaml.safe_load((ROOT / "dvc.yaml").read_text())["vars"][0]["variants"]
    names = set()
    for name, stage in dvc_stages().items():
        names.add(name)
        if "foreach" in stage:
            names.update(f"{name}@{i}" for i in items)
    return frozenset(names)


@cache
def make_targets() -> frozenset[str]:
    return frozenset(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


@cache
def modules() -> dict[str, Path]:
    """``pipeline.x.y`` (and ``stages.x``) -> its file; a package -> its ``__init__.py``."""
    out = {}
    for top in ("pipeline", "stages"):
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


@cache
def code_files() -> tuple[Path, ...]:
    """The project's Python files, but this one (its examples of drift must not count as the code's names)."""
    return tuple(p for top in SOURCES for p in sorted((ROOT / top).rglob("*.py")) if p != Path(__file__).resolve())


@cache
def functions() -> frozenset[str]:
    return frozenset(n.name for p in code_files() for n in ast.walk(tree(p))
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


@cache
def strings() -> frozenset[str]:
    """Every string constant of the code, dvc.yaml and the Makefile (names the code makes: tags, runtime paths)."""
    out = set()
    for path in code_files():
        out.update(n.value for n in ast.walk(tree(path)) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return frozenset(out)


@cache
def code_text() -> str:
    return "\n".join([*strings(), (ROOT / "dvc.yaml").read_text(), (ROOT / "Makefile").read_text()])


@cache
def classes() -> dict[str, list[ast.ClassDef]]:
    out: dict[str, list[ast.ClassDef]] = {}
    for path in modules().values():
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(node)
    return out


def _names(body: list[ast.stmt]) -> set[str]:
    """What a module or class body defines: functions, classes, assignments, imports."""
    out = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            out |= _names(node.body)
    return out


def _class_has(name: str, attr: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a class ``name`` of the code (or a base of it) defines ``attr``, as its body or ``self.attr``."""
    for node in classes().get(name, []):
        own = _names(node.body) | {t.attr for f in ast.walk(node) if isinstance(f, ast.Assign | ast.AnnAssign)
                                   for t in (f.targets if isinstance(f, ast.Assign) else [f.target])
                                   if isinstance(t, ast.Attribute)}
        if attr in own:
            return True
        bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases} - seen
        if any(_class_has(b, attr, seen | {name}) for b in bases):
            return True
    return False


def _attribute(module: str, parts: list[str]) -> bool:
    """Whether ``module`` defines ``parts[0]`` (a submodule too) and, where it is a class, ``parts[1]``."""
    if not parts:
        return True
    if f"{module}.{parts[0]}" in modules():
        return _attribute(f"{module}.{parts[0]}", parts[1:])
    if parts[0] not in _names(tree(modules()[module]).body):
        return False
    return len(parts) == 1 or parts[0] not in classes() or _class_has(parts[0], parts[1])


def resolves(name: str) -> bool:
    """A dotted name of the code: ``pipeline.x.y``, or relative to ``pipeline`` (``selfplay.batched.play_job``), to
    any module of that stem (``runner.job_blocks``) or to a class (``SearchPlayer.improve``)."""
    parts = name.split(".")
    if parts[0] in ("pipeline", "stages"):
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in modules():
                return _attribute(".".join(parts[:i]), parts[i:])
        return False
    if resolves(f"pipeline.{name}"):
        return True
    stems = [m for m in modules() if m.rsplit(".", 1)[-1] == parts[0]]
    if any(_attribute(m, parts[1:]) for m in stems):
        return True
    return parts[0] in classes() and _class_has(parts[0], parts[1])


@cache
def imported() -> dict[str, str]:
    """A name the code imports from another package (``Path``, ``nn``) -> that package."""
    out = {}
    for path in code_files():
        for n in ast.walk(tree(path)):
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                out.update({a.asname or a.name: n.module for a in n.names})
    return out


@cache
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def params_key(key: str) -> bool:
    """A key of params.yaml; below a mapping that is empty by default (``tune.space: {}``), names of the code."""
    node, parts = params_doc(), key.split(".")
    for k, part in enumerate(parts):
        if node == {}:
            return all(p in defined() for p in parts[k:])
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def third_party(name: str) -> bool:
    """An importable package that is not the project's (the tests' folders, on pytest's path, are the project's)."""
    try:
        spec = importlib.util.find_spec(name.split(".")[0])
    except (ImportError, ValueError):
        return False
    where = [spec.origin or "", *(spec.submodule_search_locations or [])] if spec else []
    return spec is not None and not any(Path(p).is_relative_to(ROOT) and not Path(p).is_relative_to(ROOT / ".venv")
                                        for p in where if Path(p).is_absolute())


@cache
def cli() -> dict[str, tuple[set[str], dict]]:
    """``koikoi`` and each (sub)command: its option strings and subcommands."""
    def walk(parser) -> tuple[set[str], dict]:
        opts, subs = set(), {}
        for action in parser._actions:
            opts.update(action.option_strings)
            if action.__class__.__name__ == "_SubParsersAction":
                subs = {name: walk(p) for name, p in action.choices.items()}
        return opts, subs
    return {"koikoi": walk(build_parser())}


@cache
def every_flag() -> frozenset[str]:
    out = set()

    def add(node):
        opts, subs = node
        out.update(opts)
        for sub in subs.values():
            add(sub)
    add(cli()["koikoi"])
    return frozenset(out)


# ---- what a text cites ------------------------------------------------------------------------------

def check_path(token: str) -> str | None:
    for k, v in PLACEHOLDERS.items():
        token = token.replace(k, v)
    path, _, test = token.partition("::")
    path = path.rstrip("/")
    if "*" in path:
        if list(ROOT.glob(path)) or (path.split("/")[0] in OUTPUTS and path.rsplit("/", 1)[-1] in strings()):
            return None
        return f"no file matches {token}"
    if (ROOT / path).exists():
        if test and not re.search(rf"def {re.escape(test.split('[')[0])}\b", (ROOT / path).read_text()):
            return f"{path} has no test {test}"
        return None
    if any(path == p or path.startswith(p + "/") for p in dvc_paths()) or path in code_text():
        return None  # an output a stage or the code makes
    return f"no file or directory {token}"


def check_name(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] in params_doc() and params_key(name) or parts[0] == "params" and params_key(name[7:]):
        return None  # a key, or the typed section of it (params.rl.phase1.loops)
    if name in strings() or resolves(name) or third_party(name):
        return None
    if parts[0] in imported() and third_party(imported()[parts[0]]):
        return None  # Path.write_text, nn.MultiheadAttention
    if parts[0] == "tags" and parts[1] in strings():
        return None  # an MLflow search over a tag the code sets
    node = pyproject()
    for part in parts:
        node = node.get(part) if isinstance(node, dict) else None
    if node is not None:
        return None  # [tool.vulture]
    if parts[0] not in params_doc() and not any(m.rsplit(".", 1)[-1] == parts[0] for m in modules()) \
            and parts[0] not in classes():
        if all(p in strings() for p in parts):
            return None  # a field of a JSON document the code writes (info.seed)
        if all(p in defined() for p in parts) and parts[-1] in functions():
            return None  # a method reached through an object (env.unwrapped.engine_observation)
    return f"no module, name or params key {name}"


@cache
def defined() -> frozenset[str]:
    """Every name the code defines or uses as a key: functions, classes, variables, arguments, attributes, params
    keys' leaves, string constants."""
    out = set(strings())
    for path in code_files():
        for n in ast.walk(tree(path)):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(n.name)
            elif isinstance(n, ast.Name | ast.arg):
                out.add(n.id if isinstance(n, ast.Name) else n.arg)
            elif isinstance(n, ast.Attribute):
                out.add(n.attr)
            elif isinstance(n, ast.alias):
                out.add(n.asname or n.name.split(".")[-1])
            elif isinstance(n, ast.keyword) and n.arg:
                out.add(n.arg)
    out.update(m.rsplit(".", 1)[-1] for m in modules())

    def leaves(node):
        if isinstance(node, dict):
            for k, v in node.items():
                out.add(str(k))
                leaves(v)
    leaves(params_doc())
    return frozenset(out)


def check_metric(token: str) -> str | None:
    """``prefix/name``, a logged metric or tag: the code writes it whole, or as ``"prefix/" + name``."""
    prefix, _, name = token.partition("/")
    if token in strings() or (any(s.startswith(prefix + "/") for s in strings()) and name in defined()):
        return None
    return f"no metric or tag {token} in the code"


def check_token(token: str, command: bool = False) -> str | None:
    """A path, a dotted name, a name of the code or an agent spec, as a page or a message cites it; None where it
    exists."""
    token = token.strip("'\"()[],;")
    if token.startswith("search:"):
        token = token.removeprefix("search:").split("?")[0]
    token = token.split("=")[0].split("(")[0].rstrip(".:,;)")
    bare = token.replace("<variant>", "").replace("<reward>", "")
    if not token or "..." in token or re.search(r"://|^[/~$.]|^\.\.|[<>{}|]|^-|@", bare):
        return None
    if "/" in token:
        first = token.split("/")[0]
        looks = (ROOT / first).exists() or first in OUTPUTS
        if looks or token.rsplit(".", 1)[-1] in EXTENSIONS:
            return check_path(token)
        # in a command, a path under a folder the project does not have is the user's own (`--out analysis/human`)
        return check_metric(token) if not command and re.fullmatch(r"[a-z]\w*/[a-z]\w*", token) else None
    ext = token.rsplit(".", 1)[-1] if "." in token else ""
    if ext in EXTENSIONS and DOTTED.match(token.rsplit(".", 1)[0] + ".x"):
        if token in EXAMPLES or (ROOT / token).exists() or token in code_text():
            return None
        if ext == "lock" and token.removesuffix(".lock") in code_text():
            return None  # the file lock beside a database (``FileLock(path + ".lock")``)
        if ext == "py":
            return None if any(p.name == token for p in code_files()) \
                else f"no module file {token}"
        return f"no file {token} (an example's? name it in EXAMPLES)"
    if DOTTED.match(token):
        return check_name(token)
    if re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", token) and token not in defined():
        return f"no name {token} in the code or the params"
    return None


def check_command(words: list[str]) -> list[str]:
    """A shell command a page shows: ``koikoi``, ``make``, ``dvc``, ``python -m``; its paths and names too."""
    errors = []
    words = [w for w in words if w not in ("\\",)]
    if not words:
        return errors
    if words[0] == "koikoi":
        node, i = cli()["koikoi"], 1
        while i < len(words) and words[i] in node[1]:
            node, i = node[1][words[i]], i + 1
        if i < len(words) and re.fullmatch(r"[a-z][a-z-]+", words[i]) and node[1]:
            errors.append(f"koikoi has no command {' '.join(words[:i + 1])}")
        for w in words[i:]:
            flag = w.strip("[]").split("=")[0]
            if FLAG.match(flag) and flag not in node[0]:
                errors.append(f"{' '.join(words[:i])} has no option {flag}")
    elif words[0] == "make" and len(words) > 1 and re.fullmatch(r"[a-z][\w-]*", words[1]):
        if words[1] not in make_targets():
            errors.append(f"the Makefile has no target {words[1]}")
    elif words[0] == "dvc":
        for k, w in enumerate(words):
            if k and words[k - 1] in ("-S", "--set-param"):
                key = w.split("=")[0]
                if "..." not in key and not params_key(key):
                    errors.append(f"no params key {key}")
            elif words[1] in ("repro", "exp") and not w.startswith("-") and "@" in w or w in dvc_stages():
                if w.split("@")[0] in dvc_stages() and w not in stage_names():
                    errors.append(f"no DVC stage {w}")
    elif words[:2] == ["python", "-m"] and len(words) > 2:
        module = words[2]
        if module.startswith(("stages.", "pipeline.")) and "..." not in module and module not in modules():
            errors.append(f"no module {module}")
        elif module in modules():
            text = modules()[module].read_text()
            errors += [f"{module} has no option {w}" for w in words[3:] if FLAG.match(w) and f'"{w}"' not in text]
    if words[0] in ("koikoi", "make", "dvc", "python", "source", "git"):
        # a bare file name after an option is one the user picks (`--journal a.jsonl`), not one of the project
        errors += [e for k, w in enumerate(words[1:], 1)
                   if not (FLAG.match(words[k - 1]) and "/" not in w) and (e := check_token(w, command=True))]
    return errors


def check_text(text: str) -> list[str]:
    """Every citation of a page or message: the code spans and the fenced shell blocks."""
    errors, foreign = [], set()  # foreign: the options of other tools' commands the page shows
    for lang, block in FENCE.findall(text):
        if lang in ("", "bash", "sh"):
            for line in re.sub(r"\\\n", " ", block).splitlines():
                line = re.sub(r"(^|\s)#.*", "", line).strip()
                try:
                    words = shlex.split(line)
                except ValueError:
                    words = line.split()
                errors += check_command(words)
                if words and words[0] not in ("koikoi", "python"):
                    foreign.update(w.split("=")[0] for w in words if FLAG.match(w.split("=")[0]))
    prose = FENCE.sub("", text)
    for span in SPAN.findall(prose):
        try:
            words = shlex.split(span)
        except ValueError:
            words = span.split()
        if words and words[0] in ("koikoi", "make", "dvc", "python"):
            errors += check_command(words)
            continue
        if FORMULA.search(span):
            continue
        for w in words:
            flag = w.strip("[]").split("=")[0]
            if FLAG.match(flag) and flag.startswith("--") and len(words) <= 3:
                if flag not in every_flag() and flag not in code_text() and flag not in foreign:
                    errors.append(f"no koikoi or stage option {flag}")
            elif e := check_token(w):
                errors.append(e)
    return errors


def messages(path: Path) -> list[tuple[int, str]]:
    """The error messages of a module: the text of what ``raise``, ``sys.exit`` and ``.error`` are given."""
    out = []
    for node in ast.walk(tree(path)):
        call = node.exc if isinstance(node, ast.Raise) else node if isinstance(node, ast.Call) else None
        if not isinstance(call, ast.Call):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if isinstance(node, ast.Call) and name not in ("exit", "error"):
            continue
        parts = [c.value for a in call.args for c in ast.walk(a)
                 if isinstance(c, ast.Constant) and isinstance(c.value, str)]
        if parts:
            out.append((call.lineno, " ".join(parts)))
    return out


# ---- the tests --------------------------------------------------------------------------------------

def test_every_citation_of_the_product_pages_exists():
    errors = [f"{page.relative_to(ROOT)}: {e}" for page in PAGES for e in check_text(page.read_text())]
    assert not errors, "\n".join(sorted(set(errors)))


def test_every_citation_of_an_error_message_exists():
    errors = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for line, text in messages(path):
            words = [w for w in re.split(r"\s+", re.sub(r"`", " ", text)) if w]
            cited = [w for w in words if ("/" in w and w.split("/")[0] in ("docs", "pipeline", "stages", "tests"))
                     or w.startswith("pipeline.")]
            errors += [f"{path.relative_to(ROOT)}:{line}: {e}" for w in cited if (e := check_token(w))]
            for m in re.finditer(r"koikoi [a-z][a-z -]*(?: --[a-z][a-z-]*)+", text):
                errors += [f"{path.relative_to(ROOT)}:{line}: {e}" for e in check_command(m.group(0).split())]
    assert not errors, "\n".join(errors)


def test_the_checker_finds_what_drifted():
    """The shapes the survey of issue 88 found, each one refused; the shapes that are not the project's, left alone."""
    drifted = ["`tests/model/test_hostile_model_dir.py`", "`rl.selfplay.play_job`", "`duels.rl_vs_sl_games`",
               "`duels.search.model`", "`load_value`", "`search/deals_per_action`", "`no_such_module.py`",
               "`koikoi bench train`", "`koikoi bench rl-memory`", "`koikoi duel a b --no-such-flag`",
               "`make no-such-target`", "`dvc exp run -S rl.no_such_key=1`", "`pipeline.net.rollout`",
               "`agents.load_agent`", "`executions.record_stage`", "`selfplay._Game`",
               "`tests/rl/test_training.py::test_no_such_test`", "`models/no_such_model`",
               "`tags.no_such_tag`", "`params.rl.no_such_key`", "`tune.space.no_such_knob`"]
    assert [t for t in drifted if not check_text(t)] == []
    fine = ["`duels.elo`", "`results/tune`", "`models/rl/<variant>/rollout`", "`checkpoints/rl/<variant>/state.pt`",
            "`my.yaml`", "`dvc repro --force`", "`mlflow ui --port 5000`", "`selfplay.batched.play_job`",
            "`lineup.loader.load_agent`", "`SearchPlayer.improve`", "`runner.job_blocks`", "`torch.backends.cpu`",
            "`search:models/rl/wp?deals=8`", "`rl.phase2.loops.wp`", "`koikoi duel a b --sprt 0.5 0.53`",
            "`tests/setup/test_docs.py::test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page`",
            "`tags.dvc_exp`", "`params.rl.phase1.loops`", "`Path.write_text`", "`[tool.vulture]`", "`info.seed`",
            "`LLR = N * sum_i q_i`", "```bash\nkoikoi duel models/sl random --journal a.jsonl\n```",
            "```bash\nmlflow server \\\n  --allowed-hosts x\n```\n`--allowed-hosts`",
            "```bash\nkoikoi analyse data/records --summary --out analysis/human\n```"]
    assert [t for t in fine if check_text(t)] == []
