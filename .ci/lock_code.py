"""``make lock``: bring dvc.lock's code and params hashes in step with the working tree, leaving the outputs'
hashes as they are. For a checkout without the pipeline's outputs (``dvc commit`` needs them present) after a
change that moved code but not what the stages write; a change that alters the outputs needs ``dvc repro``.
``tests/cli/test_dvc_lock.py`` is the check this satisfies."""

from dvc.dependency.param import ParamsDependency
from dvc.repo import Repo

with Repo(".") as repo, repo.lock:
    stages = [s for s in repo.index.stages if not s.frozen]
    written = {str(o.def_path) for s in stages for o in s.outs}
    below = tuple(f"{w}/" for w in written)
    for stage in stages:
        for dep in stage.deps:
            path = str(dep.def_path)  # another stage's output keeps the hash its run wrote
            if isinstance(dep, ParamsDependency) or not (path in written or path.startswith(below)):
                dep.save()
        stage.dvcfile.dump(stage, update_pipeline=False)
