"""MLflow models that work outside the repository, their registration, the ``rated`` aliases and the champion.

``log_model(model_dir, register)`` logs a model directory into the active MLflow run (once: a rerun
reuses what a killed run logged) as a
pyfunc model with MLflow's loader-module workflow: the directory (``model.pt`` + ``config.json``)
is the model's data, the project's ``pipeline`` package travels with it (``code_paths``) and
``_load_pyfunc`` below rebuilds the network, so from any directory with torch and mlflow installed::

    m = mlflow.pyfunc.load_model("models:/koikoi-champion@champion")
    values = m.predict({"x": x, "decision": d})   # x (B, 270, 50) float32, d (B,) int64 -> (B, 50) float32
    net = m.get_raw_model()                        # the KoiKoiNet itself

Registration happens only where a DVC stage asks for it (``registry.register`` in params.yaml); a
registered version carries the SHA-256 of its ``model.pt``, which is how the ``duels`` stage finds the
version of each model it played and points that model's ``rated`` alias at it, tagged with its rating. The
stage's champion (``duel.champion``: a model or a searcher over one) is a version of its own registered model,
``koikoi-champion``, with the ``champion`` alias: the agent itself (a model directory's network, or a searcher's
pyfunc that runs its search, ``champion_model``), its spec and its own figures as tags (``spec``, ``win_rate``, ...),
so the MLflow UI shows what ``koikoi play`` serves. A logged model is named
after its registered model (``koikoi-sl``, ``koikoi-rl-wp``; phase 1: ``koikoi-rl-wp-phase1``), and a
registered version is made from the logged model of the run that trained its weights and described with
its lineage (``lineage.describe_version``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.specs import is_search, model_of
from ..engine import GameState
from ..net.encoding import NUM_FEATURES, NUM_TOKENS, decisions, encode
from ..net.inference import FP32, Inference
from ..net.model_dir import CONFIG_FILE, MODEL_FILE
from .champion_model import register_searcher
from .lineage import SHA_TAG, describe_version

CHAMPION = "champion"  # the alias of koikoi-champion's version holding the duels' champion
CHAMPION_MODEL = "koikoi-champion"
RATED = "rated"  # the alias of the version of each registered model the duels played last
# Registered model per model directory kind (meta "kind", and "variant" for RL).
REGISTERED = {"sl": "koikoi-sl", "rl/point": "koikoi-rl-point", "rl/wp": "koikoi-rl-wp"}


def registered_name(meta: dict) -> str | None:
    """The registered model for a model directory's meta: ``koikoi-sl``, ``koikoi-rl-point``, ``koikoi-rl-wp``."""
    key = meta.get("kind") if meta.get("kind") != "rl" else f"rl/{meta.get('variant')}"
    return REGISTERED.get(key)


def model_name(meta: dict) -> str:
    """A logged model's name: its registered model's, with the phase for an RL phase-1 model."""
    base = registered_name(meta) or f"koikoi-{meta.get('kind', 'model')}"
    return f"{base}-phase1" if meta.get("kind") == "rl" and meta.get("phase") == 1 else base


def _meta(model_dir: str | Path) -> dict:
    return json.loads((Path(model_dir) / CONFIG_FILE).read_text()).get("meta", {})


def weights_sha256(model_dir: str | Path) -> str:
    return hashlib.sha256((Path(model_dir) / MODEL_FILE).read_bytes()).hexdigest()


def signature() -> Any:
    """Inputs ``x`` (B, 270, 50) float32 and ``decision`` (B,) int64; output (B, 50) float32."""
    from mlflow.models import ModelSignature
    from mlflow.types.schema import Schema, TensorSpec

    inputs = Schema([TensorSpec(np.dtype(np.float32), (-1, NUM_FEATURES, NUM_TOKENS), "x"),
                     TensorSpec(np.dtype(np.int64), (-1,), "decision")])
    return ModelSignature(inputs=inputs, outputs=Schema([TensorSpec(np.dtype(np.float32), (-1, NUM_TOKENS))]))


def input_example() -> dict[str, np.ndarray]:
    """Two real decisions (a discard, then the next player's) of a seeded game, encoded."""
    s = GameState(seed=0)
    obs = [s.observation(s.current_player)]
    s.step(s.legal_actions()[0])
    obs.append(s.observation(s.current_player))
    return {"x": encode(obs), "decision": decisions(obs)}


@dataclass(frozen=True)
class LoggedModelRef:
    """What ``log_model`` logged (or found already logged): its URI, id and run, and the registered version."""

    model_uri: str
    model_id: str | None
    registered_model_version: str | int | None = None
    run_id: str | None = None


