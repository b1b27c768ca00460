"""The Makefile's own logic, run for real on throwaway projects (issue 87): `make repro` tells the records check's
three answers apart (changed, unchanged, error: an error stops it with its message), and `make setup` takes every
package, torch included, from the sources pip is configured with (a pip.conf, PIP_INDEX_URL) alone: a local index
served on loopback, holding a made-up dependency and a stand-in torch wheel, in a venv of its own."""

from __future__ import annotations

import base64
import hashlib
import http.server
import inspect
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _make(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=300)


def _script(path: Path, text: str) -> None:
    path.write_text(f"#!/bin/sh\n{text}\n")
    path.chmod(0o755)


@pytest.fixture
def repro_project(tmp_path) -> Path:
    """The Makefile with a venv already set up (its stamps), whose python answers the records check with $CODE
    (and $SAY on stderr), anything else (the README's table) with 0, and whose dvc logs its arguments."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    bin_dir = tmp_path / ".venv/bin"
    bin_dir.mkdir(parents=True)
    for stamp in (".torch-cpu", ".installed"):  # in that order: setup is up to date
        (tmp_path / ".venv" / stamp).touch()
    _script(bin_dir / "python", 'case "$*" in *--changed*) echo "$SAY" >&2; exit "$CODE" ;; esac')  # readme: 0
    _script(bin_dir / "dvc", 'echo "dvc $*" >> dvc.log')
    return tmp_path


@pytest.mark.parametrize(("code", "forced", "stops"), [(0, False, False), (3, True, False), (1, False, True),
                                                       (2, False, True)])
def test_make_repro_tells_the_records_checks_answers_apart(repro_project, code, forced, stops):
    env = {**os.environ, "CODE": str(code), "SAY": "records: error: boom" if stops else "records: fine"}
    done = _make(repro_project, "repro", env=env)
    log = (repro_project / "dvc.log").read_text() if (repro_project / "dvc.log").exists() else ""
    assert ("dvc repro --force --single-item records" in log) == forced
    if stops:  # an error: its message shown, make stopped before dvc repro
        assert done.returncode != 0 and "records: error: boom" in done.stderr and log == ""
    else:
        assert done.returncode == 0 and log.splitlines()[-1] == "dvc repro"


def _wheel(out: Path, name: str, version: str, files: dict[str, str], requires: list[str] = ()) -> Path:
    """A pure-Python wheel of ``files`` (path -> text) into ``out``."""
    dist = f"{name.replace('-', '_')}-{version}"
    requires_dist = "".join(f"Requires-Dist: {r}\n" for r in requires)
    meta = {f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires_dist}",
            f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = f"{dist}.dist-info/RECORD"
    rows = []
    path = out / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for arc, text in {**files, **meta}.items():
            data = text.encode()
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{arc},sha256={digest},{len(data)}")
        z.writestr(record, "\n".join([*rows, f"{record},,"]) + "\n")
    return path


# An in-tree PEP 517 backend: the throwaway project builds with nothing from any index (setuptools is not in it).
BACKEND = '''
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from wheels import wheel

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return wheel(Path(wheel_directory), "probe", "0", {"probe.py": "X = 1\\n"}, ["koikoi-probe-dep==1.0"]).name

build_editable = build_wheel
'''


@pytest.fixture
def index(tmp_path) -> Iterator[tuple[str, list[str], Path]]:
    """A PEP 503 simple index on loopback, empty at first: ``(its URL, the paths asked of it, its folder)``; a wheel
    is added with ``_serve``."""
    root = tmp_path / "index"
    (root / "simple").mkdir(parents=True)
    asked: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *args) -> None:
            asked.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/", asked, root
    server.shutdown()


def _serve(root: Path, wheel: Path, project: str) -> None:
    (root / "simple" / project).mkdir(parents=True, exist_ok=True)
    shutil.move(wheel, root / "simple" / project / wheel.name)
    (root / "simple" / project / "index.html").write_text(f'<a href="{wheel.name}">{wheel.name}</a>\n')


@pytest.mark.slow
def test_make_setup_takes_every_package_from_pips_own_sources(tmp_path, index):
    url, asked, root = index
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Makefile", project / "Makefile")
    (project / "wheels.py").write_text("import base64\nimport hashlib\nimport zipfile\nfrom pathlib import Path\n\n\n"
                                       + inspect.getsource(_wheel).replace("def _wheel(", "def wheel("))
    (project / "probe_backend.py").write_text(BACKEND)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "probe_backend"\nbackend-path = ["."]\n')
    _serve(root, _wheel(tmp_path, "koikoi-probe-dep", "1.0", {"koikoi_probe_dep.py": "VALUE = 42\n"}),
           "koikoi-probe-dep")
    _serve(root, _wheel(tmp_path, "torch", "2.13.0+cpu", {"torch/__init__.py": (
        "__version__ = '2.13.0+cpu'\nclass version: cuda = None\nclass cuda:\n"
        "    @staticmethod\n    def is_available(): return False\n")}), "torch")
    subprocess.run([sys.executable, "-m", "venv", str(project / ".venv")], check=True, timeout=300)
    # none of this machine's own pip configuration: a home and config dirs of its own, no PIP_* variable
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_CONFIG_DIRS=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    py = project / ".venv/bin/python"

    # a pip.conf naming the local index: torch's stand-in and the project's dependency come from it
    conf = home / ".config/pip/pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[global]\nindex-url = {url}\n")
    done = _make(project, "setup", "TORCH=cpu", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "torch 2.13.0+cpu CUDA None GPU usable: False" in done.stdout
    assert subprocess.run([py, "-c", "import koikoi_probe_dep, probe; print(koikoi_probe_dep.VALUE)"],
                          capture_output=True, text=True).stdout.strip() == "42"
    assert {"/simple/torch/", "/simple/koikoi-probe-dep/"} <= set(asked)
    assert not (project / ".venv/bin/uv").exists()  # uv would not read the pip.conf

    # PIP_INDEX_URL alone, no pip.conf: the same, the project installed again
    conf.unlink()
    subprocess.run([py, "-m", "pip", "uninstall", "-qy", "probe", "koikoi-probe-dep"], check=True, env=env)
    (project / ".venv/.installed").unlink()
    asked.clear()
    done = _make(project, "setup", env={**env, "PIP_INDEX_URL": url})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "/simple/koikoi-probe-dep/" in asked

    # a torch build its sources do not hold: said in one line, never fetched from PyTorch's index instead
    done = _make(project, "setup", "TORCH=cu126", env={**env, "PIP_INDEX_URL": url})
    assert done.returncode != 0
    assert "make setup: torch==2.13.0+cu126 is not among the sources pip is configured with" in done.stdout
