"""The ``rl`` and ``winprob`` sections: every key required, checked before any work starts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from ..engine import DECISION_NAMES
from ..net.limits import MAX_BATCH, MAX_GAMES
from ..runtime.fingerprints import fingerprint
from ..runtime.hardware import DEVICES, PRECISIONS
from ..selfplay.rewards import REWARD_MODELS
from .base import INFERENCE_DOC, Count, InferenceSetup, ParamError, Positive, PositiveFloat, Section, Seed, Share, tuned

INITS = ("sl", "scratch")
ALGORITHMS = ("mc_dqn", "rollout_pi", "expert_it")
START_METHODS = ("spawn", "forkserver", "fork")
BACKENDS = ("process", "ray")  # where self-play runs: local worker processes, or Ray tasks (executor.make_executor)
DecisionTypes = Annotated[list[Literal[DECISION_NAMES]], Field(min_length=1),
                          AfterValidator(lambda v: [d for d in DECISION_NAMES if d in v])]  # in DECISION_NAMES order
EvalGames = Annotated[int, Field(ge=2, le=MAX_GAMES, multiple_of=2)]  # each deal is played from both seats


class WinProbParams(Section):
    agent: Annotated[str, Field(min_length=1)] = Field(
        description="model directory whose greedy self-play games the first fit uses")
    games: Positive = Field(le=MAX_GAMES, description="simulated games; every round start is a sample per player")
    seed: Seed = Field(description="seed of the simulated games")
    C: PositiveFloat = Field(description="inverse L2 strength of each round's logistic regression")
    workers: Annotated[int, Field(ge=0, le=64)] = Field(
        description="self-play processes, one torch thread each (0: in this process)")
    concurrency: Positive = Field(description="games played at once per worker")
    inference: InferenceSetup = Field(description=INFERENCE_DOC)
    device: Literal[DEVICES] = Field(description="where the self-play forward passes run: auto | cpu | cuda (auto: "
                                     "cuda when torch sees a GPU)")


class UnitsPerNat(Section):
    """Reward units per nat, per reward model; the field holding it gives each its Optuna range (``tuned``)."""

    point: PositiveFloat = Field(description="RL-Point: round points per nat")
    wp: PositiveFloat = Field(description="RL-WP: scaled win-probability units per nat")


class RewardScale(Section):
    """The round reward's scale per reward model; a study tunes the variant it runs."""

    # rollout_pi divides the rewards by its temperature, so only mc_dqn has a scale to tune
    point: PositiveFloat = tuned({"low": 0.01, "high": 1.0, "log": True}, ("mc_dqn",),
                                 description="RL-Point reward: the round's points times this")
    wp: PositiveFloat = tuned({"low": 1.0, "high": 30.0, "log": True}, ("mc_dqn",),
                              description="RL-WP reward: (P(win) - wp_baseline) times this")


class Branch(Section):
    """Branch targets of ``rollout_pi``: which decisions branch into playouts, and how their rewards tilt the prior."""

    decisions: DecisionTypes = Field(description="decision types whose choices branch into playouts (rollout_pi)")
    fraction: Annotated[float, Field(gt=0.0, le=1.0)] = Field(
        description="share of those decisions (with a choice) that branch")
    temperature: UnitsPerNat = tuned({"point": {"low": 0.08, "high": 0.8, "log": True},
                                      "wp": {"low": 0.03, "high": 0.3, "log": True}}, ("rollout_pi",),
                                     description="reward units per nat of the target, per reward model")
    prior: Literal["sl", "self", "none"] = Field(
        description="the policy the targets tilt: sl (KL-regularised to SL), self (the learner's) or none")
    loss: Literal["cross_entropy", "logit_mse"] = Field(
        description="logit_mse: regress centred logit targets (linear in the rewards); cross_entropy: fit "
                    "their softmax")
    samples: Annotated[int, Field(ge=1, le=64)] = tuned([2, 4, 8], ("rollout_pi",),
        description="deals each branch is played on: the true one + (samples - 1) with hidden cards redealt")



