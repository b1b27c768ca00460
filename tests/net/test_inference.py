"""The one inference path (``pipeline.net.inference``): which setup ``auto`` picks per device, what ``prepare`` builds,
a compile that falls back with one line, and the fast setups choosing what fp32 chooses on a trained network."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tiny import assert_fp32_close

from pipeline.agents.heuristic import HeuristicAgent
from pipeline.agents.model_agent import NetPlayer
from pipeline.engine import GAME_OVER, GameState
from pipeline.net import inference
from pipeline.net.encoding import decisions, encode, legal_masks
from pipeline.net.inference import FP32, SETUPS, Inference, resolve_inference
from pipeline.net.model import KoiKoiNet, ModelConfig, Trunk
from pipeline.runtime import hardware

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("one_thread")


def heuristic_states(games: int, seed: int) -> tuple[list, list[int]]:
    """Every decision of ``games`` heuristic self-play games, with the heuristic's action."""
    agent, obs, acts = HeuristicAgent(seed), [], []
    for g in range(games):
        s = GameState(seed=seed + g, num_rounds=2)
        while s.phase != GAME_OVER:
            o = s.observation(s.player)
            a = agent.act([o])[0]
            obs.append(o)
            acts.append(a)
            s.step(a)
    return obs, acts


@pytest.fixture(scope="module")
def trained():
    """A small network trained to imitate the heuristic agent (masked cross-entropy, 150 steps): trained logits,
    with the margins a trained model's have, in a few seconds."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # module fixtures run before the one_thread fixture
    torch.manual_seed(0)
    obs, acts = heuristic_states(60, 1000)
    x, d = torch.from_numpy(encode(obs)), torch.from_numpy(decisions(obs))
    legal, y = torch.from_numpy(legal_masks(obs)), torch.tensor(acts)
    net = KoiKoiNet(ModelConfig(width=64, ff=128, heads=4, layers=1, dropout=0.0, yaku_cross=("discard", "pick"),
                                card_logit=("pick",)))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(150):
        i = torch.randint(len(obs), (128,), generator=g)
        loss = torch.nn.functional.cross_entropy(net(x[i], d[i]).masked_fill(~legal[i], -1e9), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.set_num_threads(threads)
    return net.eval()


def test_auto_picks_by_what_the_device_has(monkeypatch):
    for native, want in ((True, "compile-bf16"), (False, "fp32")):
        monkeypatch.setattr(hardware, "cpu_has_bf16", lambda native=native: native)
        assert resolve_inference("auto", "cpu") == Inference(want, auto=True)
    for native in (True, False):  # bf16 passes on an H200 were faster alone, but self-play slower than fp32
        monkeypatch.setattr(hardware, "gpu_has_bf16", lambda native=native: native)
        assert resolve_inference("auto", "cuda") == Inference("fp32", auto=True)
    for name in SETUPS:  # a param forces each choice, on any device
        assert resolve_inference(name, "cpu") == resolve_inference(name, "cuda") == Inference(name)
    with pytest.raises(ValueError, match=r"^duels\.inference must be one of auto, fp32, autocast, bf16, compile-fp32, "
                                         r"compile-bf16, got 'fast'$"):
        resolve_inference("fast", "cpu", "duels.inference")


def test_prepare_shares_fp32_and_copies_the_rest(trained):
    assert FP32.prepare(trained) is trained and Inference("autocast").prepare(trained) is trained
    for name in ("bf16", "compile-fp32", "compile-bf16"):
        run = Inference(name).prepare(trained)
        assert run is not trained and not run.training
        assert {p.dtype for p in run.parameters()} == {Inference(name).dtype}
    assert {p.dtype for p in trained.parameters()} == {torch.float32}  # the caller's network is never changed
    assert not any(isinstance(m.forward, inference._CompiledForward) for m in trained.modules())


def test_auto_does_not_compile_a_network_too_small_to_repay_it():
    tiny = KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1))
    compiled = [isinstance(m.forward, inference._CompiledForward)
                for m in Inference("compile-fp32", auto=True).prepare(tiny).modules() if isinstance(m, Trunk)]
    assert compiled == [False] * 3
    forced = Inference("compile-fp32").prepare(tiny)
    assert all(isinstance(m.forward, inference._CompiledForward) for m in forced.modules() if isinstance(m, Trunk))


def test_a_failed_compile_falls_back_with_one_line(trained, monkeypatch, capsys):
    def broken(fn, **_):
        def call(*args):
            raise RuntimeError("no C++ compiler\nsecond line")
        return call

    monkeypatch.setattr(torch, "compile", broken)
    monkeypatch.setattr(inference, "_failed_note", [])
    obs, _ = heuristic_states(2, 7)
    want = NetPlayer(trained).values(obs)
    player = NetPlayer(trained, inference=Inference("compile-fp32"))
    np.testing.assert_allclose(player.values(obs), want, rtol=1e-5, atol=1e-5)
    player.values(obs)
    NetPlayer(trained, inference=Inference("compile-fp32")).values(obs)  # noted once per process
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["inference: torch.compile failed (RuntimeError: no C++ compiler); running fp32 uncompiled"]


def test_a_compiled_trunk_computes_what_the_eager_one_does(trained, monkeypatch):
    """Dynamo really traces the trunks (dynamic batch sizes, the fused kernel off); the ``aot_eager`` backend
    keeps the test fast where inductor would spend a minute generating C++."""
    real = torch.compile
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: real(fn, backend="aot_eager", **kw))
    monkeypatch.setattr(inference, "_failed_note", [])
    obs, _ = heuristic_states(3, 11)
    player = NetPlayer(trained, inference=Inference("compile-fp32"))
    want = NetPlayer(trained).values(obs)
    for chunk in (obs[:1], obs[:7], obs):  # three batch sizes: one graph
        assert_fp32_close(player.values(chunk), want[:len(chunk)])
    assert not inference._failed_note


def agreement(net: KoiKoiNet, setup: Inference, obs: list) -> float:
    """Share of ``obs`` on which ``setup``'s greedy action is fp32's."""
    fast = NetPlayer(net, inference=setup).values(obs).argmax(1)
    return float((fast == NetPlayer(net).values(obs).argmax(1)).mean())


@pytest.mark.parametrize("setup", ["bf16", "autocast"])
def test_bf16_setups_choose_what_fp32_chooses_on_a_trained_network(trained, setup):
    obs, _ = heuristic_states(20, 5000)  # a fixed set of states, none of the training games'
    assert len(obs) > 400
    assert agreement(trained, Inference(setup), obs) >= 0.99


@pytest.mark.skipif(not (ROOT / "models/sl/model.pt").is_file(), reason="no models/sl: run `make repro` first")
def test_bf16_weights_choose_what_fp32_chooses_on_the_sl_model():
    from pipeline.net.modelio import load_model

    net, _ = load_model(ROOT / "models/sl")
    obs, _ = heuristic_states(6, 6000)
    assert agreement(net, Inference("bf16"), obs) >= 0.99
