"""The rollout network as a player: masked values, its model directory (and refusing the other kind), the spec a
worker rebuilds it from, and the batched engine playing it."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import torch
from tiny import save_tiny

from pipeline.engine import random_observations
from pipeline.net.encoding import legal_masks
from pipeline.net.inference import FP32
from pipeline.net.modelio import load_model
from pipeline.rollout.features import featurize, scatter
from pipeline.rollout.network import RolloutConfig, RolloutNet, load_rollout_net, save_rollout
from pipeline.rollout.rollout_player import RolloutPlayer, RolloutSpec, load_rollout
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job

TINY = RolloutConfig(hidden=8, layers=2)


def tiny_rollout(seed: int = 0) -> RolloutNet:
    torch.manual_seed(seed)
    return RolloutNet(TINY).eval()


@pytest.fixture(scope="module")
def observations():
    return random_observations(300, seed=4)


def test_values_are_finite_exactly_on_the_legal_tokens(observations):
    player = RolloutPlayer(tiny_rollout())
    q = player.values(observations)
    assert q.shape == (len(observations), 50) and q.dtype == np.float32
    np.testing.assert_array_equal(np.isfinite(q), legal_masks(observations))
    assert player.values([]).shape == (0, 50)
    assert player.forward_calls == 1 and player.forward_samples == len(observations) and player.forward_seconds > 0
    # the real tokens alone (play) get what the padded batch (training) gets
    f = featurize(observations)
    with torch.no_grad():
        dense = scatter(player.net(*(torch.from_numpy(a) for a in (f.x, f.g, f.decision))).numpy(), f)
    np.testing.assert_allclose(q, dense, rtol=1e-5, atol=1e-6)
    # each observation alone gets the values it gets in the batch (no padding or batch effect)
    for i in range(0, len(observations), 37):
        np.testing.assert_allclose(player.values([observations[i]])[0], q[i], rtol=1e-5, atol=1e-6)


def test_the_decision_type_picks_the_head(observations):
    net = tiny_rollout()
    with torch.no_grad():
        net.out.weight[1:].zero_()  # pick and koi-koi heads output only their bias
        net.out.bias[1:] = torch.tensor([3.0, -2.0])
    q = RolloutPlayer(net).values(observations)
    d = np.array([o.decision for o in observations])
    legal = legal_masks(observations)
    assert (q[(d == 1)[:, None] & legal] == 3.0).all() and (q[(d == 2)[:, None] & legal] == -2.0).all()
    assert len(np.unique(q[(d == 0)[:, None] & legal])) > 10  # discards: the trained-shape head, varied


def test_save_load_round_trip_and_the_spec_rebuilds_the_same_player(tmp_path, observations):
    net = tiny_rollout(3)
    save_rollout(net, tmp_path / "r", {"teacher": "x"})
    assert json.loads((tmp_path / "r/config.json").read_text())["kind"] == "rollout"
    loaded, meta = load_rollout_net(tmp_path / "r")
    assert meta["teacher"] == "x" and loaded.config == net.config
    want = RolloutPlayer(net).values(observations)
    np.testing.assert_array_equal(RolloutPlayer(loaded).values(observations), want)
    spec = pickle.loads(pickle.dumps(load_rollout(tmp_path / "r")))
    assert isinstance(spec, RolloutSpec) and spec.name == str(tmp_path / "r")
    player = spec.with_epsilon(0.25).player(FP32, "cpu")
    assert player.epsilon == 0.25
    np.testing.assert_array_equal(player.values(observations), want)


def test_each_kind_of_model_directory_refuses_the_other(tmp_path):
    save_rollout(tiny_rollout(), tmp_path / "rollout")
    save_tiny(tmp_path / "net")
    with pytest.raises(ValueError, match="not a KoiKoiNet") as e:
        load_model(tmp_path / "rollout")
    assert "\n" not in str(e.value)
    for load in (load_rollout, load_rollout_net):
        with pytest.raises(ValueError, match="is not a rollout policy") as e:
            load(tmp_path / "net")
        assert "\n" not in str(e.value)
    with pytest.raises(FileNotFoundError):
        load_rollout(tmp_path / "none")
    doc = json.loads((tmp_path / "rollout/config.json").read_text())
    doc["meta"]["feature_version"] = "rollout-v0"
    (tmp_path / "rollout/config.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="rollout features 'rollout-v0'"):
        load_rollout(tmp_path / "rollout")


def test_the_batched_engine_plays_it():
    spec = RolloutSpec.from_net(tiny_rollout(), "rollout")
    job = PlayJob(players=(spec,), games=tuple(GameSpec(seed=s) for s in range(3)), concurrency=3)
    result = play_job(job)
    assert len(result.outcomes) == 3 and result.decisions > 100 and result.forward_samples == result.decisions
