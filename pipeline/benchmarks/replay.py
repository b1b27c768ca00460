"""RL checkpoint's replay: seconds to pack, ``torch.save``, ``torch.load`` (weights_only) and unpack a loop of
samples (one blob per loop, ``pipeline.rl.experience``), against the former tuple per sample in the same run.
The samples: greedy self-play of a small random network, repeated up to ``--samples``."""

from __future__ import annotations

import argparse
import io
import time
from dataclasses import astuple

from ..cli import int_range
from ..runtime.hardware import cpu_name


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", type=int_range(1), default=100_000,
                   help="samples in the loop (default 100000: about 1,900 games of the advantage learner)")
    p.add_argument("--seed", type=int, default=0)


def _per_sample(samples: list) -> list:
    """The packing before the blobs: a tuple per sample, its target a tensor (what ``torch.save`` walked)."""
    import torch

    return [(astuple(s.obs), s.action, s.reward, None if s.target is None else torch.from_numpy(s.target))
            for s in samples]


def run(args: argparse.Namespace) -> dict:
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..rl.experience import Replay
    from ..selfplay.batched import GameSpec, PlayJob, play_job
    from ..selfplay.policies import NetSpec
    from ..selfplay.rewards import RewardModel

    torch.manual_seed(args.seed)
    net = KoiKoiNet(ModelConfig(width=32, ff=64, heads=2, layers=1)).eval()
    players = (NetSpec.from_net(net, "a"), NetSpec.from_net(net, "b"))
    games = tuple(GameSpec(args.seed + i, (0, 1), (True, True)) for i in range(20))
    played = play_job(PlayJob(players=players, games=games, concurrency=8, reward=RewardModel("point"))).samples
    samples = (played * (args.samples // len(played) + 1))[:args.samples]

    def blob() -> list:
        r = Replay(1)
        r.add(samples)
        return r.pack()

    out: dict = {"samples": len(samples), "cpu": cpu_name()}
    for name, pack in (("blob", blob), ("per_sample", lambda: [_per_sample(samples)])):
        t0 = time.perf_counter()
        packed = pack()
        t1 = time.perf_counter()
        buf = io.BytesIO()
        torch.save({"replay": packed}, buf)
        t2 = time.perf_counter()
        buf.seek(0)
        back = torch.load(buf, weights_only=True)["replay"]
        t3 = time.perf_counter()
        assert len(Replay(1, back)) == len(samples)
        t4 = time.perf_counter()
        out[name] = {"pack_s": round(t1 - t0, 3), "save_s": round(t2 - t1, 3), "load_s": round(t3 - t2, 3),
                     "unpack_s": round(t4 - t3, 3), "mb": round(buf.getbuffer().nbytes / 1e6, 1)}
    return out
