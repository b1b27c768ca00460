"""The MLflow registry: pyfunc models with a signature and their code, loadable elsewhere; rated aliases and the
champion;
and a store whose artifacts stay beside it."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import mlflow
import numpy as np
import pytest
import torch
from tiny import TINY, assert_fp32_close, tiny_net

from pipeline.duel.arena import play_games
from pipeline.engine import GameState
from pipeline.lineup.loader import load_agent
from pipeline.net.encoding import decisions, encode
from pipeline.net.inference import resolve_inference
from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import save_model
from pipeline.rollout.network import RolloutConfig, RolloutNet, save_rollout
from pipeline.tracking.registry import (
    CHAMPION,
    CHAMPION_MODEL,
    RATED,
    SHA_TAG,
    find_version,
    log_model,
    register_champion,
    set_rated,
)
from pipeline.tracking.store import setup_experiment
from pipeline.value.winprob import WinProbTable


@pytest.fixture
def store(tmp_path, new_store) -> Path:
    new_store(tmp_path / "store/mlflow.db")
    return tmp_path / "store"


def tiny_model(path: Path, seed: int, meta: dict) -> tuple[Path, KoiKoiNet]:
    net = tiny_net(seed)
    return save_model(net, path, meta), net


def batch(n: int = 6) -> dict[str, np.ndarray]:
    s, obs = GameState(seed=3), []
    while len(obs) < n:
        obs.append(s.observation(s.current_player))
        s.step(s.legal_actions()[-1])
    return {"x": encode(obs), "decision": decisions(obs)}


def log_in_run(model_dir: Path, register: bool):
    with mlflow.start_run(experiment_id=setup_experiment("rl")):
        return log_model(model_dir, register=register)


def test_pyfunc_predicts_the_networks_values_and_carries_signature_and_code(store, tmp_path):
    d, net = tiny_model(tmp_path / "m", 0, {"kind": "rl", "variant": "point"})
    info = log_in_run(d, register=False)
    assert info.registered_model_version is None and mlflow.MlflowClient().search_registered_models() == []
    model = mlflow.pyfunc.load_model(info.model_uri)
    inputs = model.metadata.get_input_schema().input_dict()
    assert inputs["x"].shape == (-1, 270, 50) and inputs["x"].type == np.dtype(np.float32)
    assert inputs["decision"].shape == (-1,) and inputs["decision"].type == np.dtype(np.int64)
    assert model.metadata.get_output_schema().inputs[0].shape == (-1, 50)
    assert model.metadata.flavors["python_function"]["code"]  # the project's code travels with it
    b = batch()
    values = model.predict(b)
    assert values.shape == (6, 50) and values.dtype == np.float32
    with torch.inference_mode():
        want = net(torch.from_numpy(b["x"]), torch.from_numpy(b["decision"])).numpy()
    assert_fp32_close(values, want)
    assert isinstance(model.get_raw_model(), KoiKoiNet)
    with pytest.raises(Exception, match="decision"):
        model.predict({"x": b["x"], "decision": np.full(6, 3, dtype=np.int64)})
    # artifacts beside the store (mlruns/artifacts/ in the project), never in the working directory
    assert str(store / "artifacts") in mlflow.get_experiment_by_name("rl").artifact_location


def game_observations(n: int) -> list:
    """At least ``n`` observations of the player to act, from games of two tiny models (RL-WP's and SL's, the
    project's ``models/``) on deals 0, 1, ..."""
    obs: list = []
    agents = (load_agent("models/rl/wp", inference="fp32"), load_agent("models/sl", inference="fp32"))
    seed = 0
    while len(obs) < n:
        play_games(agents, [seed], num_rounds=2, on_step=lambda s, a: obs.append(s.observation(s.current_player)))
        seed += 1
    return obs


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_the_searcher_champion_loads_anywhere_and_plays_as_the_duels_played_it(store, tmp_path, monkeypatch):
    """Issue 87: a searcher as the duels stage names it (``search:models/rl/wp``: its model's own rollout policy,
    ``models/rl/wp/rollout``, and the table by a path relative to the project), registered with the seed and setup
    the duels played it in; then loaded in a fresh process in an empty directory, with the project's models/ gone, it
    plays the agent's action on 200 observations of real games."""
    monkeypatch.chdir(tmp_path)
    wp, _ = tiny_model(Path("models/rl/wp"), 1, {"kind": "rl", "variant": "wp"})
    sl, _ = tiny_model(Path("models/sl"), 2, {"kind": "sl"})
    torch.manual_seed(3)
    save_rollout(RolloutNet(RolloutConfig(hidden=8, layers=2)).eval(), "models/rl/wp/rollout")
    WinProbTable(num_rounds=8, init_points=30, coef=[[0.0, 3.0, 0.1]] * 8).save("models/winprob")
    info = log_in_run(wp, register=True)
    log_in_run(sl, register=True)
    assert info.registered_model_version == 1
    client = mlflow.MlflowClient()
    assert client.get_model_version("koikoi-rl-wp", "1").tags[SHA_TAG]
    assert set_rated({str(wp): {"duels.elo": 12.5}, str(sl): {}}) == {"koikoi-rl-wp": "1", "koikoi-sl": "1"}
    assert client.get_model_version_by_alias("koikoi-rl-wp", RATED).tags["duels.elo"] == "12.5"
    spec = "search:models/rl/wp?deals=4&k=3"  # rollout=own; the wp reward: models/winprob/winprob.json
    seed, setup = 7, resolve_inference("auto")  # as the duels stage records them (champion.json's confirmation)
    assert register_champion(sl, {"spec": str(sl)}) == "1"
    with mlflow.start_run(experiment_id=setup_experiment("duels")):  # the duels stage's run logs the searcher
        assert register_champion(wp, {"spec": spec, "win_rate": 0.6}, seed, setup) == "2"
        assert register_champion(wp, {"spec": spec, "win_rate": 0.61}, seed, setup) == "2"  # the same: reused
    champion = client.get_model_version_by_alias(CHAMPION_MODEL, CHAMPION)
    assert str(champion.version) == "2" and champion.tags["spec"] == spec and champion.tags["win_rate"] == "0.61"
    # the searcher itself, not RL-WP's bare network under the searcher's figure (issue 69)
    network = find_version(wp)
    assert champion.source != network.source and champion.run_id != network.run_id
    assert champion.tags["network"] == "koikoi-rl-wp/1" and SHA_TAG not in champion.tags
    assert client.get_model_version("koikoi-rl-wp", "1").tags.get("win_rate") is None  # no borrowed figure there

    obs = game_observations(200)
    (tmp_path / "obs.pkl").write_bytes(pickle.dumps(obs))
    want = load_agent(spec, seed=seed, inference=setup).act(obs)
    # what the comparison can tell apart: another seed, and the searched network playing its own playouts
    assert load_agent(spec, seed=seed + 1, inference=setup).act(obs) != want
    assert load_agent(f"{spec}&rollout=self", seed=seed, inference=setup).act(obs) != want
    shutil.move("models", "models.gone")  # nothing of the project's models/ may be read
    elsewhere = Path(tempfile.mkdtemp(dir=tmp_path))
    # A fresh interpreter in an empty directory, with this checkout's editable install switched off (a path
    # in a .pth file, or setuptools' finder): `pipeline` can come only from the code packed with the model.
    script = f"""
import json, os, pickle, sys
sys.path = [p for p in sys.path if not os.path.isfile(os.path.join(p or ".", "pipeline", "__init__.py"))]
sys.meta_path = [f for f in sys.meta_path if "Editable" not in getattr(f, "__name__", "")]
try:
    import pipeline
    sys.exit("pipeline was importable before loading the model")
except ImportError:
    pass
import mlflow, numpy as np
m = mlflow.pyfunc.load_model("models:/{CHAMPION_MODEL}@{CHAMPION}")
obs = pickle.loads(open("{tmp_path}/obs.pkl", "rb").read())
print(json.dumps({{"module": sys.modules["pipeline"].__file__, "actions": m.predict(obs).tolist(),
                  "agent": type(m.get_raw_model()).__name__, "cwd": os.listdir(".")}}))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["module"].startswith(str(store / "artifacts")) and got["agent"] == "SearchAgent"
    assert got["cwd"] == [] and len(obs) >= 200
    assert got["actions"] == want  # the champion plays as the duels' searcher plays


@pytest.mark.slow
def test_the_network_champion_is_its_registered_version(store, tmp_path):
    sl, net = tiny_model(tmp_path / "models/sl", 2, {"kind": "sl"})
    log_in_run(sl, register=True)
    assert register_champion(sl, {"spec": str(sl), "win_rate": 0.5}) == "1"
    champion = mlflow.MlflowClient().get_model_version_by_alias(CHAMPION_MODEL, CHAMPION)
    assert champion.run_id == find_version(sl).run_id and champion.tags[SHA_TAG] == find_version(sl).tags[SHA_TAG]
    b = batch()
    values = mlflow.pyfunc.load_model(f"models:/{CHAMPION_MODEL}@{CHAMPION}").predict(b)
    with torch.inference_mode():
        want = net(torch.from_numpy(b["x"]), torch.from_numpy(b["decision"])).numpy()
    assert_fp32_close(values, want)


def test_aliases_need_a_registered_version_with_the_same_weights(store, tmp_path, capsys):
    d, _ = tiny_model(tmp_path / "m", 0, {"kind": "sl"})
    log_in_run(d, register=False)
    assert find_version(d) is None
    assert set_rated({str(d): {}}) == {} and register_champion(d, {"spec": str(d)}) is None
    assert capsys.readouterr().err.count("no registered version") == 2
    log_in_run(d, register=True)
    assert str(find_version(d).version) == "1"
    save_model(KoiKoiNet(TINY), d, {"kind": "sl"})  # retrained: other weights, not registered yet
    assert find_version(d) is None


def test_default_store_keeps_artifacts_in_mlruns_artifacts(tmp_path, monkeypatch):
    """The layout of docs/mlflow.md: mlruns/mlflow.db and mlruns/artifacts/, whatever directory a run starts in."""
    from pipeline.tracking.store import artifact_location, tracking_uri

    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    monkeypatch.chdir(tmp_path)
    assert tracking_uri() == f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}"
    assert artifact_location() == (tmp_path / "mlruns" / "artifacts").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert artifact_location() is None  # a server decides