class Expert(Section):
    """Expert iteration over the all-decision search (``expert_it``)."""

    decisions: DecisionTypes = Field(description="decision types whose recorded decisions may be searched (expert_it)")
    fraction: Annotated[float, Field(gt=0.0, le=1.0)] = Field(
        description="share of the recorded decisions of those types (with a choice) that are searched")
    deals: Annotated[int, Field(ge=2, le=1024)] = Field(
        description="deals a searched decision plays, shared by its candidates (the search's deals=)")
    k: Annotated[int, Field(ge=0, le=50)] = Field(
        description="candidates: the network's k likeliest legal actions (0: every one; the search's k=)")
    z: PositiveFloat = Field(description="standard errors of paired gain worth one nat of prior (the search's z=)")
    gap: PositiveFloat = Field(description="nats below the likeliest action beyond which an action is no candidate "
                                           "(the search's gap=)")
    rollout: Annotated[str, Field(min_length=1)] = Field(
        description="who plays the first loop's playouts: self (the searched network) or a rollout policy model "
                    "directory, distilled afresh from the fitted network after every loop (settings: the rollout "
                    "section's hidden, layers, epochs, lr, batch_size, seed)")
    temperature: UnitsPerNat = Field(description="reward units of a candidate's searched gain per nat its target "
                                                 "logit moves, per reward model")

    @field_validator("k")
    @classmethod
    def _not_one(cls, v: int) -> int:
        if v == 1:
            raise ValueError("must be 0 (every legal action) or >= 2 (one candidate leaves nothing to search)")
        return v


class Epsilon(Section):
    start: Share = tuned({"low": 0.05, "high": 0.5}, ("mc_dqn",), description="exploration rate of the first loop")
    end: Share = tuned({"low": 0.0, "high": 0.05}, ("mc_dqn",), description="exploration rate of phase 1's last loop "
                       "and of phase 2 (linear decay over phase 1's loops)")


class SelfPlay(Section):
    workers: Annotated[int, Field(ge=0, le=64)] = Field(
        description="worker processes or Ray tasks per play job, one torch thread each (0: in this process)")
    concurrency: Positive = Field(description="games played at once per worker")
    inference: InferenceSetup = Field(description=INFERENCE_DOC)
    start_method: Literal[START_METHODS] = Field(description="multiprocessing start method of the workers")
    backend: Literal[BACKENDS] = Field(description="where self-play runs: local processes or Ray tasks")
    device: Literal[DEVICES] = Field(description="where the players' forward passes run (training games, "
                                     "evaluations): auto | cpu | cuda; auto: cuda when torch sees a GPU, but cpu "
                                     "on a Ray cluster (RAY_ADDRESS set), so CPU-only nodes play too")


class Phase1(Section):
    loops: Positive = Field(description="loops against the frozen SL agent (at least one: phase 2 starts from its "
                            "model)")
    target_win_rate: Share = Field(description="stop early once the mean of the last `window` evaluations "
                                   "reaches it (1.0: never)")
    window: Positive = Field(description="evaluations averaged for the early stop")
    record_sl: bool = Field(description="the SL seat's decisions are training samples too")


class LoopsPerReward(Section):
    """Phase 2's loops per reward model: each trains only its own budget."""

    point: Count = Field(description="RL-Point's self-play loops (0: phase 1's model, evaluated and registered)")
    wp: Count = Field(description="RL-WP's self-play loops (0: phase 1's model, evaluated and registered)")


class Phase2(Section):
    loops: LoopsPerReward = Field(description="self-play loops per reward model")
    algorithm: Literal[ALGORITHMS] = Field(description="phase 2's algorithm (rl.algorithm is phase 1's)")
    games_per_loop: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        description="games played per phase-2 loop (rl.games_per_loop is phase 1's)")
    epochs: Annotated[int, Field(ge=1, le=100)] = Field(
        description="optimization passes over each phase-2 loop's samples (rl.epochs is phase 1's)")


