"""``koikoi lookahead``: a lookahead model from a policy model, in one command.

The policy plays ``games`` greedy games against itself on the self-play engine; the afterstates of
its decisions, labelled with their rounds' rewards in both reward models (``value.value_samples``),
fit a value network (``value.fit``) on all but a held-out share; the model directory written holds
the policy, the value and how to look ahead (``lookahead.lookahead_meta``), and plays wherever a
model directory does (``koikoi duel``, the ``duels`` stage, ``koikoi play``). The issue-35 measurements
of this player are in docs/rl-experiments.md ("A learned value").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from ..engine import DECISION_NAMES
from ..net.inference import resolve_inference
from ..net.model import ModelConfig
from ..net.modelio import load_model, save_model
from ..net.value_model import HEADS, ValueNet
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob
from ..selfplay.executor import make_executor
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from .build_spec import BuildSpec
from .fit import ValueFit, fit_value
from .lookahead import lookahead_meta
from .samples import ValueSample, encode_samples, value_samples
from .winprob import WinProbTable

SEED_BASE = 1_000_000  # the self-play deals: away from the duels' and evaluations' seeds


def held_out_r2(net: ValueNet, samples: list[ValueSample]) -> dict[str, float]:
    """Per head, the share of the targets' variance the value explains on ``samples``."""
    if len(samples) < 2:
        return {}
    with torch.inference_mode():
        x, y = encode_samples(samples)
        p = torch.cat([net(x[i:i + 512]) for i in range(0, len(samples), 512)])
    r2 = 1.0 - (p - y).square().mean(0) / y.var(0).clamp_min(1e-12)
    return {f"r2/{h}": float(v) for h, v in zip(HEADS, r2.tolist())}


def build_lookahead(policy_dir: str | Path, winprob: str | Path, out: str | Path, spec: BuildSpec,
                    progress: str | None = None) -> dict[str, float]:
    """Play, fit and write the lookahead model ``out``; the figures of the fit (also in ``out``'s meta)."""
    for d in spec.decisions:
        if d not in DECISION_NAMES:
            raise ValueError(f"decisions: {d!r} is not one of {', '.join(DECISION_NAMES)}")
    net, meta = load_model(policy_dir)
    table = WinProbTable.from_dict(json.loads(Path(winprob).read_text(encoding="utf-8")))
    point = RewardModel("point", spec.scale if spec.reward == "point" else 1.0)
    wp = RewardModel("wp", spec.scale if spec.reward == "wp" else 10.0, table, spec.baseline)
    policy = NetSpec.from_net(net, "policy")
    games = tuple(GameSpec(SEED_BASE + spec.seed * spec.games + i, (0, 0), (True, True)) for i in range(spec.games))
    job = PlayJob(players=(policy,), games=games, inference=resolve_inference("auto"), reward=point, concurrency=64)

    with make_executor(spec.workers) as ex, progress_bar(total=spec.games, desc=progress, unit="game",
                                                          enabled=progress is not None) as bar:
        result = ex.run(job, progress=bar.update)
    samples = value_samples(result, point, wp, spec.seed)
    rng = np.random.default_rng(spec.seed)
    order = rng.permutation(len(samples))
    cut = int(round(spec.holdout * len(samples)))
    held = [samples[i] for i in order[:cut]]
    train = [samples[i] for i in order[cut:]]
    torch.manual_seed(spec.seed)
    value = ValueNet(ModelConfig(width=spec.width, ff=2 * spec.width, heads=4, layers=2, dropout=0.0))
    losses = fit_value(ValueFit(value, spec.lr, True), train, spec.batch_size, spec.epochs, spec.seed,
                       precision="bf16-mixed" if spec.bf16 else "32-true", progress=progress is not None)
    figures = {"games": float(spec.games), "afterstates": float(len(train)), **losses, **held_out_r2(value, held)}
    reward = point if spec.reward == "point" else wp
    decisions = tuple(DECISION_NAMES.index(d) for d in spec.decisions)
    la = {**lookahead_meta(reward, spec.temperature, spec.prior_weight, decisions), "fit": figures}
    save_model(net, out, {**meta, "policy": str(policy_dir), "lookahead": la}, value=value)  # scores: tilted logits
    return figures
