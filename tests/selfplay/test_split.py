"""A split model (``selfplay.split``): one network at some decision types, another elsewhere, saved, loaded and
dueled as any model; ``koikoi probe fit --save`` writes one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.agents.loader import load_agent
from pipeline.agents.model_agent import NetPlayer
from pipeline.agents.model_loader import load_model_agent
from pipeline.cli import main
from pipeline.engine import DECISION_NAMES, random_observations
from pipeline.net.modelio import load_elsewhere, save_model
from pipeline.selfplay.split import SplitPlayer, SplitSpec

DISCARD = DECISION_NAMES.index("discard")


def test_a_split_player_plays_each_network_at_its_own_decisions(make_net):
    at, elsewhere = NetPlayer(make_net(1)), NetPlayer(make_net(2))
    obs = random_observations(120, seed=3)
    kinds = {o.decision for o in obs}
    assert kinds == {0, 1, 2}, "the observations must hold every decision type"
    q = SplitPlayer(at, elsewhere, (DISCARD,)).values(obs)
    for o, row, mine, theirs in zip(obs, q, at.values(obs), elsewhere.values(obs)):
        np.testing.assert_allclose(row, mine if o.decision == DISCARD else theirs, rtol=1e-5)
    assert at.forward_samples + elsewhere.forward_samples == 3 * len(obs)  # each row once more, by one network
    only = [o for o in obs if o.decision != DISCARD]
    np.testing.assert_allclose(SplitPlayer(at, elsewhere, (DISCARD,)).values(only), elsewhere.values(only), rtol=1e-5)


def test_a_saved_split_model_loads_as_a_split_agent(make_net, tmp_path):
    d = save_model(make_net(1), tmp_path / "fit", {"split": {"decisions": ["discard"]}}, elsewhere=make_net(2))
    spec = load_model_agent(d, "fit").spec
    assert isinstance(spec, SplitSpec) and spec.decisions == (DISCARD,)
    assert load_elsewhere(d) is not None and load_elsewhere(save_model(make_net(1), tmp_path / "plain")) is None
    agent, base = load_agent(str(d), inference="fp32"), NetPlayer(make_net(2))
    obs = [o for o in random_observations(60, seed=4) if o.decision != DISCARD]
    assert agent.act(obs) == [int(a) for a in base.values(obs).argmax(axis=1)]  # SL's choices off its decisions
    again = save_model(make_net(1), tmp_path / "again", elsewhere=make_net(2))
    save_model(make_net(1), again)  # written again without one: the file goes with its config
    assert not (again / "elsewhere.pt").exists() and load_elsewhere(again) is None
    doc = json.loads((d / "config.json").read_text())
    doc["meta"]["split"] = {"decisions": ["bluff"]}
    (d / "config.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="bad meta 'split'"):
        load_model_agent(d, "fit")


def test_probe_fit_saves_its_fit_to_play_at_the_probed_decisions_only(project, capsys):
    args = ["probe", "fit", "models/sl", "--reward", "point", "--games", "8", "--samples", "2", "--epochs", "1",
            "--decisions", "discard", "--fraction", "0.3", "--seed", "2"]
    assert main([*args, "--temperature", "0.3", "1", "0.3", "--train-states", "5", "0", "--save", "grid"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    names = [f"states{n}_t{t}" for n in (5, out["fits"][-1]["train_states"]) for t in ("0.3", "1")]
    assert out["saved"] == [str(Path("grid") / name) for name in names]  # one directory a fit, named by the grid
    assert len(out["fits"]) == 4  # a value given twice is fitted once
    for name, fit in zip(names, out["fits"]):
        meta = json.loads((project / "grid" / name / "config.json").read_text())["meta"]
        assert meta["probe"]["fit_gain"] == fit["fit_gain"] and isinstance(
            load_model_agent(project / "grid" / name, name).spec, SplitSpec)
    assert main([*args, "--save", "fit"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["saved"] == "fit" and len(out["fits"]) == 1
    spec = load_model_agent(project / "fit", "fit").spec
    assert isinstance(spec, SplitSpec) and spec.decisions == (DISCARD,)
    meta = json.loads((project / "fit/config.json").read_text())["meta"]
    assert meta["kind"] == "probe-fit" and meta["probe"]["fit_gain"] == out["fits"][0]["fit_gain"]
    assert main(["duel", "fit", "models/sl", "--games", "2", "--rounds", "2", "--workers", "0"]) == 0
    # a searcher over it plays the split policy in its rollouts
    assert main(["duel", "search:fit?deals=2&decisions=koikoi&reward=point", "models/sl", "--games", "2",
                 "--rounds", "1", "--workers", "0"]) == 0


def test_a_split_model_is_a_searchers_model_and_belief(make_net, tmp_path):
    """``search:DIR?belief=DIR`` over a split model: it plays and weighs the opponent's decisions with each network
    at its own decision types (the belief refused a split model before)."""
    import numpy.random as npr

    from pipeline.engine import determinize
    from pipeline.search.belief import log_weights

    d = save_model(make_net(1), tmp_path / "fit", {"split": {"decisions": ["discard"]}}, elsewhere=make_net(2))
    agent = load_agent(f"search:{d}?belief={d}&reward=point&deals=2", inference="fp32")
    assert isinstance(agent.player.belief, SplitPlayer) and isinstance(agent.player.model, SplitPlayer)
    obs = next(o for o in random_observations(200, seed=5) if o.turn >= 6)
    rng = npr.default_rng(1)
    deals = [determinize(obs, rng) for _ in range(6)]
    expected = log_weights(SplitPlayer(NetPlayer(make_net(1)), NetPlayer(make_net(2)), (DISCARD,)), obs, deals)
    np.testing.assert_allclose(log_weights(agent.player.belief, obs, deals), expected, rtol=1e-5)
    assert np.isfinite(expected).all() and (expected < 0).any()


def test_koikoi_split_joins_two_models_and_refuses_what_it_would_drop(make_net, tmp_path, capsys):
    """``koikoi split AT ELSEWHERE``: AT's network at the named decision types, ELSEWHERE's at the rest, each kept
    bit for bit; a split model gives the network it plays there; a model of more than one network is refused."""
    import torch

    from pipeline.net.modelio import load_model
    from pipeline.net.value_model import ValueNet

    fit = save_model(make_net(1), tmp_path / "fit", {"split": {"decisions": ["discard"]}}, elsewhere=make_net(2))
    rl = save_model(make_net(3), tmp_path / "rl")
    assert main(["split", str(fit), str(rl), "--decisions", "discard", "--out", str(tmp_path / "both")]) == 0
    assert json.loads(capsys.readouterr().out)["out"] == str(tmp_path / "both")
    spec = load_model_agent(tmp_path / "both", "both").spec
    assert isinstance(spec, SplitSpec) and spec.decisions == (DISCARD,)
    both = (load_model(tmp_path / "both")[0], load_elsewhere(tmp_path / "both"))
    for got, want in zip(both, (make_net(1), make_net(3))):
        for k, v in want.state_dict().items():
            assert torch.equal(got.state_dict()[k], v), k
    meta = json.loads((tmp_path / "both/config.json").read_text())["meta"]
    assert meta["kind"] == "split" and meta["at"]["model"] == str(fit) and meta["elsewhere"]["model"] == str(rl)

    looking = save_model(make_net(4), tmp_path / "looking", {"kind": "sl"},
                         value=ValueNet(make_net(4).config).eval())
    refused = {  # argv -> what the one line names
        (str(fit), str(rl), "--decisions", "koikoi"): "at discard only",
        (str(rl), str(fit), "--decisions", "discard"): "a second network",
        (str(rl), str(looking), "--decisions", "discard"): "a value network",
        (str(rl), str(rl), "--decisions", "discard", "pick", "koikoi"): "name one or two",
        (str(rl), str(tmp_path / "none"), "--decisions", "discard"): "not a model directory",
    }
    for argv, says in refused.items():
        assert main(["split", *argv, "--out", str(tmp_path / "refused")]) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and len(err.splitlines()) == 1, err
    doc = json.loads((fit / "config.json").read_text())
    doc["meta"]["split"] = "discard"
    (tmp_path / "bad").mkdir()
    for name in ("model.pt", "elsewhere.pt"):
        (tmp_path / "bad" / name).write_bytes((fit / name).read_bytes())
    (tmp_path / "bad/config.json").write_text(json.dumps(doc))
    assert main(["split", str(tmp_path / "bad"), str(rl), "--decisions", "discard", "--out", str(tmp_path / "x")]) == 2
    assert "bad meta 'split'" in capsys.readouterr().err
    assert main(["split", str(rl), str(fit), "--decisions", "discard", "--out", str(rl)]) == 2  # its own input
    assert "is an input" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
