"""The learner's process bounds oneDNN's kernel caches, which bf16 training on new batch shapes grew; workers don't."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline.runtime.hardware import cpu_has_bf16
from pipeline.runtime.memory import KERNEL_CACHES, bound_kernel_caches
from pipeline.selfplay.executor import ProcessExecutor

# bf16 autocast training steps, one per batch size; prints the C heap in use (MiB) after the 4th and the last
TRAIN_ON_NEW_SHAPES = """
import ctypes, json, sys, torch
from pipeline.runtime.memory import bound_kernel_caches, release_free_memory
if sys.argv[1] == "bounded":
    bound_kernel_caches()
from pipeline.net.encoding import NUM_FEATURES
from pipeline.net.model import KoiKoiNet, ModelConfig
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks".split()]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
torch.set_num_threads(1)
torch.manual_seed(0)
net = KoiKoiNet(ModelConfig(width=64, ff=128, heads=4, layers=1))
opt = torch.optim.Adam(net.parameters())
used = []
for b in range(1, 17):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = net(torch.rand(b, NUM_FEATURES, 50), torch.full((b,), b % 3)).float().square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if b in (4, 16):
        release_free_memory()
        used.append(libc.mallinfo2().uordblks / 2**20)
print(json.dumps(used))
"""


def _heap_growth(mode: str) -> float:
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_CACHES}
    out = subprocess.run([sys.executable, "-c", TRAIN_ON_NEW_SHAPES, mode], env=env, capture_output=True, text=True,
                         check=True).stdout
    before, after = json.loads(out.strip().splitlines()[-1])
    return after - before


@pytest.mark.slow
@pytest.mark.skipif(not cpu_has_bf16(), reason="bf16 autocast on this CPU is not the learner's default")
def test_bounded_caches_keep_bf16_training_on_new_batch_shapes_flat():
    default, bounded = _heap_growth("default"), _heap_growth("bounded")
    assert default > 20.0, f"12 new batch shapes grew the heap by only {default:.1f} MiB with the default caches"
    assert bounded < default / 4, f"bounded caches grew {bounded:.1f} MiB (default {default:.1f})"


def test_workers_get_the_default_caches_back_and_a_users_capacity_stays(monkeypatch):
    for name in KERNEL_CACHES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LRU_CACHE_CAPACITY", "8")  # the user's choice wins, in the learner and in its workers
    bound_kernel_caches(64)
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == "64" and os.environ["LRU_CACHE_CAPACITY"] == "8"
    with ProcessExecutor(1) as ex:
        assert ex.map(os.getenv, ["ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"]) == [None, "8"]
