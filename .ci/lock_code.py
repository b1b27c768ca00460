"""``make lock``: bring dvc.lock's code and params hashes in step with the working tree, leaving the outputs'
hashes as they are. For a checkout without the pipeline's outputs (``dvc commit`` needs them present) after a
change that moved code but not what the stages write; a change that alters the outputs needs ``dvc repro``.
``tests/cli/test_dvc_lock.py`` checks the same deps (``code_deps``, read from here)."""

from collections.abc import Iterator

from dvc.dependency.param import ParamsDependency
from dvc.repo import Repo


def code_deps(stages: list) -> Iterator[tuple]:
    """``(stage, dep)`` for each dep of ``stages`` that no stage writes and that is not a params dep: the code and
    records whose hashes dvc.lock keeps; another stage's output keeps the hash its run wrote."""
    written = {str(o.def_path) for s in stages for o in s.outs}
    below = tuple(f"{w}/" for w in written)
    for stage in stages:
        for dep in stage.deps:
            path = str(dep.def_path)
            if not (isinstance(dep, ParamsDependency) or path in written or path.startswith(below)):
                yield stage, dep


if __name__ == "__main__":
    with Repo(".") as repo, repo.lock:
        stages = [s for s in repo.index.stages if not s.frozen]
        for _, dep in code_deps(stages):
            dep.save()
        for stage in stages:
            for params in stage.params:
                params.save()
            stage.dvcfile.dump(stage, update_pipeline=False)
