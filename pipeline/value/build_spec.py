"""What ``koikoi lookahead`` builds (``value.build.build_lookahead``), apart so that the CLI reads its defaults
without importing torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuildSpec:
    """What ``build_lookahead`` plays, fits and writes (the command's options, one line each in its help)."""

    reward: str = "wp"  # point | wp: the reward the saved model looks ahead with
    scale: float = 10.0  # reward units per win probability (RL-WP) or per point (RL-Point)
    baseline: float = 0.5  # subtracted from P(win) (RL-WP)
    temperature: float = 0.1  # reward units per nat of the lookahead's tilt of the policy
    prior_weight: float = 1.0  # weight of the policy's log-probabilities in the lookahead's scores
    decisions: tuple[str, ...] = ("koikoi",)  # decision types that look ahead; the others play the policy
    games: int = 2000  # self-play games of the policy
    width: int = 128  # the value network's width (its ff is twice that, 4 heads, 2 layers)
    epochs: int = 3  # passes over the afterstates
    batch_size: int = 256
    lr: float = 3e-4
    holdout: float = 0.05  # share of the afterstates held out to measure the fit
    seed: int = 0
    workers: int = 2
    bf16: bool = False  # bf16-mixed for the fit (play runs in the inference setup auto picks)
