"""The champion when it is a searcher: a pyfunc model that plays as the champion plays, not its bare network.

``register_searcher(spec, tags)`` logs, into the active run (the duels stage's), a model whose data are the
searcher's model directory, its win-probability table and its spec, with the project's code, and registers it as a
version of ``koikoi-champion`` tagged with the searcher's own figures. ``_load_pyfunc`` rebuilds the agent with
``lineup.loader.load_agent`` (the spec pointed at the logged files; the spec is otherwise passed as it is), so::

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
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from ..agents.specs import PREFIX, model_of, split_spec
from ..net.model_dir import CONFIG_FILE, MODEL_FILE

AGENT_FILE = "agent.json"  # in the logged data: the spec as the duels played it, and the files it reads
WINPROB = "models/winprob/winprob.json"  # the table a spec reads when its query names none (pipeline.search)
AGENT_SHA = "agent_sha256"  # tag: the hash of the spec, the weights and the table, so a rerun reuses the version


def table_of(spec: str) -> str:
    """The win-probability table a ``search:`` spec reads: its ``winprob=`` option, else the search default."""
    for seg in split_spec(spec)[1].split("&"):
        if seg.startswith("winprob="):
            return unquote(seg[len("winprob="):])
    return WINPROB


def local_spec(spec: str, model_dir: Path, table: Path | None) -> str:
    """``spec`` with its model directory and table replaced by ``model_dir`` and ``table`` (its other options as
    they are)."""
    segs = [s for s in split_spec(spec)[1].split("&") if s and not s.startswith("winprob=")]
    if table is not None:
        segs.append(f"winprob={quote(str(table), safe='/')}")
    return f"{PREFIX}{model_dir}" + (f"?{'&'.join(segs)}" if segs else "")


def agent_sha256(spec: str, model_dir: Path, table: Path | None) -> str:
    h = hashlib.sha256(spec.encode())
    for f in (model_dir / MODEL_FILE, model_dir / CONFIG_FILE, table):
        if f is not None:
            h.update(f.read_bytes())
    return h.hexdigest()


def register_searcher(spec: str, tags: dict[str, Any], name: str, network: Any = None) -> str | None:
    """Log the searcher ``spec`` into the active MLflow run and make it a version of ``name`` tagged with ``tags``
    (a version of the same spec, weights and table is reused); ``network``: the registered version of the network
    it searches with, if any, named in a tag. Returns the version, None (said on stderr) when there is no active
    run or its model is not there."""
    import mlflow
    import torch

    model_dir = Path(model_of(spec))
    table = Path(table_of(spec))
    table = table if table.is_file() else None  # reward=point reads none; a wp searcher fails to load without it
    run = mlflow.active_run()
    if run is None or not (model_dir / MODEL_FILE).is_file():
        print(f"registry: {'no active run' if run is None else f'no model in {model_dir}'}: {name} not set for "
              f"{spec}", file=sys.stderr)
        return None
    client = mlflow.MlflowClient()
    digest = agent_sha256(spec, model_dir, table)
    same = [v for v in client.search_model_versions(f"name='{name}'") if v.tags.get(AGENT_SHA) == digest]
    if same:
        return str(max(int(v.version) for v in same))
    with tempfile.TemporaryDirectory(prefix="koikoi-champion-") as tmp:
        data = Path(tmp) / "agent"
        (data / "model").mkdir(parents=True)
        for f in (MODEL_FILE, CONFIG_FILE):
            shutil.copy2(model_dir / f, data / "model" / f)
        if table is not None:
            shutil.copy2(table, data / "winprob.json")
        (data / AGENT_FILE).write_text(json.dumps({"spec": spec, "table": table is not None}) + "\n")
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
        f"The searcher `{spec}`: the network of `{model_dir}`"
        + (f" (registered as {network.name} version {network.version}, where its training lineage is)"
           if network is not None else "")
        + " searching at decision time, as the duels played it; logged by the duels run. Its figures (tags) are "
          "its own. `predict` takes a list of observations (`pipeline.engine.Observation`) and returns the "
          "searched action of each."))
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
    table = data / "winprob.json" if doc.get("table") else None
    return AgentPredictor(load_agent(local_spec(doc["spec"], data / "model", table)))
