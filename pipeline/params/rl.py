"""The ``rl`` and ``winprob`` sections: every key required, checked before any work starts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ..engine import DECISION_NAMES
from ..hardware import DEVICES, PRECISIONS
from ..rl.rewards import REWARD_MODELS
from .base import Bf16, Count, Positive, PositiveFloat, Section, Seed, Share, tuned

INITS = ("sl", "scratch")
ALGORITHMS = ("mc_dqn", "rollout_pi")
START_METHODS = ("spawn", "forkserver", "fork")
BACKENDS = ("process", "ray")  # where self-play runs: local worker processes, or Ray tasks (executor.make_executor)
EvalGames = Annotated[int, Field(ge=2, multiple_of=2)]  # each deal is played from both seats


class WinProbParams(Section):
    agent: Annotated[str, Field(min_length=1)]  # the model directory whose greedy self-play the first fit uses
    games: Positive
    seed: Seed
    C: PositiveFloat
    refit_every: Count
    refit_games: Positive
    workers: Annotated[int, Field(ge=0, le=64)]
    concurrency: Positive
    bf16: Bf16
    device: Literal[DEVICES] = Field(description="where the self-play forward passes run: auto | cpu | cuda (auto: "
                                     "cuda when torch sees a GPU)")


class Temperature(Section):
    """Reward units per nat of a rollout target, per reward model."""

    point: PositiveFloat
    wp: PositiveFloat


class RewardScale(Section):
    """The round reward's scale per reward model; a study tunes the variant it runs."""

    point: PositiveFloat = tuned({"low": 0.01, "high": 1.0, "log": True})
    wp: PositiveFloat = tuned({"low": 0.01, "high": 1.0, "log": True})


class Rollout(Section):
    decisions: Annotated[list[Literal[DECISION_NAMES]], Field(min_length=1)]
    fraction: Annotated[float, Field(gt=0.0, le=1.0)]
    temperature: Temperature
    prior: Literal["sl", "self", "none"]  # the policy targets tilt: sl | self (the learner's) | none (rewards alone)
    loss: Literal["cross_entropy", "logit_mse"]  # distribution targets | logit targets, linear in the rewards
    samples: Annotated[int, Field(ge=1, le=64)]  # deals per branch: the true one + (samples - 1) redealt

    @field_validator("decisions")
    @classmethod
    def _in_order(cls, v: list[str]) -> list[str]:
        return [d for d in DECISION_NAMES if d in v]


class Epsilon(Section):
    start: Share = tuned({"low": 0.05, "high": 0.5})
    end: Share = tuned({"low": 0.0, "high": 0.05})


class SelfPlay(Section):
    workers: Annotated[int, Field(ge=0, le=64)]
    concurrency: Positive
    bf16: Bf16
    start_method: Literal[START_METHODS]
    backend: Literal[BACKENDS]
    device: Literal[DEVICES] = Field(description="where the players' forward passes run (training games, evaluations, "
                                     "RL-WP refits): auto | cpu | cuda; auto: cuda when torch sees a GPU, but cpu "
                                     "on a Ray cluster (RAY_ADDRESS set), so CPU-only nodes play too")


class Phase1(Section):
    loops: Count
    target_win_rate: Share
    window: Positive
    record_sl: bool  # the SL seat's decisions are training samples too (its targets value its actions)


class Phase2(Section):
    loops: Count
    self_play_fraction: Share
    pool_size: Positive
    snapshot_every: Positive


class RLParams(Section):
    seed: Seed
    algorithm: Literal[ALGORITHMS]  # mc_dqn (the paper) | rollout_pi (rollout targets, cross-entropy; see README)
    init: Literal[INITS]
    games_per_loop: Annotated[int, Field(ge=1, le=1_000_000)] = tuned([32, 64, 128, 256])
    batch_size: Positive = tuned([64, 128, 256, 512])
    lr: PositiveFloat = tuned({"low": 1.0e-5, "high": 1.0e-3, "log": True})
    epochs: Annotated[int, Field(ge=1, le=100)]  # optimization passes over each loop's samples (and the replay)
    replay: Annotated[int, Field(ge=0, le=100)]  # past loops whose samples are fitted again with each new loop's
    augment: bool  # relabel the interchangeable months in random halves of the training batches (as SL)
    rollout: Rollout
    epsilon: Epsilon
    reward_scale: RewardScale
    wp_baseline: Share
    eval_every: Positive
    eval_games: EvalGames
    final_eval_games: EvalGames
    train_precision: Literal[PRECISIONS]
    train_threads: Annotated[int, Field(ge=0, le=256)]
    learner_device: Literal[DEVICES] = Field(description="where the learner's optimization passes run: auto | cpu | "
                                             "cuda (auto: cuda when torch sees a GPU)")
    selfplay: SelfPlay
    phase1: Phase1
    phase2: Phase2

    @model_validator(mode="after")
    def _ray_needs_workers(self) -> RLParams:
        if self.selfplay.backend == "ray" and self.selfplay.workers < 1:
            raise ValueError(f"selfplay.workers must be >= 1 with backend ray (Ray tasks per job), "
                             f"got {self.selfplay.workers}")
        return self

    @property
    def total_loops(self) -> int:
        return self.phase1.loops + self.phase2.loops

    def epsilon_at(self, global_loop: int) -> float:
        """Linear decay from ``epsilon.start`` to ``epsilon.end`` over both phases' loop budget."""
        frac = min(1.0, global_loop / max(1, self.total_loops - 1))
        return self.epsilon.start + (self.epsilon.end - self.epsilon.start) * frac

    def fingerprint(self, phase: int, variant: str, extra: dict | None = None) -> str:
        """What a checkpoint must match to be resumed: everything but budgets and how play is executed. The devices
        are in ``extra`` as resolved (``rl.execution.execution_key``): ``auto`` means another device elsewhere."""
        d = self.model_dump(exclude={"phase1": {"loops", "target_win_rate", "window"}, "phase2": {"loops"},
                                     "train_threads": True, "learner_device": True, "final_eval_games": True,
                                     "selfplay": {"workers", "concurrency", "start_method", "backend", "device"}})
        from ..bookkeeping import fingerprint

        return fingerprint({**d, "phase": phase, "variant": variant, **(extra or {})})


def check_variant(variant: str) -> str:
    """``variant`` when it names a reward model (a stage's argument, not a param: a usage error all the same)."""
    from .base import ParamError

    if variant not in REWARD_MODELS:
        raise ParamError(f"unknown reward model {variant!r}; use one of {', '.join(REWARD_MODELS)}")
    return variant
