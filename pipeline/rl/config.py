"""The ``rl`` and ``winprob`` params, checked strictly before any work: a bad value is a one-line error."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from ..bookkeeping import fingerprint
from ..engine import DECISION_NAMES
from ..hardware import ACCELERATORS, PRECISIONS
from .rewards import REWARD_MODELS

INITS = ("sl", "scratch")
ALGORITHMS = ("mc_dqn", "rollout_pi")
START_METHODS = ("spawn", "forkserver", "fork")
BACKENDS = ("process", "ray")  # where self-play runs: local worker processes, or Ray tasks (executor.make_executor)


class ParamError(ValueError):
    """A bad param; the message names it (e.g. ``rl.games_per_loop``)."""


class _Reader:
    """Reads one params section, naming each key by its dotted path and rejecting unknown keys."""

    def __init__(self, doc: Any, path: str) -> None:
        if not isinstance(doc, dict):
            raise ParamError(f"{path} must be a mapping, got {type(doc).__name__}")
        self.doc, self.path, self.used = doc, path, set()

    def _get(self, key: str) -> Any:
        if key not in self.doc:
            raise ParamError(f"{self.path}.{key} is missing")
        self.used.add(key)
        return self.doc[key]

    def int(self, key: str, lo: int = 0, hi: int | None = None) -> int:
        v = self._get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
            rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            raise ParamError(f"{self.path}.{key} must be an integer {rng}, got {v!r}")
        return v

    def float(self, key: str, lo: float, hi: float | None = None, lo_open: bool = False) -> float:
        v = self._get(key)
        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)  # YAML .nan / .inf too
        if ok:
            ok = (v > lo if lo_open else v >= lo) and (hi is None or v <= hi)
        if not ok:
            rng = f"{'>' if lo_open else '>='} {lo}" + ("" if hi is None else f" and <= {hi}")
            raise ParamError(f"{self.path}.{key} must be a finite number {rng}, got {v!r}")
        return float(v)

    def choice(self, key: str, options: tuple) -> Any:
        v = self._get(key)
        if v not in options:
            raise ParamError(f"{self.path}.{key} must be one of {', '.join(map(str, options))}; got {v!r}")
        return v

    def section(self, key: str) -> _Reader:
        return _Reader(self._get(key), f"{self.path}.{key}")

    def done(self) -> None:
        extra = sorted(set(self.doc) - self.used)
        if extra:
            raise ParamError(f"{self.path}: unknown key(s) {', '.join(map(str, extra))}")


@dataclass(frozen=True)
class WinProbParams:
    agent: str
    games: int
    seed: int
    C: float
    refit_every: int
    refit_games: int
    workers: int
    concurrency: int
    bf16: bool | str


@dataclass(frozen=True)
class RLParams:
    seed: int
    algorithm: str  # mc_dqn (the paper) | rollout_pi (rollout targets, cross-entropy; see README)
    init: str
    games_per_loop: int
    batch_size: int
    lr: float
    epochs: int  # optimization passes over each loop's samples
    rollout_fraction: float
    rollout_temperature: float  # RL-Point's; RL-WP's is rollout_temperature_wp
    rollout_temperature_wp: float
    rollout_decisions: tuple[str, ...]
    rollout_prior: str  # sl: targets tilt the SL policy (KL-regularised to SL) | self: the learner's own outputs
    epsilon_start: float
    epsilon_end: float
    point_scale: float
    wp_scale: float
    wp_baseline: float
    eval_every: int
    eval_games: int
    final_eval_games: int
    train_precision: str
    train_threads: int
    accelerator: str
    workers: int
    concurrency: int
    bf16: bool | str
    start_method: str
    backend: str
    phase1_loops: int
    target_win_rate: float
    window: int
    phase2_loops: int
    self_play_fraction: float
    pool_size: int
    snapshot_every: int

    @property
    def total_loops(self) -> int:
        return self.phase1_loops + self.phase2_loops

    def epsilon(self, global_loop: int) -> float:
        """Linear decay from ``epsilon_start`` to ``epsilon_end`` over both phases' loop budget."""
        frac = min(1.0, global_loop / max(1, self.total_loops - 1))
        return self.epsilon_start + (self.epsilon_end - self.epsilon_start) * frac

    def fingerprint(self, phase: int, variant: str, extra: dict | None = None) -> str:
        """What a checkpoint must match to be resumed: everything but budgets and how play is executed."""
        skip = {"phase1_loops", "phase2_loops", "target_win_rate", "window", "workers", "concurrency",
                "start_method", "backend", "train_threads", "accelerator",  # a run may move to a GPU machine
                "final_eval_games"}
        return fingerprint({**asdict(self), "phase": phase, "variant": variant, **(extra or {})}, skip)