class RLParams(Section):
    seed: Seed = Field(description="seed of deals, exploration, batch order and dropout (with phase and loop)")
    algorithm: Literal[ALGORITHMS] = Field(
        description="phase 1's algorithm: rollout_pi: rollout policy iteration (fits branch targets); mc_dqn: the "
                    "paper's Monte-Carlo DQN; expert_it: expert iteration over the search (docs/rl.md)")
    init: Literal[INITS] = Field(description="start from the SL weights, or from fresh weights (the paper)")
    games_per_loop: Annotated[int, Field(ge=1, le=1_000_000)] = tuned([896, 1792, 3584],
                                                                     description="games played per loop")
    batch_size: Positive = tuned([32, 64, 128, 256], le=MAX_BATCH, description="samples per training batch")
    lr: PositiveFloat = tuned({"low": 1.0e-4, "high": 1.0e-3, "log": True}, description="Adam learning rate")
    epochs: Annotated[int, Field(ge=1, le=100)] = tuned([4, 8, 12],
        description="optimization passes over each phase-1 loop's samples and the replay's "
                    "(rl.phase2.epochs: phase 2's)")
    replay: Annotated[int, Field(ge=0, le=100)] = Field(
        description="past loops whose samples are fitted again with each new loop's")
    augment: bool = Field(description="relabel the interchangeable months (4/5, 6/10) in a random half of each "
                          "training batch")
    branch: Branch = Field(description="branch targets (rollout_pi only)")
    expert: Expert = Field(description="searched targets (expert_it only)")
    epsilon: Epsilon = Field(description="epsilon-greedy exploration of the learner")
    reward_scale: RewardScale = Field(description="round reward scale per reward model")
    wp_baseline: Share = Field(description="subtracted from P(win) in the RL-WP reward (the paper: 0)")
    eval_every: Positive = Field(description="loops between evaluations against SL (the training curve)")
    eval_games: EvalGames = Field(description="games of each curve evaluation (each deal from both seats)")
    final_eval_games: EvalGames = Field(description="games of the end-of-phase evaluation against SL, on deals "
                                        "of its own")
    train_precision: Literal[PRECISIONS] = Field(
        description="precision of the optimization pass; auto: bf16-mixed where the hardware has native bf16")
    train_threads: Annotated[int, Field(ge=0, le=256)] = Field(
        description="torch threads of the optimization pass (0: torch's default)")
    learner_device: Literal[DEVICES] = Field(description="where the learner's optimization passes run: auto | cpu | "
                                             "cuda (auto: cuda when torch sees a GPU)")
    selfplay: SelfPlay = Field(description="how games are played")
    phase1: Phase1 = Field(description="phase 1: against the frozen SL agent")
    phase2: Phase2 = Field(description="phase 2: self-play")

    @model_validator(mode="after")
    def _ray_needs_workers(self) -> RLParams:
        if self.selfplay.backend == "ray" and self.selfplay.workers < 1:
            raise ValueError(f"selfplay.workers must be >= 1 with backend ray (Ray tasks per job), "
                             f"got {self.selfplay.workers}")
        return self

    def algorithm_of(self, phase: int) -> str:
        return self.algorithm if phase == 1 else self.phase2.algorithm

    def games_of(self, phase: int) -> int:
        return self.games_per_loop if phase == 1 else self.phase2.games_per_loop

    def epochs_of(self, phase: int) -> int:
        return self.epochs if phase == 1 else self.phase2.epochs

    def epsilon_at(self, global_loop: int) -> float:
        """Linear decay from ``epsilon.start`` to ``epsilon.end`` over phase 1's loops, ``end`` through phase 2."""
        frac = min(1.0, global_loop / max(1, self.phase1.loops - 1))
        return self.epsilon.start + (self.epsilon.end - self.epsilon.start) * frac

    def fingerprint(self, phase: int, variant: str, extra: dict | None = None) -> str:
        """What a checkpoint must match to be resumed: all but budgets, execution and the curve's measure (resolved
        devices: ``extra``). Phase 1 leaves out what it never reads, so a tuned phase 2 resumes it."""
        phase2_only = {"phase2": True, **({"expert": True} if self.algorithm != "expert_it" else {})}
        d = self.model_dump(exclude={"phase1": {"loops", "target_win_rate", "window"},
                                     **(phase2_only if phase == 1 else {"phase2": {"loops"}}),
                                     "train_threads": True, "learner_device": True, "final_eval_games": True,
                                     "eval_games": True, "eval_every": True,
                                     "selfplay": {"workers", "concurrency", "start_method", "backend", "device"}})
        return fingerprint({**d, "phase": phase, "variant": variant, **(extra or {})})


def check_variant(variant: str) -> str:
    """``variant`` when it names a reward model (a stage's argument, not a param: a usage error all the same)."""
    if variant not in REWARD_MODELS:
        raise ParamError(f"unknown reward model {variant!r}; use one of {', '.join(REWARD_MODELS)}")
    return variant
