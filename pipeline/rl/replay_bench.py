"""``koikoi bench replay``: the checkpoint's replay (``experience.Replay``) timed against the packing it replaced
(a tuple per sample, its target a tensor: what ``torch.save`` walked object by object), on the same samples."""

from __future__ import annotations

import io
import time
from dataclasses import astuple

import torch

from ..net.model import KoiKoiNet, ModelConfig
from ..selfplay.batched import GameSpec, PlayJob, Sample, play_job
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from .experience import Replay


def _per_sample(samples: list[Sample]) -> list[list[tuple]]:
    return [[(astuple(s.obs), s.action, s.reward, None if s.target is None else torch.from_numpy(s.target))
             for s in samples]]


def _blob(samples: list[Sample]) -> list[torch.Tensor]:
    r = Replay(1)
    r.add(samples)
    return r.pack()


def measure(n: int, seed: int = 0) -> dict:
    """Seconds to pack, save, load (weights_only) and unpack ``n`` samples (greedy self-play of a small random
    network, repeated), and the bytes written, for each packing."""
    torch.manual_seed(seed)
    net = KoiKoiNet(ModelConfig(width=32, ff=64, heads=2, layers=1)).eval()
    players = (NetSpec.from_net(net, "a"), NetSpec.from_net(net, "b"))
    games = tuple(GameSpec(seed + i, (0, 1), (True, True)) for i in range(20))
    played = play_job(PlayJob(players=players, games=games, concurrency=8, reward=RewardModel("point"))).samples
    samples = (played * (n // len(played) + 1))[:n]
    out: dict = {"samples": len(samples)}
    for name, pack in (("blob", _blob), ("per_sample", _per_sample)):
        t0 = time.perf_counter()
        packed = pack(samples)
        t1 = time.perf_counter()
        buf = io.BytesIO()
        torch.save({"replay": packed}, buf)
        t2 = time.perf_counter()
        buf.seek(0)
        back = torch.load(buf, weights_only=True)["replay"]
        t3 = time.perf_counter()
        if len(Replay(1, back)) != len(samples):
            raise RuntimeError("the replay did not come back whole")
        t4 = time.perf_counter()
        out[name] = {"pack_s": round(t1 - t0, 3), "save_s": round(t2 - t1, 3), "load_s": round(t3 - t2, 3),
                     "unpack_s": round(t4 - t3, 3), "mb": round(buf.getbuffer().nbytes / 1e6, 1)}
    return out
