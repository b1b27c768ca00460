"""Models a team can share: a tiny pipeline's outputs pushed to a folder remote (as docs/development.md sets one
up) and pulled into a fresh clone, where ``dvc status`` and ``dvc repro`` find nothing to do; the metrics come
with git, not the remote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DVC = Path(sys.executable).parent / "dvc"
UP_TO_DATE = "Data and pipelines are up to date."
WRITE = ("import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(parents=True, exist_ok=True); "
         "p.write_text(sys.argv[2])")
PIPELINE = {"stages": {
    "data": {"cmd": f'python -c "{WRITE}" data/sl/train.txt samples', "outs": ["data/sl/train.txt"]},
    "train": {"cmd": f'python -c "{WRITE}" models/sl/model.pt weights && '
                     f'python -c "{WRITE}" results/train/metrics.json 1',
              "deps": ["data/sl/train.txt"], "outs": ["models/sl/model.pt"],
              "metrics": [{"results/train/metrics.json": {"cache": False}}]},
}}


def dvc(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_NO_ANALYTICS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([str(DVC), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
def test_outputs_pushed_to_a_folder_remote_are_pulled_into_a_fresh_clone(tmp_path):
    project, remote, clone = tmp_path / "project", tmp_path / "shared-store", tmp_path / "clone"
    project.mkdir()
    git(project, "init", "-q")
    assert dvc(project, "init", "-q").returncode == 0
    (project / "dvc.yaml").write_text(yaml.safe_dump(PIPELINE, sort_keys=False))
    first = dvc(project, "repro")
    assert first.returncode == 0, first.stderr
    # as docs/development.md says: a folder remote, the default for push and pull
    assert dvc(project, "remote", "add", "-d", "shared", str(remote)).returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "pipeline run")
    pushed = dvc(project, "push")
    assert pushed.returncode == 0, pushed.stderr
    assert "2 files pushed" in pushed.stdout  # the model and the dataset; the metrics are in git

    git(tmp_path, "clone", "-q", str(project), str(clone))
    assert (clone / "results/train/metrics.json").is_file() and not (clone / "models/sl/model.pt").exists()
    pulled = dvc(clone, "pull")
    assert pulled.returncode == 0, pulled.stderr
    assert (clone / "models/sl/model.pt").read_text() == "weights"
    status = dvc(clone, "status")
    assert status.returncode == 0 and UP_TO_DATE in status.stdout, status.stdout
    again = dvc(clone, "repro")
    assert again.returncode == 0 and UP_TO_DATE in again.stdout, again.stdout + again.stderr
    assert git(clone, "status", "--porcelain") == ""  # nothing rewritten


def test_the_makefile_pulls_and_pushes_and_the_docs_say_how_to_set_up_a_remote():
    makefile = (ROOT / "Makefile").read_text()
    assert "\npull: setup\n\t$(BIN)/dvc pull" in makefile and "\npush: setup\n\t$(BIN)/dvc push" in makefile
    assert "dvc remote add -d shared" in (ROOT / "docs/development.md").read_text()
    assert "core" in (ROOT / ".dvc/config").read_text() and "remote" not in (ROOT / ".dvc/config").read_text()