def log_model(model_dir: str | Path, register: bool = False, weights_from: str | None = None) -> LoggedModelRef:
    """Log ``model_dir`` into the active MLflow run as a model named ``model_name(meta)``; with ``register``,
    also as a new version of its registered model (``registered_name`` of its meta), described with its
    lineage.

    ``weights_from``: a run that logged these very weights (phase 2 after no loop: phase 1's run). Its
    logged model is used (and registered) instead of a copy, so that the version leads to the run that
    trained the weights.

    Idempotent within a run, so a rerun that finishes a killed run again adds nothing twice: a model
    of the run that holds the same weights (tag ``model_sha256``) is reused, and a half-logged one
    (PENDING, left by a kill while it was logged, or FAILED) is deleted first."""
    import mlflow
    import torch

    meta = _meta(model_dir)
    registered_model_name = registered_name(meta) if register else None
    if register and registered_model_name is None:
        raise ValueError(f"{model_dir}: no registered model for meta kind {meta.get('kind')!r}")
    sha = weights_sha256(model_dir)
    run = mlflow.active_run()
    if run is None:
        raise ValueError("log_model: no active MLflow run")
    client = mlflow.MlflowClient()
    done = _logged_before(client, run.info.experiment_id, run.info.run_id, sha)
    if done is None and weights_from:
        source = client.get_run(weights_from)
        done = _logged_before(client, source.info.experiment_id, weights_from, sha, tidy=False)
    if done is not None:
        version = (_version_of(client, registered_model_name, done.source_run_id, sha)
                   if registered_model_name else None)
        if registered_model_name and version is None:
            version = mlflow.register_model(done.model_uri, registered_model_name).version
        ref = LoggedModelRef(done.model_uri, done.model_id, None if version is None else str(version),
                             done.source_run_id)
    else:
        with tempfile.TemporaryDirectory(prefix="koikoi-model-") as tmp:
            data = Path(tmp) / "model_dir"
            data.mkdir()
            for f in (MODEL_FILE, CONFIG_FILE):  # not the checkpoints beside them
                shutil.copy2(Path(model_dir) / f, data / f)
            code = Path(tmp) / "pipeline"  # the whole package, not this module's subpackage
            shutil.copytree(Path(__file__).resolve().parents[1], code, ignore=shutil.ignore_patterns("__pycache__"))
            info = mlflow.pyfunc.log_model(
                name=model_name(meta), loader_module=__name__, data_path=str(data), code_paths=[str(code)],
                signature=signature(), input_example=input_example(),
                pip_requirements=[f"torch=={torch.__version__.split('+')[0]}", f"numpy=={np.__version__}"],
                registered_model_name=registered_model_name, tags={SHA_TAG: sha},
            )
        ref = LoggedModelRef(info.model_uri, info.model_id, info.registered_model_version, run.info.run_id)
    if registered_model_name is not None:
        client.set_model_version_tag(registered_model_name, ref.registered_model_version, SHA_TAG, sha)
        describe_version(client, registered_model_name, str(ref.registered_model_version))
    return ref


def _logged_before(client: Any, experiment_id: str, run_id: str, sha: str, tidy: bool = True) -> Any | None:
    """The READY logged model of run ``run_id`` holding weights ``sha``; with ``tidy``, the run's half-logged
    ones are deleted."""
    from mlflow.entities import LoggedModelStatus

    found = None
    for m in client.search_logged_models([experiment_id]):
        if m.source_run_id != run_id:
            continue
        if m.status != LoggedModelStatus.READY:
            if tidy:
                client.delete_logged_model(m.model_id)
        elif m.tags.get(SHA_TAG) == sha and found is None:
            found = m
    return found


def _version_of(client: Any, name: str, run_id: str, sha: str) -> str | None:
    """The version of registered model ``name`` made from run ``run_id`` with weights ``sha``, if any."""
    for v in client.search_model_versions(f"name='{name}'"):
        if v.run_id == run_id and v.tags.get(SHA_TAG, sha) == sha:
            return str(v.version)
    return None


class KoiKoiPredictor:
    """What ``mlflow.pyfunc.load_model`` wraps: the network in eval mode, on CPU."""

    def __init__(self, net: Any, meta: dict) -> None:
        self.net, self.meta = net, meta

    def predict(self, model_input: dict[str, np.ndarray], params: dict | None = None) -> np.ndarray:
        """The network's value of each of the 50 tokens, ``(B, 50)`` float32 (illegal tokens included:
        mask them with the observation's legal actions)."""
        import torch

        x = np.asarray(model_input["x"], dtype=np.float32)
        d = np.asarray(model_input["decision"], dtype=np.int64)
        if x.ndim != 3 or x.shape[1:] != (NUM_FEATURES, NUM_TOKENS) or d.shape != (x.shape[0],):
            raise ValueError(f"predict: x must be (B, {NUM_FEATURES}, {NUM_TOKENS}) and decision (B,), "
                             f"got {x.shape} and {d.shape}")
        if ((d < 0) | (d > 2)).any():
            raise ValueError("predict: decision must be 0 (discard), 1 (pick) or 2 (koi-koi)")
        with torch.inference_mode():
            return self.net(torch.from_numpy(x), torch.from_numpy(d)).float().numpy()

    def get_raw_model(self) -> Any:
        return self.net


