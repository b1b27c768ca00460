"""The champion when it is a searcher: a pyfunc model that plays as the champion played, not its bare network.

``register_searcher(spec, tags, name, seed=..., inference=...)`` logs, into the active run (the duels stage's), a
model whose data are every file the searcher's spec reads (``search.spec.read_paths``: its model directory, its
rollout policy, its win-probability table, any option that names a path), its spec, and the seed and inference setup
the duels played it with, with the project's code, and registers it as a version of ``koikoi-champion`` keyed by all
of them (tag ``agent_sha256``) and tagged with the searcher's own figures. ``_load_pyfunc`` rebuilds the agent with
``lineup.loader.load_agent`` from the spec pointed at the logged copies, with that seed and setup, so from any
directory, with no ``models/`` there::

    m = mlflow.pyfunc.load_model("models:/koikoi-champion@champion")
    actions = m.predict([state.observation(state.current_player)])  # the searched action per observation
    agent = m.get_raw_model()                                        # the search agent itself
"""

from __future__ import annotations

import hashlib
import importlib
import json
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.specs import model_of
from ..net.inference import FP32, Inference
from ..runtime.fingerprints import file_fingerprint
from ..search.spec import read_paths, with_paths

AGENT_FILE = "agent.json"  # in the logged data: the spec, how it played (seed, inference) and the files it reads
AGENT_SHA = "agent_sha256"  # tag: the hash of the spec, how it plays and every file it reads: a rerun reuses it


def kept_files(path: Path) -> list[Path]:
    """What is kept of a path a spec names: a directory's files (a model directory's weights and config), or the
    file itself; none where there is nothing."""
    if path.is_dir():
        return sorted(f for f in path.iterdir() if f.is_file())
    return [path] if path.is_file() else []


def agent_sha256(spec: str, play: dict) -> str:
    """The key of a searcher's version: its spec, ``play`` (its seed and inference) and every file it reads
    (``read_paths``), each by what names it."""
    files = {n: file_fingerprint(p) for n, p in read_paths(spec).items()}
    return hashlib.sha256(json.dumps({"spec": spec, **play, "files": files}, sort_keys=True).encode()).hexdigest()


def register_searcher(spec: str, tags: dict[str, Any], name: str, network: Any = None, seed: int = 0,
                      inference: Inference = FP32) -> str | None:
    """Log the searcher ``spec``, seeded ``seed`` and running its networks in ``inference`` (as the duels played it),
    into the active MLflow run and make it a version of ``name`` tagged with ``tags`` (a version of the same spec,
    play and files is reused); ``network``: the registered version of the network it searches with, if any, named
    in a tag. Returns the version, None (said on stderr) when there is no active run or a file it reads is not
    there."""
    import mlflow
    import torch

    paths = {n: Path(p) for n, p in read_paths(spec).items()}
    missing = [f"{n} {p}" for n, p in paths.items() if not kept_files(p)]
    run = mlflow.active_run()
    if run is None or missing:
        print(f"registry: {'no active run' if run is None else f'no {missing[0]}'}: {name} not set for {spec}",
              file=sys.stderr)
        return None
    play = {"seed": int(seed), "inference": asdict(inference)}
    client = mlflow.MlflowClient()
    digest = agent_sha256(spec, play)
    same = [v for v in client.search_model_versions(f"name='{name}'") if v.tags.get(AGENT_SHA) == digest]
    if same:
        return str(max(int(v.version) for v in same))
    with tempfile.TemporaryDirectory(prefix="koikoi-champion-") as tmp:
        data = Path(tmp) / "agent"
        logged = {}
        for n, p in paths.items():  # data/<name>/: a model directory's files, or the file by its own name
            (data / n).mkdir(parents=True)
            for f in kept_files(p):
                shutil.copy2(f, data / n / f.name)
            logged[n] = n if p.is_dir() else f"{n}/{p.name}"
        (data / AGENT_FILE).write_text(json.dumps({"spec": spec, "paths": logged, **play}) + "\n")
        code = Path(tmp) / "pipeline"
        shutil.copytree(Path(__file__).resolve().parents[1], code, ignore=shutil.ignore_patterns("__pycache__"))
        info = mlflow.pyfunc.log_model(
            name=name, loader_module=__name__, data_path=str(data), code_paths=[str(code)],
            pip_requirements=[f"torch=={torch.__version__.split('+')[0]}", f"numpy=={np.__version__}"],
            registered_model_name=name, tags={AGENT_SHA: digest})
    version = str(info.registered_model_version)
    client.set_model_version_tag(name, version, AGENT_SHA, digest)
    if network is not None:
        client.set_model_version_tag(name, version, "network", f"{network.name}/{network.version}")
    client.update_model_version(name, version, description=(
        f"The searcher `{spec}`: the network of `{model_of(spec)}`"
        + (f" (registered as {network.name} version {network.version}, where its training lineage is)"
           if network is not None else "")
        + f" searching at decision time, seeded {seed}, its networks in {inference.setup}, as the duels played it; "
          "logged by the duels run with every file its spec reads. Its figures (tags) are its own. `predict` takes "
          "a list of observations (`pipeline.engine.Observation`) and returns the searched action of each."))
    return version


class AgentPredictor:
    """What ``mlflow.pyfunc.load_model`` wraps for a searcher: the agent its spec names."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def predict(self, model_input: Any, params: dict | None = None) -> np.ndarray:
        """The agent's action (an int64 action id) for each observation of ``model_input`` (a list of
        ``pipeline.engine.Observation``, or one)."""
        from ..engine import Observation

        obs = [model_input] if isinstance(model_input, Observation) else list(model_input)
        if not all(isinstance(o, Observation) and o.to_act for o in obs):
            raise ValueError("predict: pass observations of the player to act (state.observation(state.current_"
                             "player))")
        return np.asarray(self.agent.act(obs), dtype=np.int64)

    def get_raw_model(self) -> Any:
        return self.agent


def _load_pyfunc(data_path: str) -> AgentPredictor:
    """MLflow's loader-module entry point: ``data_path`` is the logged data (``register_searcher``)."""
    # by name: only a consumer of the model runs this, never a stage, so the agents and the search it loads are no
    # code dep of the stages that log models (tests/setup/test_dvc_deps.py follows static imports)
    load_agent = importlib.import_module("pipeline.lineup.loader").load_agent
    data = Path(data_path)
    doc = json.loads((data / AGENT_FILE).read_text())
    spec = with_paths(doc["spec"], {n: str(data / p) for n, p in doc["paths"].items()})
    return AgentPredictor(load_agent(spec, seed=doc["seed"], inference=Inference(**doc["inference"])))
