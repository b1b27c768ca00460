"""KoiKoiNet, masking, attention maps, model directories and the ModelAgent."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import torch
from tiny import TINY_CONFIG as TINY
from tiny import assert_fp32_close

from pipeline.agents.model_agent import ModelAgent
from pipeline.agents.random_agent import RandomAgent
from pipeline.duel.arena import play_games
from pipeline.engine import GAME_OVER, GameState
from pipeline.net.encoding import NUM_FEATURES, NUM_TOKENS, ROWS, decisions, encode, legal_masks
from pipeline.net.model import KoiKoiNet, ModelConfig, masked
from pipeline.net.modelio import load_model, save_model

ROWS_CATEGORY = ROWS["category"]


def tiny(shared: bool = False, seed: int = 0) -> KoiKoiNet:
    torch.manual_seed(seed)
    return KoiKoiNet(ModelConfig(**TINY, shared_trunk=shared)).eval()


@pytest.fixture(scope="module")
def batch():
    rng = random.Random(0)
    obs = []
    for g in range(3):
        s = GameState(seed=g)
        while s.phase != GAME_OVER:
            obs.append(s.observation(s.player))
            legal = s.legal_actions()
            s.step(legal[rng.randrange(len(legal))])
    # a mixed batch with every decision type
    obs = obs[:40] + [o for o in obs if o.decision == 1][:5] + [o for o in obs if o.decision == 2][:5]
    return obs, torch.from_numpy(encode(obs)), torch.from_numpy(decisions(obs)), torch.from_numpy(legal_masks(obs))


def test_config_defaults_and_round_trip():
    c = ModelConfig()
    assert (c.num_features, c.width, c.ff, c.heads, c.layers, c.shared_trunk) == (NUM_FEATURES, 256, 512, 4, 2, False)
    assert ModelConfig.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(width=10, heads=4)
    with pytest.raises(ValueError, match="unknown key"):
        ModelConfig.from_dict({"widht": 3})


@pytest.mark.parametrize("shared", [False, True])
def test_forward_shape_and_routing(batch, shared):
    _, x, d, _ = batch
    net = tiny(shared)
    with torch.no_grad():
        out = net(x, d)
        assert out.shape == (len(d), NUM_TOKENS) and out.dtype == torch.float32
        # each sample's value depends only on itself and its decision type: singles agree with the batch
        for i in (0, 41, 47):
            assert_fp32_close(net(x[i:i + 1], d[i:i + 1]), out[i:i + 1])
        # another decision type gives other values (a different head)
        assert not torch.allclose(net(x[:4], torch.full((4,), 2)), out[:4])


def test_three_networks_are_independent():
    net = tiny(False)
    assert len(net.trunks) == 3 and len({id(t) for t in net.trunks}) == 3
    shared = tiny(True)
    n_sep = sum(p.numel() for p in net.parameters())
    n_sh = sum(p.numel() for p in shared.parameters())
    assert n_sep > 2.5 * n_sh


def test_gradients_reach_only_the_used_network(batch):
    _, x, d, _ = batch
    net = tiny(False).train()
    net(x[:40][d[:40] == 0], d[:40][d[:40] == 0]).sum().backward()
    assert net.trunks[0].embed[0].weight.grad is not None
    assert net.trunks[1].embed[0].weight.grad is None and net.trunks[2].embed[0].weight.grad is None


def test_masked_sets_illegal_to_minus_inf(batch):
    _, x, d, legal = batch
    with torch.no_grad():
        q = masked(tiny()(x, d), legal)
    assert torch.isinf(q[~legal]).all() and (q[~legal] < 0).all()
    assert torch.isfinite(q[legal]).all()
    assert legal.gather(1, q.argmax(1, keepdim=True)).all()


@pytest.mark.parametrize("shared", [False, True])
def test_attention_weights(batch, shared):
    _, x, d, _ = batch
    net = KoiKoiNet(ModelConfig(**{**TINY, "layers": 2, "dropout": 0.1}, shared_trunk=shared)).train()
    maps = net.attention_weights(x, d)
    assert net.training  # mode restored
    assert len(maps) == 2
    for w in maps:
        assert w.shape == (len(d), 2, NUM_TOKENS, NUM_TOKENS)
        torch.testing.assert_close(w.sum(-1), torch.ones(len(d), 2, NUM_TOKENS))


def test_bf16_autocast_runs(batch):
    _, x, d, _ = batch
    net = tiny()
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        out = net(x, d)
    ref = net(x, d).detach()
    assert out.shape == ref.shape and torch.isfinite(out).all()
    assert (out - ref).abs().max() < 0.1 * ref.abs().max() + 0.05


def test_save_load_round_trip(tmp_path, batch):
    _, x, d, _ = batch
    net = tiny(seed=3)
    save_model(net, tmp_path / "m", {"kind": "sl"})
    doc = json.loads((tmp_path / "m" / "config.json").read_text())
    assert doc["config"] == net.config.to_dict() and doc["meta"]["kind"] == "sl"
    assert doc["meta"]["num_features"] == NUM_FEATURES and doc["meta"]["feature_version"]
    loaded, meta = load_model(tmp_path / "m")
    assert meta["kind"] == "sl" and not loaded.training
    with torch.no_grad():
        torch.testing.assert_close(loaded(x, d), net(x, d), rtol=0, atol=0)


def test_load_model_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_model(tmp_path / "nowhere")
    save_model(tiny(), tmp_path / "m", {})
    cfg = tmp_path / "m" / "config.json"
    doc = json.loads(cfg.read_text())
    doc["meta"]["feature_version"] = "old"
    cfg.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="features"):
        load_model(tmp_path / "m")
    cfg.write_text("{not json")
    with pytest.raises(ValueError, match="config.json"):
        load_model(tmp_path / "m")


def test_model_agent_always_plays_legal_moves():
    seen = []

    def check(state, action):
        if state.player == 0:  # the model's seat
            assert action in state.legal_actions()
            seen.append(state.phase)

    for eps, shared in ((0.0, False), (0.3, True)):
        agent = ModelAgent(tiny(shared), epsilon=eps, seed=1)
        games = play_games((agent, RandomAgent(2)), seeds=range(20), num_rounds=4, on_step=check)
        assert all(g.is_over for g in games)
    assert len(seen) > 1000 and {0, 1, 2} <= set(seen)


def test_model_agent_greedy_q_values_and_bf16_weights(batch):
    obs, *_ = batch
    net = tiny().train()
    agent = ModelAgent(net)
    q = agent.action_scores(obs)
    assert q.shape == (len(obs), NUM_TOKENS) and q.dtype == np.float32
    np.testing.assert_array_equal(np.isfinite(q), legal_masks(obs))
    assert agent.act(obs) == list(q.argmax(1))
    assert net.training  # the agent leaves the net's mode alone
    assert all(a in np.flatnonzero(m) for a, m in zip(ModelAgent(net, inference="bf16").act(obs), legal_masks(obs)))


def test_model_agent_epsilon_is_seeded(batch):
    obs, *_ = batch
    net = tiny()
    a1, a2 = (ModelAgent(net, epsilon=0.5, seed=9).act(obs) for _ in range(2))
    assert a1 == a2
    assert ModelAgent(net, epsilon=1.0, seed=9).act(obs) != ModelAgent(net, epsilon=0.0).act(obs)


def test_yaku_cross_rows_are_membership_times_pile_share(batch):
    from pipeline.net.encoding import ROWS, YAKU_NAMES
    from pipeline.net.layers import YakuCross

    _, x, _, _ = batch
    h = x.transpose(1, 2)
    out = YakuCross()(h)
    n = len(YAKU_NAMES)
    assert out.shape == (*h.shape[:2], NUM_FEATURES + 2 * n) and torch.equal(out[..., :NUM_FEATURES], h)
    for owner in range(2):  # my pile, then the opponent's
        for s in range(n):
            member = h[..., ROWS["yaku_set"] + s]
            share = h[:, :, ROWS["yaku_progress"] + owner * n + s]
            assert torch.equal(out[..., NUM_FEATURES + owner * n + s], member * share)
    assert (out[:, 48:, NUM_FEATURES:] == 0).all()  # [K0] [K1] belong to no yaku set
    assert out[..., NUM_FEATURES:].max() > 0  # some card of some sample is in a started set


def test_yaku_cross_config_and_old_models_load(tmp_path, batch):
    _, x, d, _ = batch
    with pytest.raises(ValueError, match="yaku_cross"):
        ModelConfig(num_features=10, yaku_cross=("pick",))
    with pytest.raises(ValueError, match="yaku_cross"):
        ModelConfig(yaku_cross=("draw",))
    shared = KoiKoiNet(ModelConfig(**TINY, shared_trunk=True, yaku_cross=("pick",)))
    assert shared.trunk.embed[0].in_features == NUM_FEATURES + 18  # one trunk: the rows if any decision asks
    torch.manual_seed(0)
    net = KoiKoiNet(ModelConfig(**TINY, yaku_cross=("koikoi", "pick"))).eval()
    assert net.config.yaku_cross == ("pick", "koikoi")
    assert [t.embed[0].in_features for t in net.trunks] == [NUM_FEATURES, NUM_FEATURES + 18, NUM_FEATURES + 18]
    save_model(net, tmp_path / "m", {"kind": "test"})
    back, _ = load_model(tmp_path / "m")
    assert back.config == net.config
    with torch.no_grad():
        assert torch.equal(back(x, d), net(x, d))
    maps = net.attention_weights(x, d)  # the analysis path runs the rows too
    assert torch.allclose(maps[0].sum(-1), torch.ones(1))
    old = ModelConfig(**TINY).to_dict()
    del old["yaku_cross"]  # a config.json written before the option existed
    assert ModelConfig.from_dict(old).yaku_cross == ()


def test_fast_dropout_drops_p_and_rescales_the_rest():
    from pipeline.net.layers import FastDropout

    x = torch.ones(64, 50, 256, requires_grad=True)
    drop = FastDropout(0.1)
    torch.manual_seed(0)
    y = drop(x)
    assert abs(float((y == 0).float().mean()) - 0.1) < 0.005
    assert torch.allclose(y[y != 0], torch.tensor(1 / 0.9))  # inverted dropout: the expectation is kept
    y.sum().backward()
    assert torch.equal(x.grad, y.detach())  # the gradient passes through the kept elements only
    torch.manual_seed(0)
    assert torch.equal(drop(x), y)  # seeded like every other torch draw
    assert drop.eval()(x) is x and FastDropout(0.0).train()(x) is x


def test_encoder_layers_use_fast_dropout():
    from pipeline.net.layers import FastDropout

    net = KoiKoiNet(ModelConfig(**{**TINY, "dropout": 0.1}))
    layer = net.trunks[0].encoder.layers[0]
    assert all(isinstance(m, FastDropout) and m.p == 0.1 for m in (layer.dropout, layer.dropout1, layer.dropout2))


@pytest.mark.parametrize("training", [True, False])
def test_encoder_layer_matches_torch_layer(training):
    from pipeline.net.layers import EncoderLayer

    torch.manual_seed(0)
    ref = torch.nn.TransformerEncoderLayer(32, 4, 64, 0.0, batch_first=True).train(training)
    new = EncoderLayer(32, 4, 64, 0.0, batch_first=True).train(training)
    new.load_state_dict(ref.state_dict())  # same parameter names: old model directories load
    x = torch.randn(5, 50, 32, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    with torch.set_grad_enabled(training):
        a, b = ref(x), new(x2)
    assert_fp32_close(a.detach(), b.detach())
    if training:
        a.square().sum().backward()
        b.square().sum().backward()
        assert_fp32_close(x.grad, x2.grad)
        for p, q in zip(ref.parameters(), new.parameters(), strict=True):
            assert_fp32_close(p.grad, q.grad)


def test_training_runs_through_encoder_layer_attention(monkeypatch):
    from pipeline.net.layers import EncoderLayer

    calls = []
    original = EncoderLayer._sa_block

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(EncoderLayer, "_sa_block", counted)  # torch's forward must still call this hook
    net = KoiKoiNet(ModelConfig(**TINY)).train()
    net(torch.randn(2, NUM_FEATURES, NUM_TOKENS), torch.zeros(2, dtype=torch.long))
    assert len(calls) == TINY["layers"]


def test_card_logit_fit_learns_a_rule_over_cards(batch):
    from pipeline.net.layers import CardLogit
    from pipeline.sl.card_logit import fit_card_logit

    _, x, _, _ = batch
    gen = torch.Generator().manual_seed(0)
    h = x.transpose(1, 2).repeat(8, 1, 1)  # 400 samples
    pairs = torch.stack([torch.randperm(48, generator=gen)[:2] for _ in range(h.shape[0])])
    legal = torch.zeros(h.shape[0], NUM_TOKENS, dtype=torch.bool).scatter_(1, pairs, True)
    action = pairs.min(1).values  # "take the card with the lower id": a per-card order, which the bias can hold
    logit = CardLogit()
    loss = fit_card_logit(logit, h, legal, action, c=1e4)
    with torch.no_grad():
        pred = masked(logit(h), legal).argmax(-1)
    assert loss < 0.2 and (pred == action).float().mean() > 0.97
    assert logit.weight.dtype == torch.float32 and logit.bias.abs().sum() > 0
    assert math.isnan(fit_card_logit(CardLogit(), h[:0], legal[:0], action[:0]))  # no samples of its type: left at zero


@pytest.mark.parametrize("shared", [False, True])
def test_card_logit_adds_to_its_networks_only(tmp_path, batch, shared):
    _, x, d, _ = batch
    torch.manual_seed(0)
    net = KoiKoiNet(ModelConfig(**TINY, shared_trunk=shared, card_logit=("pick",))).eval()
    assert list(net.card_logits) == ["pick"]
    with torch.no_grad():
        before = net(x, d)
        net.card_logits["pick"].bias[5] = 1.0
        net.card_logits["pick"].weight[0] = 2.0  # category "light" (the first category row)
        after = net(x, d)
    light = x[:, ROWS_CATEGORY, :]
    expected = torch.zeros_like(before)
    expected[d == 1] = 2.0 * light[d == 1]
    expected[d == 1, 5] += 1.0
    assert torch.allclose(after - before, expected, atol=1e-5)
    save_model(net, tmp_path / "m", {"kind": "test"})
    back, _ = load_model(tmp_path / "m")
    assert back.config.card_logit == ("pick",)
    with torch.no_grad():
        assert torch.equal(back(x, d), after)
    old = ModelConfig(**TINY).to_dict()
    del old["card_logit"]  # a config.json written before the option existed
    assert ModelConfig.from_dict(old).card_logit == ()
    with pytest.raises(ValueError, match="card_logit"):
        ModelConfig(card_logit=("draw",))


def test_one_network_player_behind_model_agent_self_play_and_the_ui(batch):
    """``NetPlayer.values`` is the one way a net makes values: ``ModelAgent.action_scores`` is it, batch by batch."""
    from pipeline.agents.model_agent import NetPlayer

    obs, *_ = batch
    net = tiny().train()
    player = NetPlayer(net)
    # the same setup (ModelAgent's default, auto, is bf16 on AMX and AVX512-BF16 CPUs)
    np.testing.assert_array_equal(player.values(obs), ModelAgent(net, inference=player.inference).action_scores(obs))
    assert net.training and player.forward_calls == 1 and player.forward_samples == len(obs)
    assert player.values([]).shape == (0, NUM_TOKENS)


def test_cpu_forward_passes_are_bounded_and_give_the_same_values():
    """A duel's 512 games at once are played in passes of CPU_FORWARD_BATCH: what bounds a duel's memory."""
    from pipeline.agents.model_agent import CPU_FORWARD_BATCH, NetPlayer
    from pipeline.engine import GameState
    from pipeline.net.encoding import decisions, encode, legal_masks

    obs = []
    for seed in range(2 * CPU_FORWARD_BATCH + 5):
        s = GameState(seed=seed)
        for _ in range(seed % 5):
            s.step(s.legal_actions()[-1])
        obs.append(s.observation(s.player))
    net = tiny().eval()
    player = NetPlayer(net)
    chunked = player.values(obs)
    assert player.forward_calls == 3 and player.forward_samples == len(obs)
    with torch.inference_mode():
        whole = net(torch.from_numpy(encode(obs)), torch.from_numpy(decisions(obs))).numpy()
    whole[~legal_masks(obs)] = -np.inf
    assert_fp32_close(chunked, whole)