def _load_pyfunc(data_path: str) -> KoiKoiPredictor:
    """MLflow's loader-module entry point: ``data_path`` is the logged model directory."""
    from ..net.modelio import load_model  # torch: loaded only when this runs

    return KoiKoiPredictor(*load_model(data_path))


def find_version(model_dir: str | Path) -> Any | None:
    """The registered version holding exactly ``model_dir``'s weights (the newest such), or None."""
    import mlflow

    name = registered_name(_meta(model_dir))
    if name is None:
        return None
    sha = weights_sha256(model_dir)
    versions = [v for v in mlflow.MlflowClient().search_model_versions(f"name='{name}'")
                if v.tags.get(SHA_TAG) == sha]
    return max(versions, key=lambda v: int(v.version), default=None)


def set_rated(model_dirs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Point each model's ``rated`` alias at the registered version of the weights in its directory
    and tag that version (``model_dirs``: directory -> tags, e.g. the duels' Elo and rank).

    Returns ``{registered model: version}``; a directory with no registered version is named on stderr.
    """
    import mlflow

    client = mlflow.MlflowClient()
    rated: dict[str, str] = {}
    for d, tags in model_dirs.items():
        v = find_version(d)
        if v is None:
            print(f"registry: no registered version holds the weights of {d}; no {RATED} alias set "
                  "(was it trained with registry.register false, or into another MLflow store?)", file=sys.stderr)
            continue
        client.set_registered_model_alias(v.name, RATED, v.version)
        for k, value in tags.items():
            client.set_model_version_tag(v.name, v.version, k, str(value))
        rated[v.name] = str(v.version)
    return rated


def register_champion(model_dir: str | Path, tags: dict[str, Any], seed: int = 0, inference: Inference = FP32
                      ) -> str | None:
    """Register the champion as a version of ``koikoi-champion``, tagged with ``tags`` (its ``spec`` and its own
    figures), and point the ``champion`` alias at it; returns the version, None (said on stderr) without one.
    ``seed`` and ``inference``: how the duels played a searcher (its model plays so too).

    A model directory's champion is the registered version holding its weights (the same logged model, so the same
    lineage). A searcher's (``tags["spec"]`` a ``search:`` spec, ``model_dir`` its model) is a model of its own that
    runs the search (``champion_model.register_searcher``), never its bare network under the searcher's figure.
    A version of the same model and spec is reused."""
    import mlflow

    spec = str(tags.get("spec", model_dir))
    client = mlflow.MlflowClient()
    if not client.search_registered_models(f"name='{CHAMPION_MODEL}'"):
        client.create_registered_model(CHAMPION_MODEL, description="The duels stage's champion: the strongest agent "
                                       "against SL (results/duels/champion.json), as it plays (a searcher searches); "
                                       "its agent spec is the version's `spec` tag.")
    if is_search(spec):
        network = find_version(model_of(spec)) if (Path(model_of(spec)) / CONFIG_FILE).is_file() else None
        version = register_searcher(spec, tags, CHAMPION_MODEL, network=network, seed=seed, inference=inference)
        if version is None:
            return None
    else:
        source = find_version(model_dir)
        if source is None:
            print(f"registry: no registered version holds the weights of {model_dir}; {CHAMPION_MODEL} not set "
                  "(was it trained with registry.register false, or into another MLflow store?)", file=sys.stderr)
            return None
        same = [v for v in client.search_model_versions(f"name='{CHAMPION_MODEL}'")
                if v.source == source.source and v.tags.get("spec") == spec]
        if same:
            version = str(max(int(v.version) for v in same))
        else:
            version = str(client.create_model_version(CHAMPION_MODEL, source.source, run_id=source.run_id,
                                                      tags={SHA_TAG: source.tags.get(SHA_TAG, "")}).version)
            describe_version(client, CHAMPION_MODEL, version)
    for k, value in tags.items():
        client.set_model_version_tag(CHAMPION_MODEL, version, k, str(value))
    client.set_registered_model_alias(CHAMPION_MODEL, CHAMPION, version)
    return version
