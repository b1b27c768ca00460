"""The committed dvc.lock is in step with the committed code and params: a fresh clone's `make repro` then
reruns nothing it need not. A code dep is a dep no stage writes (``pipeline``, ``tests/engine``); data deps
(``data/sl``, ``models/...``) are other stages' outputs, absent from a fresh clone and checked by DVC itself.
Hashes come from DVC's own reading of the working tree (``.dvcignore`` applied)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "dvc.lock"


@pytest.mark.skipif(not LOCK.is_file(), reason="no dvc.lock: the pipeline has not been run in this checkout")
def test_dvc_lock_matches_the_code_and_params():
    from dvc.repo import Repo

    stale = []
    with Repo(str(ROOT)) as repo:
        stages = [s for s in repo.index.stages if not s.frozen]
        code_deps = runpy.run_path(str(ROOT / ".ci/lock_code.py"))["code_deps"]  # what ``make lock`` rehashes
        for stage, dep in code_deps(stages):
            path = str(dep.def_path)
            if not dep.hash_info:  # not in dvc.lock yet: DVC runs the stage anyway
                stale.append(f"{stage.addressing} ({path}: not in dvc.lock)")
            elif dep.changed_checksum():
                stale.append(f"{stage.addressing} ({path})")
        for stage in stages:
            for params in stage.params:
                changed = params.status()
                if changed:
                    what = changed[str(params)]  # a key: status dict; a whole file (``params.yaml:``): one word
                    keys = what if isinstance(what, str) else ", ".join(sorted(what))
                    stale.append(f"{stage.addressing} (params: {keys})")
    assert not stale, (f"dvc.lock does not match the working tree for {len(stale)} stage(s): {'; '.join(stale)}; "
                       "run `dvc commit` (or `dvc repro` where the outputs must change) and commit dvc.lock")