def _decisions(r: _Reader, key: str) -> tuple[str, ...]:
    v = r._get(key)
    if not isinstance(v, list) or not v or not all(d in DECISION_NAMES for d in v):
        raise ParamError(f"{r.path}.{key} must be a non-empty list of {', '.join(DECISION_NAMES)}; got {v!r}")
    return tuple(d for d in DECISION_NAMES if d in v)


def _bf16(r: _Reader, key: str) -> bool | str:
    return r.choice(key, (True, False, "auto"))


def parse_winprob(doc: Any) -> WinProbParams:
    r = _Reader(doc, "winprob")
    agent = r._get("agent")
    if not isinstance(agent, str) or not agent:
        raise ParamError(f"winprob.agent must be a model directory, got {agent!r}")
    p = WinProbParams(agent=agent, games=r.int("games", 1), seed=r.int("seed"), C=r.float("C", 0.0, lo_open=True),
                      refit_every=r.int("refit_every"), refit_games=r.int("refit_games", 1),
                      workers=r.int("workers", 0, 64), concurrency=r.int("concurrency", 1), bf16=_bf16(r, "bf16"))
    r.done()
    return p


def parse_rl(doc: Any) -> RLParams:
    r = _Reader(doc, "rl")
    eps, scale, sp = r.section("epsilon"), r.section("reward_scale"), r.section("selfplay")
    p1, p2, ro = r.section("phase1"), r.section("phase2"), r.section("rollout")
    temp = ro.section("temperature")
    p = RLParams(
        seed=r.int("seed"), algorithm=r.choice("algorithm", ALGORITHMS), init=r.choice("init", INITS),
        games_per_loop=r.int("games_per_loop", 1, 1_000_000),
        batch_size=r.int("batch_size", 1), lr=r.float("lr", 0.0, lo_open=True), epochs=r.int("epochs", 1, 100),
        rollout_fraction=ro.float("fraction", 0.0, 1.0, lo_open=True),
        rollout_temperature=temp.float("point", 0.0, lo_open=True),
        rollout_temperature_wp=temp.float("wp", 0.0, lo_open=True),
        rollout_decisions=_decisions(ro, "decisions"), rollout_prior=ro.choice("prior", ("sl", "self")),
        epsilon_start=eps.float("start", 0.0, 1.0), epsilon_end=eps.float("end", 0.0, 1.0),
        point_scale=scale.float("point", 0.0, lo_open=True), wp_scale=scale.float("wp", 0.0, lo_open=True),
        wp_baseline=r.float("wp_baseline", 0.0, 1.0),
        eval_every=r.int("eval_every", 1), eval_games=r.int("eval_games", 2),
        final_eval_games=r.int("final_eval_games", 2),
        train_precision=r.choice("train_precision", PRECISIONS), train_threads=r.int("train_threads", 0, 256),
        accelerator=r.choice("accelerator", ACCELERATORS),
        workers=sp.int("workers", 0, 64), concurrency=sp.int("concurrency", 1), bf16=_bf16(sp, "bf16"),
        start_method=sp.choice("start_method", START_METHODS), backend=sp.choice("backend", BACKENDS),
        phase1_loops=p1.int("loops"), target_win_rate=p1.float("target_win_rate", 0.0, 1.0),
        window=p1.int("window", 1),
        phase2_loops=p2.int("loops"), self_play_fraction=p2.float("self_play_fraction", 0.0, 1.0),
        pool_size=p2.int("pool_size", 1), snapshot_every=p2.int("snapshot_every", 1),
    )
    if p.backend == "ray" and p.workers < 1:
        raise ParamError(f"rl.selfplay.workers must be >= 1 with backend ray (Ray tasks per job), got {p.workers}")
    for key in ("eval_games", "final_eval_games"):
        if getattr(p, key) % 2:
            raise ParamError(f"rl.{key} must be even (each deal is played from both seats), got {getattr(p, key)}")
    for sec in (eps, scale, sp, p1, p2, temp, ro, r):
        sec.done()
    return p


def check_variant(variant: str) -> str:
    if variant not in REWARD_MODELS:
        raise ParamError(f"unknown reward model {variant!r}; use one of {', '.join(REWARD_MODELS)}")
    return variant
