"""The params.yaml sections of the SL, duels, tune and bookkeeping stages (RL's are in ``rl.py``).

Every key is required: the values live in params.yaml only. The ranges are what the code can run.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ..encoding import MAX_ROUNDS  # the observation encoding covers games of up to 12 rounds
from ..engine import DECISION_NAMES
from ..hardware import ACCELERATORS, DEVICES, PRECISIONS
from .base import Count, Positive, PositiveFloat, Section, Seed, tuned

SCHEDULERS = ("none", "cosine", "plateau")  # sl_train.scheduler (pipeline.sl.module)
Unit = Annotated[float, Field(ge=0.0, lt=1.0)]
Decisions = list[Literal[DECISION_NAMES]]


class RegistryParams(Section):
    model_config = ConfigDict(**Section.model_config, serialize_by_alias=True)

    enabled: bool = Field(alias="register")  # ``register`` would shadow pydantic's ABC ``register``


class EngineTestsParams(Section):
    bench_games: Positive
    seed: Seed


class SLDatasetParams(Section):
    records_dir: str | None  # "" or null: $KOIKOI_RECORDS, ../shared/koikoi-records, download, else synthetic
    val_fraction: Annotated[float, Field(gt=0.0, lt=1.0)]
    seed: Seed
    synthetic_games: Annotated[int, Field(ge=2)]


class SLTrainParams(Section):
    seed: Seed
    width: Positive = tuned([16, 32, 64])  # sampled per head (head_dim): width = heads x head_dim
    ff: Positive = tuned([128, 256, 512, 1024])
    heads: Positive = tuned([2, 4, 8])
    layers: Positive = tuned({"low": 1, "high": 4})
    dropout: Unit = tuned({"low": 0.0, "high": 0.3})
    shared_trunk: bool = tuned([False, True])
    yaku_cross: Decisions
    card_logit: Decisions
    card_logit_c: PositiveFloat
    augment: bool = tuned([True, False])
    lr: PositiveFloat = tuned({"low": 1.0e-4, "high": 3.0e-3, "log": True})
    weight_decay: Annotated[float, Field(ge=0.0)] = tuned({"low": 1.0e-6, "high": 1.0e-2, "log": True})
    scheduler: Literal[SCHEDULERS]
    label_smoothing: Unit = tuned({"low": 0.0, "high": 0.2})
    ema: Unit = tuned([0.0, 0.99, 0.995])
    batch_size: Positive = tuned([64, 128, 256, 512])
    num_workers: Count
    max_epochs: Positive
    patience: Count
    select: Literal["loss", "acc"]
    precision: Literal[PRECISIONS]
    threads: Count
    accelerator: Literal[ACCELERATORS]

    @model_validator(mode="after")
    def _width_divides(self) -> SLTrainParams:
        if self.width % self.heads:
            raise ValueError(f"width must be divisible by heads ({self.heads}), got {self.width}")
        return self


class AttentionParams(Section):
    model: str
    seed: Seed
    turn: Annotated[int, Field(ge=1, le=16)]


Games = Annotated[int, Field(ge=2, multiple_of=2)]  # each deal is played twice, seats swapped


class DuelsParams(Section):
    agents: Annotated[list[str], Field(min_length=2)]
    games: Games
    rl_vs_sl_games: Games  # pairings of an RL model (models/rl/...) with models/sl: the paper's 2,000
    workers: Count
    seed: Seed
    rounds: Annotated[int, Field(ge=1, le=MAX_ROUNDS)]
    points: Positive
    anchor: str
    torch_threads: Positive
    device: Literal[DEVICES] = Field(description="where model-vs-model pairings run their forward passes: auto | cpu "
                                     "| cuda (auto: cuda when torch sees a GPU)")
    rl_curves: dict[str, str]
    attention: AttentionParams | None

    @field_validator("anchor")
    @classmethod
    def _anchor_key(cls, v: str) -> str:
        from ..duel.report import key_name  # the metrics key of an agent spec

        return key_name(v)

    @model_validator(mode="after")
    def _agents_named(self) -> DuelsParams:
        from ..duel.report import key_name

        keys = [key_name(a) for a in self.agents]
        if len(set(keys)) != len(keys):
            raise ValueError(f"agents names must be distinct, got {keys}")
        if self.anchor not in keys:
            raise ValueError(f"anchor {self.anchor!r} is not one of duels.agents")
        return self


class TuneRLBudget(Section):
    loops: Positive
    eval_games: Positive
    variant: Literal["point", "wp"]


class TuneParams(Section):
    target: Literal["sl", "rl"]
    trials: Count | None  # None: until ``timeout``
    max_epochs: Count | None  # SL epochs per trial (None: sl_train.max_epochs)
    study: str | None  # None: the target's name
    storage: str | None  # None: sqlite:///<repo>/mlruns/optuna.db
    timeout: Annotated[float, Field(ge=0.0)] | None  # seconds for this session
    seed: Seed
    startup_trials: Count  # random (TPE start-up) trials; the median pruner also waits for this many
    warmup_epochs: Count  # epochs a trial always gets before it can be pruned
    space: dict[Literal["sl", "rl"], dict[str, Any]]  # {target: {name: spec}} narrowing the search space
    rl: TuneRLBudget  # an RL trial's budget

    @property
    def study_name(self) -> str:
        return self.study or self.target

    @model_validator(mode="after")
    def _ends(self) -> TuneParams:
        if self.trials is None and self.timeout is None:
            raise ValueError("trials and timeout are both null (it would run forever): set trials or timeout")
        return self
