"""The one inference path (``pipeline.net.inference``): which setup ``auto`` picks per device, what ``prepare`` builds,
a compile that falls back with one line, and the fast setups choosing what fp32 chooses on a trained network."""

from __future__ import annotations

import threading
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
from pipeline.net.inference import FP32, Inference, resolve_inference
from pipeline.net.model import KoiKoiNet, ModelConfig, Trunk
from pipeline.runtime import hardware
from pipeline.runtime.hardware import INFERENCE_SETUPS

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
        # on a GPU fp32 whatever the CPU has (bf16 passes on an H200 were faster alone, but self-play slower)
        assert resolve_inference("auto", "cuda") == Inference("fp32", auto=True)
    for name in INFERENCE_SETUPS:  # a param forces each choice, on any device
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


def broken_compile(*errors: BaseException):
    """A ``torch.compile`` whose compiled calls raise ``errors``, in turn."""
    raised = iter(errors)

    def compile(fn, **_):
        def call(*args):
            raise next(raised)
        return call
    return compile


def test_a_failed_compile_falls_back_with_one_line_per_failure(trained, monkeypatch, capsys):
    failures = [RuntimeError("no C++ compiler\nsecond line")] * 3 + [RuntimeError("other")] * 3  # three trunks each
    monkeypatch.setattr(torch, "compile", broken_compile(*failures))
    monkeypatch.setattr(inference, "_noted", set())
    obs, _ = heuristic_states(2, 7)
    want = NetPlayer(trained).values(obs)
    player = NetPlayer(trained, inference=Inference("compile-fp32"))
    np.testing.assert_allclose(player.values(obs), want, rtol=1e-5, atol=1e-5)
    player.values(obs)  # fallen back for good
    NetPlayer(trained, inference=Inference("compile-bf16")).values(obs)  # another network, another failure
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["inference: torch.compile failed (RuntimeError: no C++ compiler); running fp32 uncompiled",
                   "inference: torch.compile failed (RuntimeError: other); running bf16 uncompiled"]


def test_a_stage_records_the_setup_that_runs(trained, monkeypatch, capsys):
    """``checked`` finds the failing compile in the stage's process: the setup it records and hands its players
    is the fallback, not the compiled setup that could not run."""
    monkeypatch.setattr(torch, "compile", broken_compile(*[RuntimeError("no C++ compiler")] * 3))
    monkeypatch.setattr(inference, "_noted", set())
    assert inference.checked(Inference("compile-bf16"), trained) == Inference("bf16")
    assert capsys.readouterr().err.count("torch.compile failed") == 1
    for kept in (FP32, Inference("bf16")):  # nothing to compile: nothing tried
        assert inference.checked(kept, trained) is kept
    tiny = KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1))
    assert inference.checked(Inference("compile-bf16", auto=True), tiny) == Inference("compile-bf16", auto=True)


def test_no_check_moves_a_network_to_a_gpu_this_process_lacks(trained, monkeypatch):
    """A Ray head without CUDA sending its games to GPU workers: nothing to check the compile on here."""
    monkeypatch.setattr(torch, "compile", broken_compile(RuntimeError("compiled on the head")))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    setup = Inference("compile-fp32")
    assert inference.checked(setup, trained, "cuda") is setup


def test_running_out_of_memory_is_no_compile_failure(trained, monkeypatch):
    obs, _ = heuristic_states(1, 7)
    for oom in (torch.cuda.OutOfMemoryError("CUDA out of memory"), MemoryError()):
        monkeypatch.setattr(torch, "compile", broken_compile(oom))
        with pytest.raises(type(oom)):
            NetPlayer(trained, inference=Inference("compile-fp32")).values(obs)


def test_a_compiled_trunk_computes_what_the_eager_one_does(trained, monkeypatch):
    """Dynamo really traces the trunks (dynamic batch sizes); the ``aot_eager`` backend keeps the test fast where
    inductor would spend a minute generating C++."""
    real = torch.compile
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: real(fn, backend="aot_eager", **kw))
    monkeypatch.setattr(inference, "_noted", set())
    obs, _ = heuristic_states(3, 11)
    player = NetPlayer(trained, inference=Inference("compile-fp32"))
    want = NetPlayer(trained).values(obs)
    for chunk in (obs[:1], obs[:7], obs):  # three batch sizes: one graph
        assert_fp32_close(player.values(chunk), want[:len(chunk)])
    assert not inference._noted


def test_a_compiled_trunk_runs_off_the_fused_kernel_and_the_eager_ones_on_it(trained, monkeypatch):
    """The fused encoder-layer kernel fails under torch.compile (a stride check, torch 2.13), so a compiled trunk's
    layers must not take it, while eager networks keep it. Here the "compile" runs its function as it is, and the
    kernel fails inside it (as the real one does where Dynamo traces it) and counts its other calls."""
    compiling, eager_calls, real = [False], [0], torch._transformer_encoder_layer_fwd

    def kernel(*args, **kwargs):
        if compiling[0]:
            raise RuntimeError("expected stride to be 1 (the fused kernel under torch.compile)")
        eager_calls[0] += 1
        return real(*args, **kwargs)

    def compile(fn, **_):
        def call(*args):
            compiling[0] = True
            try:
                return fn(*args)
            finally:
                compiling[0] = False
        return call

    monkeypatch.setattr(torch, "_transformer_encoder_layer_fwd", kernel)
    monkeypatch.setattr(torch, "compile", compile)
    monkeypatch.setattr(inference, "_noted", set())
    obs, _ = heuristic_states(1, 11)
    want = NetPlayer(trained).values(obs)
    assert eager_calls[0] > 0  # the eager network runs the fused kernel
    assert_fp32_close(NetPlayer(trained, inference=Inference("compile-fp32")).values(obs), want)
    assert not inference._noted  # the compiled trunks ran, off the kernel: no fallback
    before = eager_calls[0]
    NetPlayer(trained).values(obs)  # an eager network after it still has the kernel
    assert eager_calls[0] > before


def test_threads_compiling_leave_the_fused_kernel_to_each_other(trained, monkeypatch):
    """The play server's threads share one process: two compiled forwards overlapping in two threads (the first
    to start ends first) leave the eager networks their fused kernel, during and after (a process-wide switch
    saved and restored by each call stayed off for good)."""
    real = torch.compile
    entered = {name: threading.Event() for name in ("a", "b")}
    go = {name: threading.Event() for name in ("a", "b")}

    def held(fn, **kw):
        compiled = real(fn, backend="aot_eager", **kw)

        def call(*args):
            name = threading.current_thread().name
            if name in go:  # the threads' calls wait inside the compiled forward until released
                entered[name].set()
                assert go[name].wait(60)
            return compiled(*args)
        return call

    monkeypatch.setattr(torch, "compile", held)
    obs, _ = heuristic_states(1, 3)
    players = {name: NetPlayer(trained, inference=Inference("compile-fp32")) for name in go}
    threads = {name: threading.Thread(target=players[name].values, args=(obs[:2],), name=name) for name in go}
    for name in ("a", "b"):
        threads[name].start()
        assert entered[name].wait(120)
    during = torch.backends.mha.get_fastpath_enabled()
    for name in ("a", "b"):
        go[name].set()
        threads[name].join(120)
    assert during and torch.backends.mha.get_fastpath_enabled()


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
