"""The params.yaml sections of the SL, rollout, duels, tune and bookkeeping stages (RL's: ``rl.py``). Every key
is required: the values live in params.yaml only."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ..agents.specs import duel_keys, is_model_spec, is_search, key_name
from ..engine import DECISION_NAMES
from ..net.encoding import MAX_POINTS, MAX_ROUNDS  # what the observation encoding covers
from ..net.limits import MAX_BATCH, MAX_EPOCHS, MAX_FF, MAX_GAMES, MAX_HEADS, MAX_LAYERS, MAX_WIDTH
from ..runtime.hardware import ACCELERATORS, DEVICES, PRECISIONS
from ..runtime.phase_pairs import phase_pair
from ..search.spec import parse_options, parse_search
from .base import INFERENCE_DOC, Count, InferenceSetup, Positive, PositiveFloat, Section, Seed, tuned

SCHEDULERS = ("none", "cosine", "plateau")  # sl_train.scheduler (pipeline.sl.module)
Unit = Annotated[float, Field(ge=0.0, lt=1.0)]
Decisions = list[Literal[DECISION_NAMES]]
STRONGEST = "strongest"  # duels.search.models: the round-robin's best rated model, chosen when it has run


class RegistryParams(Section):
    model_config = ConfigDict(**Section.model_config, serialize_by_alias=True)

    # ``register`` would shadow pydantic's ABC ``register``
    enabled: bool = Field(alias="register", description="register the SL and final RL models and move their "
                          "champion aliases; false: log runs and models only")


class EngineTestsParams(Section):
    bench_games: Positive = Field(le=MAX_GAMES, description="random-vs-random games timed for the engine's games/s")
    seed: Seed = Field(description="seed of the timed games")


GIT_SCHEMES = ("https", "http", "ssh", "git", "file")  # sl_dataset.records_git.url: transports that run no command


class RecordsGitParams(Section):
    url: str = Field(description="the git repository that holds the public records, fetched when the records folder "
                     "is absent: an https, http, ssh, git or file URL (file:///path for a local copy)")
    rev: str = Field(description="the commit fetched, pinned: its full 40-digit hex id")
    path: str = Field(description="the records' folder inside the repository (its *.json files are the records)")
    sha256: str = Field(description="the content hash the fetched records must have: "
                        "SHA-256 over each *.json file's name and bytes, in natural order (docs/sl.md)")

    @field_validator("url")
    @classmethod
    def _git_url(cls, v: str) -> str:
        scheme, sep, rest = v.partition("://")
        scp = re.fullmatch(r"[\w.-]+@[\w.-]+:[^\s]+", v)  # git@github.com:owner/repo.git
        if not (sep and scheme in GIT_SCHEMES and rest and not re.search(r"\s", v)) and not scp:
            raise ValueError(f"must be a git URL ({', '.join(GIT_SCHEMES)}, or user@host:path)")
        return v

    @field_validator("rev", "sha256")
    @classmethod
    def _hex(cls, v: str, info: Any) -> str:
        digits = 40 if info.field_name == "rev" else 64
        if not re.fullmatch(f"[0-9a-f]{{{digits}}}", v):
            raise ValueError(f"must be {digits} lowercase hex digits" + (" (a full commit id, never a branch)"
                                                                         if digits == 40 else ""))
        return v

    @field_validator("path")
    @classmethod
    def _inside(cls, v: str) -> str:
        parts = v.replace("\\", "/").split("/")
        if not v.strip("/") or v.startswith("/") or ".." in parts or v.startswith("-"):
            raise ValueError("must be a folder inside the repository (relative, no ..)")
        return v.strip("/")


class SLDatasetParams(Section):
    records_dir: str | None = Field(description="the folder of human game records, relative to the project, used as it "
                                    "is when it exists ($KOIKOI_RECORDS, when set, stands in for it); when it does "
                                    "not exist, the records stage fetches sl_dataset.records_git into data/records "
                                    "(docs/sl.md); \"\" or null: always fetch")
    records_git: RecordsGitParams | None = Field(description="where the records come from when sl_dataset.records_dir "
                                                 "is absent: the paper's public dataset at a pinned commit; null: "
                                                 "a missing folder is an error")
    synthetic: bool = Field(description="learn from sl_dataset.synthetic_games heuristic self-play games instead "
                            "of human records (for a machine without them); false: human records or an error")
    val_fraction: Annotated[float, Field(gt=0.0, lt=1.0)] = Field(
        description="share of games (never of samples) held out for validation")
    seed: Seed = Field(description="seed of the train/validation split and of synthetic games")
    synthetic_games: Annotated[int, Field(ge=2, le=MAX_GAMES)] = Field(
        description="heuristic-vs-heuristic games written when sl_dataset.synthetic is true")


class SLTrainParams(Section):
    seed: Seed = Field(description="seed of initialisation, batch order, dropout and augmentation")
    width: Positive = tuned([16, 32, 64], le=MAX_WIDTH, description="embedding width; tuned per head (head_dim): "
                            "width = heads x head_dim")
    ff: Positive = tuned([128, 256, 512, 1024], le=MAX_FF, description="feed-forward width of each encoder layer")
    heads: Positive = tuned([2, 4, 8], le=MAX_HEADS, description="attention heads; must divide width")
    layers: Positive = tuned({"low": 1, "high": 4}, le=MAX_LAYERS, description="Transformer encoder layers")
    dropout: Unit = tuned({"low": 0.0, "high": 0.3}, description="dropout rate in the encoder")
    shared_trunk: bool = tuned([False, True], description="one trunk with three output layers; false: three "
                               "networks, one per decision type, each kept at its own best epoch")
    yaku_cross: Decisions = Field(description="networks given the YakuCross rows (card in a yaku set x share "
                                  "of that set in each pile)")
    card_logit: Decisions = Field(description="networks whose output adds a CardLogit (a conditional logit on "
                                  "each card's attributes), fit first, then held fixed")
    card_logit_c: PositiveFloat = Field(description="inverse L2 strength of the CardLogit fit (scikit-learn's C)")
    augment: bool = tuned([True, False], description="relabel the interchangeable months (4/5, 6/10) in a "
                          "random half of each training batch")
    lr: PositiveFloat = tuned({"low": 1.0e-4, "high": 3.0e-3, "log": True}, description="Adam learning rate")
    weight_decay: Annotated[float, Field(ge=0.0)] = tuned({"low": 1.0e-6, "high": 1.0e-2, "log": True},
                                                          description="Adam weight decay")
    scheduler: Literal[SCHEDULERS] = Field(description="learning-rate schedule")
    label_smoothing: Unit = tuned({"low": 0.0, "high": 0.2}, description="label smoothing, spread over the "
                                  "legal actions only")
    ema: Unit = tuned([0.0, 0.99, 0.995], description="decay of the weight average that is validated and kept "
                      "(0: the raw weights)")
    batch_size: Positive = tuned([64, 128, 256, 512], le=MAX_BATCH, description="samples per training batch")
    num_workers: Count = Field(description="data-loader worker processes (0: the tensors are in memory)")
    max_epochs: Positive = Field(le=MAX_EPOCHS, description="most training epochs")
    patience: Count = Field(description="stop when no network's validation loss improved for this many epochs")
    select: Literal["loss", "acc"] = Field(description="each network's epoch: lowest validation loss, or "
                                           "highest validation accuracy (the paper's rule)")
    precision: Literal[PRECISIONS] = Field(description="training precision; auto: bf16-mixed where the CPU or "
                                           "GPU has native bf16, else fp32 (fp16 on older GPUs)")
    threads: Count = Field(description="torch threads for training (0: the cores the load average leaves idle)")
    accelerator: Literal[ACCELERATORS] = Field(description="where training runs; auto: the GPU when torch "
                                               "sees one")

    @model_validator(mode="after")
    def _width_divides(self) -> SLTrainParams:
        if self.width % self.heads:
            raise ValueError(f"width must be divisible by heads ({self.heads}), got {self.width}")
        return self


class AttentionParams(Section):
    model: str = Field(description="model directory whose attention is drawn")
    seed: Seed = Field(description="deal seed of the self-play game drawn")
    turn: Annotated[int, Field(ge=1, le=16)] = Field(description="the discard decision of this turn of round 1")


class RolloutParams(Section):
    teacher: str = Field(description="model directory of the network distilled into the rollout policy (the one "
                         "the searcher searches with)")
    games: Annotated[int, Field(ge=2, le=MAX_GAMES)] = Field(
        description="games the teacher plays against itself; every decision with two or more legal actions is a "
                    "position, labelled by the teacher's softmax over them")
    epsilon: Unit = Field(description="share of the teacher's moves played uniformly at random instead, for more "
                          "varied positions (each is labelled by the teacher all the same)")
    val_fraction: Annotated[float, Field(gt=0.0, lt=1.0)] = Field(
        description="share of the games (never of positions) held out for validation and the speed figures")
    seed: Seed = Field(description="seed of the games' deals, the exploration, the weights and the batch order")
    hidden: Positive = Field(le=MAX_WIDTH, description="units of each hidden layer of the rollout network")
    layers: Annotated[int, Field(ge=1, le=MAX_LAYERS)] = Field(
        description="hidden layers; the first mixes each token's features with its observation's")
    epochs: Positive = Field(le=MAX_EPOCHS, description="training epochs")
    lr: PositiveFloat = Field(description="Adam learning rate")
    batch_size: Positive = Field(le=MAX_BATCH, description="positions per training batch")
    threads: Annotated[int, Field(ge=1, le=256)] = Field(
        description="torch threads of the teacher's games and of the training (the speed figures run on one)")
    concurrency: Annotated[int, Field(ge=1, le=4096)] = Field(
        description="teacher games played at once; each forward pass takes those waiting on one decision type")
    inference: InferenceSetup = Field(description=INFERENCE_DOC)
    timing_positions: Positive = Field(le=100_000, description="validation positions both policies are timed on "
                                       "(µs per decision, in batches of 64 of one decision type, one thread)")


Games = Annotated[int, Field(ge=2, le=MAX_GAMES, multiple_of=2)]  # each deal is played twice, seats swapped


class SprtParams(Section):
    h0: Annotated[float, Field(gt=0.0, lt=1.0)] = Field(description="the win rate of H0: A no stronger than this")
    h1: Annotated[float, Field(gt=0.0, lt=1.0)] = Field(description="the win rate of H1: A at least this strong")
    alpha: Annotated[float, Field(gt=0.0, lt=0.5)] = Field(description="the chance of accepting H1 when H0 holds")
    beta: Annotated[float, Field(gt=0.0, lt=0.5)] = Field(description="the chance of accepting H0 when H1 holds")
    max_games: Games = Field(description="the most games a decided duel plays; undecided there, H0 stands")

    @model_validator(mode="after")
    def _ordered(self) -> SprtParams:
        if self.h0 >= self.h1:
            raise ValueError(f"h0 must be below h1, got h0 {self.h0} and h1 {self.h1}")
        return self


class SearchDuelsParams(Section):
    models: Annotated[list[str], Field(min_length=1)] = Field(
        description="model directories to search with, one searcher each; strongest: the round-robin's best "
                    "rated model (a model named twice plays once)")
    options: str = Field(description="the searchers' options, as in a search:<model>?<options> agent spec "
                         "(docs/search.md), e.g. decisions=koikoi&deals=32")

    @field_validator("options")
    @classmethod
    def _options_parse(cls, v: str) -> str:
        try:
            parse_options(v)  # a bad option is named here, before any game is played
        except ValueError as e:
            raise ValueError(f"is not valid: {e}") from None
        return v


class DuelsParams(Section):
    agents: Annotated[list[str], Field(min_length=2)] = Field(
        description="agent specs of the round-robin (random, heuristic, a model directory or "
        "search:<model>?<options>)")
    games: Games = Field(description="games of each pairing that decides nothing (neither side is models/sl or a "
                         "champion candidate; each deal twice, seats swapped)")
    sprt: SprtParams = Field(description="the sequential test (SPRT on duplicate pairs, docs/duels.md) that decides "
                             "each candidate against models/sl, phase 2 against phase 1, each candidate against "
                             "the best so far")
    phase_pairs: list[Literal["point", "wp"]] = Field(
        description="RL variants whose final model (models/rl/<variant>) plays its phase-1 model "
                    "(models/rl_phase1/<variant>), decided by duels.sprt")
    confirm_games: Games = Field(description="games of the champion's confirmation duel against models/sl, its "
                                 "reported figure")
    confirm_seed: Seed = Field(description="first deal seed of the confirmation duel: deals no other duel plays")
    workers: Count = Field(description="processes for model-vs-model pairings (0: in this process)")
    seed: Seed = Field(description="first deal seed; agents are seeded from it too")
    rounds: Annotated[int, Field(ge=1, le=MAX_ROUNDS)] = Field(description="rounds per game")
    points: Annotated[int, Field(ge=1, le=MAX_POINTS)] = Field(description="initial points of each player")
    anchor: str = Field(description="agent whose Bradley-Terry strength is fixed at 0 (Elo 0)")
    torch_threads: Positive = Field(description="torch threads of model agents")
    device: Literal[DEVICES] = Field(description="where model-vs-model pairings run their forward passes: auto | cpu "
                                     "| cuda (auto: cuda when torch sees a GPU)")
    inference: InferenceSetup = Field(description=INFERENCE_DOC)
    rl_curves: dict[str, str] = Field(description="RL training curves to plot, label: curve.csv path "
                                      "(plotted when present)")
    attention: AttentionParams | None = Field(description="the example attention figure; null for none")
    search: SearchDuelsParams | None = Field(description="the searchers, each played against its model and, as a "
                                             "champion candidate, models/sl; null for none")

    @field_validator("anchor")
    @classmethod
    def _anchor_key(cls, v: str) -> str:
        return key_name(v)

    @field_validator("agents")
    @classmethod
    def _search_agents_parse(cls, v: list[str]) -> list[str]:
        try:
            for spec in v:
                if is_search(spec):
                    parse_search(spec)  # a bad option is named here, as in duels.search.options, before any game
        except ValueError as e:
            raise ValueError(f"is not valid: {e}") from None
        return v

    @model_validator(mode="after")
    def _agents_named(self) -> DuelsParams:
        keys = list(duel_keys(self.agents).values())
        if len(set(keys)) != len(keys):
            raise ValueError(f"agents names must be distinct, got {keys}")
        if self.anchor not in keys:
            raise ValueError(f"anchor {self.anchor!r} is not one of duels.agents")
        if len(set(self.phase_pairs)) != len(self.phase_pairs):
            raise ValueError(f"phase_pairs must be distinct, got {self.phase_pairs}")
        for variant in self.phase_pairs:  # the ratings, the duels stage's last step, would fail on it after every game
            final = phase_pair(variant)[0]
            if key_name(final) not in keys:
                raise ValueError(f"phase_pairs {variant}: its final model {final} must be one of duels.agents (the "
                                 "ratings reach its phase-1 model through it); add it or drop the variant")
        if self.search is not None and STRONGEST in self.search.models \
                and not any(is_model_spec(a) for a in self.agents):
            raise ValueError("search.models strongest: duels.agents has no model directory to search with; name one, "
                             "or set duels.search to null")
        picked = range(self.seed, self.seed + max(self.games, self.sprt.max_games) // 2)
        confirm = range(self.confirm_seed, self.confirm_seed + self.confirm_games // 2)
        if confirm.start < picked.stop and picked.start < confirm.stop:
            raise ValueError(f"confirm_seed {self.confirm_seed}: the confirmation's deals {confirm.start}.."
                             f"{confirm.stop - 1} overlap those that pick the champion ({picked.start}.."
                             f"{picked.stop - 1}, from duels.seed over duels.sprt.max_games); e.g. duels.seed + "
                             "1000000")
        return self


class TuneRLBudget(Section):
    loops: Positive = Field(description="phase-1 loops against SL per RL trial")
    eval_games: Positive = Field(le=MAX_GAMES, description="games of the evaluation against SL that scores an RL "
                                 "trial")
    variant: Literal["point", "wp"] = Field(description="the reward model RL trials train")


TUNED_SEARCH = ("k", "deals", "z", "rollout")  # the search options a search study samples by default


class TuneSearchParams(Section):
    model: str = Field(description="model directory the tuned searcher searches with (search:MODEL?OPTIONS)")
    opponent: str = Field(description="agent spec each trial's searcher duels (models/sl); the game format, "
                          "device and inference setup are the duels stage's (duels.rounds, points, device, inference)")
    games: Games = Field(description="games of each trial's duel, on the same deals for every trial (each deal twice, "
                         "seats swapped)")
    seed: Seed = Field(description="first deal seed of every trial's duel (the agents are seeded from it too): keep "
                       "its deals apart from those that confirm the study's best (duels.seed)")
    rollout: str | None = Field(description="rollout model directory a trial may play its playouts with "
                                "(rollout=DIR, or rollout=self); null: rollout=self only")
    options: str = Field(description="search options every trial keeps, as in a search:MODEL?OPTIONS spec, e.g. "
                         "decisions=discard,pick,koikoi&reward=wp (none of the tuned k, deals, z, rollout)")
    workers: Count = Field(description="processes of each trial's duel (0: in this process)")

    @field_validator("options")
    @classmethod
    def _options_parse(cls, v: str) -> str:
        try:
            parse_options(v)
        except ValueError as e:
            raise ValueError(f"is not valid: {e}") from None
        named = [k for k in TUNED_SEARCH if any(part.split("=", 1)[0] == k for part in v.split("&"))]
        if named:
            raise ValueError(f"must not name {named[0]}, which the study samples (narrow or fix it in "
                             f"tune.space.search), got {v!r}")
        return v


class TuneParams(Section):
    target: Literal["sl", "rl", "search"] = Field(description="what the study tunes")
    trials: Count | None = Field(description="trials added per session; null: until timeout")
    max_epochs: Count | None = Field(description="SL epochs per trial; null: sl_train.max_epochs")
    study: str | None = Field(description="study name; null: the target's name")
    storage: str | None = Field(description="Optuna storage URL; null: sqlite:///<repo>/mlruns/optuna.db")
    timeout: Annotated[float, Field(ge=0.0)] | None = Field(description="seconds per session; null: no limit")
    seed: Seed = Field(description="TPE seed (plus the number of trials already in the study)")
    startup_trials: Count = Field(description="random trials before TPE models the space; the median pruner "
                                  "waits as long")
    warmup_epochs: Count = Field(description="epochs a trial always gets before it can be pruned")
    space: dict[Literal["sl", "rl", "search"], dict[str, Any]] = Field(
        description="narrows the search per target: {target: {key: choices, range or value}}")
    rl: TuneRLBudget = Field(description="an RL trial's budget")
    search: TuneSearchParams = Field(description="a search trial's duel: the searched model, its opponent, the deals")

    @property
    def study_name(self) -> str:
        return self.study or self.target

    @model_validator(mode="after")
    def _ends(self) -> TuneParams:
        if self.trials is None and self.timeout is None:
            raise ValueError("trials and timeout are both null (it would run forever): set trials or timeout")
        return self
