"""The RL training loop: phase 1 against the frozen SL agent, phase 2 by self-play and past snapshots.

A loop: play ``games_per_loop`` games epsilon-greedily (batched, on the executor's workers), turn
each recorded round into Monte-Carlo samples, make one Lightning pass over them, drop them. Every
``eval_every`` loops the greedy learner plays ``eval_games`` duplicate-deal games against the SL
agent (each deal from both seats) for the learning curve (the paper's Fig. 6).

Resuming: after every loop ``checkpoints/state.pt`` is rewritten atomically (temp file + rename) with
the weights, the Adam state, the loop and game counters, the curve rows, the evaluation history, the
win-probability table (RL-WP), the MLflow run id and the params fingerprint. Every random choice of
a loop (deals, exploration, batch order, dropout) is seeded from (seed, phase, loop), so a resumed
run replays exactly what an uninterrupted run would have done. A checkpoint made with other params
(other than budgets and worker counts) is set aside and training starts afresh.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from .. import atomic
from ..engine import DECISION_NAMES
from ..hardware import resolve_accelerator, resolve_bf16, resolve_precision, torch_device
from ..memory import bound_kernel_caches, release_free_memory
from ..model import KoiKoiNet
from ..modelio import MODEL_FILE, load_model, read_training_state, save_model
from ..params import RLParams, WinProbParams, dotted
from .executor import Executor, make_executor
from .learner import QLearner, SampleBuffer, fit_pass
from .policies import NetSpec
from .rewards import RewardModel
from .rollouts import RolloutSpec
from .selfplay import GameSpec, PlayJob, PlayResult
from .winprob import WinProbTable, fit_table, simulate

CURVE_COLUMNS = ("loop", "games", "win_rate", "point_diff", "eval_games", "ci_low", "ci_high")
STATE_FILE = "state.pt"
CURVE_FILE = "curve.csv"
RUN_RECORD = "mlflow_run.json"  # the MLflow run id, written as the run starts (state.pt comes a loop later)


@dataclass
class PhaseConfig:
    """One training phase: where it starts from, what it writes."""

    phase: int  # 1: against SL, 2: self-play
    variant: str  # reward model: point | wp
    params: RLParams
    winprob: WinProbParams
    sl_dir: Path  # the SL agent: phase-1 opponent, evaluation baseline, and the init weights (init: sl)
    out_dir: Path  # model dir of this phase; checkpoints/ inside
    results_dir: Path  # curve.csv, metrics.json
    init_dir: Path | None = None  # phase 2: the phase-1 model dir
    winprob_path: Path | None = None  # RL-WP: the starting table
    progress: bool = True
    mlflow: bool = True
    register: bool = False  # phase 2 registers its model (koikoi-rl-<variant>); only the DVC stage asks


@dataclass
class RunState:
    fingerprint: str
    loop: int = 0  # loops completed in this phase
    games: int = 0  # training games played in this phase
    loop_offset: int = 0  # loops of earlier phases (the curve's and epsilon's clock)
    games_offset: int = 0
    curve: list[dict] = field(default_factory=list)
    evals: list[float] = field(default_factory=list)  # win rates of this phase's evaluations after training
    stop_reason: str = ""
    run_id: str | None = None
    winprob: dict | None = None
    snapshots: list[int] = field(default_factory=list)
    final: dict | None = None  # the end-of-phase evaluation (rl.final_eval_games), once made
    epsilon: float = 0.0
    seconds: float = 0.0


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "-"


def _seed(params: RLParams, phase: int, loop: int, stream: int) -> int:
    """Distinct deterministic seeds per (seed, phase, loop, stream); game i adds i (< 10**6)."""
    return (((params.seed * 10 + phase) * 100_000 + loop) * 10 + stream) * 10**6


def _atomic_save(obj: object, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


@dataclass(frozen=True)
class Evaluation:
    """Greedy learner vs greedy baseline on duplicate deals: win rate (draws half) with its Wilson 95% interval."""

    games: int
    win_rate: float
    point_diff: float  # the learner's mean final points minus the initial points
    ci95: tuple[float, float]

    def row(self) -> dict:
        return {"win_rate": round(self.win_rate, 4), "point_diff": round(self.point_diff, 3),
                "eval_games": self.games, "ci_low": round(self.ci95[0], 4), "ci_high": round(self.ci95[1], 4)}


def evaluate(executor: Executor, learner: NetSpec, baseline: NetSpec, games: int, seed: int, bf16: bool,
             concurrency: int, progress: bool, desc: str = "eval") -> Evaluation:
    """Greedy learner vs greedy baseline on ``games // 2`` deals, each from both seats."""
    from ..duel.stats import wilson_interval
    from ..progress import progress_bar

    specs = []
    for i in range(games // 2):
        specs += [GameSpec(seed + i, (0, 1)), GameSpec(seed + i, (1, 0))]
    job = PlayJob(players=(learner.with_epsilon(0.0), baseline.with_epsilon(0.0)), games=tuple(specs), bf16=bf16,
                  concurrency=concurrency)
    with progress_bar(total=len(specs), desc=desc, unit="game", leave=False, enabled=progress) as bar:
        result = executor.run(job, progress=bar.update)
    score, diff = 0.0, 0.0
    for o in result.outcomes:
        me = o.seats.index(0)
        score += 0.5 if o.winner is None else float(o.winner == me)
        diff += o.points[me] - o.points[1 - me]
    n = len(result.outcomes)
    # points gained = half the final difference (zero-sum)
    return Evaluation(n, score / n, diff / n / 2, wilson_interval(score, n))


class PhaseRunner:
    """Runs (or resumes) one phase; ``run()`` returns the final metrics."""

    def __init__(self, cfg: PhaseConfig, executor: Executor | None = None) -> None:
        self.cfg = cfg
        self.p = cfg.params
        bound_kernel_caches()  # before the first bf16 op: new batch shapes grew its kernel caches (README)
        # one accelerator for the learner's passes and the players' forward passes (games stay on CPU cores)
        self.accelerator = resolve_accelerator(self.p.accelerator, "rl.accelerator")
        device = torch_device(self.accelerator)
        self.bf16 = resolve_bf16(self.p.selfplay.bf16, device)
        self.train_precision = resolve_precision(self.p.train_precision, self.accelerator, "rl.train_precision")
        self.ckpt_dir = cfg.out_dir / "checkpoints"
        self._own_executor = executor is None
        sp = self.p.selfplay
        self.executor = executor or make_executor(sp.workers, sp.start_method, sp.backend, device)
        sl_net, _ = load_model(cfg.sl_dir)
        self.sl_spec = NetSpec.from_net(sl_net, "sl")
        self._dropped: list[int] = []  # snapshots out of the pool, deleted once a checkpoint forgets them

    # ------------------------------------------------------------------ setup
    def _fingerprint(self) -> str:
        c = self.cfg
        extra = {"sl": _sha(c.sl_dir / MODEL_FILE)}
        if c.init_dir is not None:
            extra["init"] = _sha(c.init_dir / MODEL_FILE)
        if c.variant == "wp":
            extra["winprob_start"] = _sha(c.winprob_path) if c.winprob_path else "-"
            extra["refit"] = (self.cfg.winprob.refit_every, self.cfg.winprob.refit_games, self.cfg.winprob.C)
        return self.p.fingerprint(c.phase, c.variant, extra)

    def _initial(self) -> tuple[KoiKoiNet, RunState, dict | None]:
        """Fresh start: the starting weights, state and optimizer state (phase 2: phase 1's)."""
        c = self.cfg
        state = RunState(fingerprint=self._fingerprint())
        opt_state, meta = None, {}
        if c.phase == 1:
            net, _ = load_model(c.sl_dir)
            if self.p.init == "scratch":
                torch.manual_seed(self.p.seed)
                net = KoiKoiNet(net.config)  # the SL architecture, fresh weights (the paper's setting)
        else:
            if c.init_dir is None:
                raise ValueError("phase 2 needs the phase-1 model directory")
            net, meta = load_model(c.init_dir)
            state.loop_offset = int(meta.get("global_loops", 0))
            state.games_offset = int(meta.get("global_games", 0))
            curve = c.init_dir / CURVE_FILE
            if curve.is_file():
                state.curve = read_curve(curve)
            prev = c.init_dir / "checkpoints" / STATE_FILE
            if prev.is_file() and (ck := read_training_state(prev, "rl_phase2", set_aside=False)) is not None:
                opt_state = ck.get("optimizer")  # continue Adam's moments across the phase boundary
        if c.variant == "wp":
            if c.phase == 2 and "winprob" in meta:  # phase 1's last refit, kept in its model's meta
                table = WinProbTable.from_dict(meta["winprob"])
            else:
                if c.winprob_path is None:
                    raise ValueError("the wp reward model needs a win-probability table (run the winprob stage)")
                table = WinProbTable.load(c.winprob_path)
            state.winprob = table.to_dict()
        return net, state, opt_state

    def _load_or_start(self) -> tuple[QLearner, RunState]:
        path = self.ckpt_dir / STATE_FILE
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        if path.is_file() and (ck := read_training_state(path, f"rl_phase{self.cfg.phase}")) is not None:
            state = RunState(**ck["state"])
            budget = self.p.phase1.loops if self.cfg.phase == 1 else self.p.phase2.loops
            if state.fingerprint == self._fingerprint() and state.loop <= budget:
                net, _ = load_model(self.cfg.sl_dir)  # architecture; weights from the checkpoint
                net.load_state_dict(ck["model"])
                learner = QLearner(net, self.p.lr, self.p.rollout.loss)
                learner.configure_optimizers().load_state_dict(ck["optimizer"])
                self._say(f"resuming from {path} after loop {state.loop} ({state.games} games)")
                return learner, state
            stale = path.with_name(f"stale-{state.fingerprint}.pt")
            os.replace(path, stale)
            self._say(f"checkpoint {path} was made with other params or a larger budget; moved to {stale.name}, "
                      "starting afresh")
        net, state, opt_state = self._initial()
        learner = QLearner(net, self.p.lr, self.p.rollout.loss)
        if opt_state is not None:
            learner.configure_optimizers().load_state_dict(opt_state)
        return learner, state

    def _say(self, msg: str) -> None:
        if self.cfg.progress:
            print(f"rl_phase{self.cfg.phase}[{self.cfg.variant}]: {msg}", flush=True)

    # ------------------------------------------------------------------ one loop
    def _loop_job(self, learner: QLearner, state: RunState, loop: int, epsilon: float) -> PlayJob:
        p, c = self.p, self.cfg
        me = NetSpec.from_net(learner.net, "learner", epsilon)
        base = _seed(p, c.phase, loop, 0)
        rng = np.random.default_rng(base)
        games = []
        if c.phase == 1:
            players = (me, self.sl_spec)
            for i in range(p.games_per_loop):
                seats = (0, 1) if i % 2 == 0 else (1, 0)
                games.append(GameSpec(base + i, seats, (seats[0] == 0, seats[1] == 0)))
        else:
            pool = [NetSpec.from_net(self._snapshot_net(learner, s), f"snapshot-{s}") for s in state.snapshots]
            players = (me, *pool)
            for i in range(p.games_per_loop):
                if not pool or rng.random() < p.phase2.self_play_fraction:
                    games.append(GameSpec(base + i, (0, 0), (True, True)))
                else:
                    k = 1 + int(rng.integers(len(pool)))
                    seats = (0, k) if i % 2 == 0 else (k, 0)
                    games.append(GameSpec(base + i, seats, (seats[0] == 0, seats[1] == 0)))
        table = WinProbTable.from_dict(state.winprob) if state.winprob else None
        scale = getattr(p.reward_scale, c.variant)
        rollout = None
        if p.algorithm == "rollout_pi":
            anchor = None
            if p.rollout.prior == "sl":  # the SL net rides along unseated in phase 2
                if self.sl_spec not in players:
                    players = (*players, self.sl_spec)
                anchor = players.index(self.sl_spec)
            temperature = getattr(p.rollout.temperature, c.variant)
            rollout = RolloutSpec(p.rollout.fraction, temperature,
                                  tuple(DECISION_NAMES.index(d) for d in p.rollout.decisions), anchor=anchor,
                                  loss=p.rollout.loss)
        return PlayJob(players=players, games=tuple(games), bf16=self.bf16, concurrency=p.selfplay.concurrency,
                       reward=RewardModel(c.variant, scale, table, p.wp_baseline), rollout=rollout,
                       explore_seed=base)

    def _snapshot_net(self, learner: QLearner, loop: int) -> KoiKoiNet:
        net = KoiKoiNet(learner.net.config)
        net.load_state_dict(torch.load(self.ckpt_dir / f"snapshot-{loop:05d}.pt", map_location="cpu",
                                       weights_only=True))
        return net

    def _save_snapshot(self, learner: QLearner, state: RunState) -> None:
        _atomic_save({k: v.detach().cpu() for k, v in learner.net.state_dict().items()},
                     self.ckpt_dir / f"snapshot-{state.loop:05d}.pt")
        state.snapshots.append(state.loop)
        while len(state.snapshots) > self.p.phase2.pool_size:  # files go after the next checkpoint no longer lists them
            self._dropped.append(state.snapshots.pop(0))

    def _play(self, job: PlayJob, desc: str) -> tuple[PlayResult, float]:
        from ..progress import progress_bar

        t0 = time.perf_counter()
        with progress_bar(total=len(job.games), desc=desc, unit="game", leave=False, enabled=self.cfg.progress) as bar:
            result = self.executor.run(job, progress=bar.update)
        return result, time.perf_counter() - t0

    def _evaluate(self, learner: QLearner, state: RunState, label: str) -> dict:
        p = self.p
        ev = evaluate(self.executor, NetSpec.from_net(learner.net, "learner"), self.sl_spec, p.eval_games,
                      _seed(p, 9, 0, 0), self.bf16, p.selfplay.concurrency, self.cfg.progress, desc=label)
        row = {"loop": state.loop_offset + state.loop, "games": state.games_offset + state.games, **ev.row()}
        state.curve.append(row)
        return row

    def _final_evaluation(self, learner: QLearner, state: RunState) -> dict:
        """``rl.final_eval_games`` games against SL on deals of their own (not the curve's); made once."""
        if state.final is None:
            p = self.p
            ev = evaluate(self.executor, NetSpec.from_net(learner.net, "learner"), self.sl_spec, p.final_eval_games,
                          _seed(p, 9, 1, 0), self.bf16, p.selfplay.concurrency, self.cfg.progress,
                          desc=f"phase {self.cfg.phase} {self.cfg.variant} final eval")
            state.final = ev.row()
            self._checkpoint(learner, state)
        return state.final

    def _refit_winprob(self, learner: QLearner, state: RunState) -> dict:
        wp = self.cfg.winprob
        from ..progress import progress_bar

        with progress_bar(total=wp.refit_games, desc="winprob refit", unit="game", leave=False,
                          enabled=self.cfg.progress) as bar:
            outcomes = simulate(NetSpec.from_net(learner.net, "learner"), wp.refit_games,
                                _seed(self.p, self.cfg.phase, state.loop, 7) // 10**6, self.executor, self.bf16,
                                self.p.selfplay.concurrency, bar.update)
        table = fit_table(outcomes, source=f"phase {self.cfg.phase} loop {state.loop}", c=wp.C)
        state.winprob = table.to_dict()
        return {"winprob/refit_games": wp.refit_games}

    def _target_reached(self, state: RunState) -> bool:
        p = self.p
        return (self.cfg.phase == 1 and len(state.evals) >= p.phase1.window
                and float(np.mean(state.evals[-p.phase1.window:])) >= p.phase1.target_win_rate)

    # ------------------------------------------------------------------ the phase
    def run(self) -> dict:
        try:
            return self._run()
        finally:
            if self._own_executor:
                self.executor.close()

    def _run(self) -> dict:
        c, p = self.cfg, self.p
        if p.train_threads:  # intra-op threads spin badly on a busy machine: 1 is often fastest there
            torch.set_num_threads(p.train_threads)
        learner, state = self._load_or_start()
        budget = p.phase1.loops if c.phase == 1 else p.phase2.loops
        tracker = _Tracker(c, state) if c.mlflow else None
        if state.loop == 0 and not any(r["loop"] == state.loop_offset for r in state.curve):
            row = self._evaluate(learner, state, "eval (start)")
            self._say(f"start: win rate {row['win_rate']:.3f}, point diff {row['point_diff']:+.2f} vs SL")
            if tracker:
                tracker.metrics({f"eval/{k}": row[k] for k in ("win_rate", "point_diff", "ci_low", "ci_high")},
                                row["loop"])
            self._checkpoint(learner, state)
        if c.phase == 2 and not state.snapshots:
            self._save_snapshot(learner, state)  # the phase-1 result opens the opponent pool
        while state.loop < budget and not self._target_reached(state):  # a raised budget continues a run
            t0 = time.perf_counter()
            state.final = None  # a raised budget trains on: the old final evaluation no longer applies
            loop = state.loop + 1
            glob = state.loop_offset + state.loop
            epsilon = p.epsilon_at(glob)
            job = self._loop_job(learner, state, loop, epsilon)
            result, play_s = self._play(job, f"phase {c.phase} {c.variant} loop {loop}/{budget} play")
            buffer = SampleBuffer(result.samples)
            torch.manual_seed(_seed(p, c.phase, loop, 1))  # dropout
            losses = fit_pass(learner, buffer, p.batch_size, _seed(p, c.phase, loop, 2), self.train_precision,
                              progress=c.progress, epochs=p.epochs, accelerator=self.accelerator)
            metrics = {**losses, "epsilon": epsilon, "play/games_per_s": p.games_per_loop / play_s,
                       "play/samples": len(buffer), "play/mean_batch": result.mean_batch}
            del buffer, result  # Monte-Carlo samples are used once: the next loop plays with the new policy
            state.loop, state.games, state.epsilon = loop, state.games + p.games_per_loop, epsilon
            if c.variant == "wp" and c.winprob.refit_every and loop % c.winprob.refit_every == 0:
                metrics.update(self._refit_winprob(learner, state))
            if c.phase == 2 and loop % p.phase2.snapshot_every == 0:
                self._save_snapshot(learner, state)
            if loop % p.eval_every == 0 or loop == budget:
                row = self._evaluate(learner, state, f"phase {c.phase} {c.variant} loop {loop} eval")
                state.evals.append(row["win_rate"])
                metrics.update({f"eval/{k}": row[k] for k in ("win_rate", "point_diff", "ci_low", "ci_high")})
                self._say(f"loop {loop}/{budget}: win rate {row['win_rate']:.3f} "
                          f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}], "
                          f"point diff {row['point_diff']:+.2f} vs SL, eps {epsilon:.3f}, "
                          f"{p.games_per_loop / play_s:.1f} games/s")
            state.seconds += time.perf_counter() - t0
            metrics["loop_seconds"] = time.perf_counter() - t0
            if tracker:
                tracker.metrics(metrics, state.loop_offset + loop)
            self._checkpoint(learner, state)
        state.stop_reason = "target win rate reached" if self._target_reached(state) else "loop budget used"
        self._checkpoint(learner, state)
        self._final_evaluation(learner, state)
        return self._finish(learner, state, tracker)

    def _checkpoint(self, learner: QLearner, state: RunState) -> None:
        _atomic_save({"state": asdict(state), "model": learner.net.state_dict(),
                      "optimizer": learner.configure_optimizers().state_dict()}, self.ckpt_dir / STATE_FILE)
        for loop in self._dropped:
            (self.ckpt_dir / f"snapshot-{loop:05d}.pt").unlink(missing_ok=True)
        self._dropped.clear()
        release_free_memory()  # after every loop: glibc would keep the loop's freed buffers (README "RL memory")

    def _finish(self, learner: QLearner, state: RunState, tracker: _Tracker | None) -> dict:
        c = self.cfg
        final = state.final
        summary = {"phase": c.phase, "variant": c.variant, "algorithm": self.p.algorithm, "loops": state.loop,
                   "games": state.games, "global_loops": state.loop_offset + state.loop,
                   "global_games": state.games_offset + state.games, "win_rate": final["win_rate"],
                   "ci95": [final["ci_low"], final["ci_high"]], "point_diff": final["point_diff"],
                   "eval_games": final["eval_games"], "stop_reason": state.stop_reason,
                   "epsilon": state.epsilon, "train_seconds": round(state.seconds, 1)}
        # no wall-clock values in the model's meta: its config.json must hash the same on every run (a DVC dep)
        meta = {"kind": "rl", "variant": c.variant, "reward": c.variant,
                **{k: v for k, v in summary.items() if k != "train_seconds"}}
        if state.winprob:  # RL-WP: the table the last loops were rewarded with (phase 2 starts from it)
            meta["winprob"] = {k: v for k, v in state.winprob.items() if k != "grid"}
        save_model(learner.net, c.out_dir, meta)
        write_curve(state.curve, c.out_dir / CURVE_FILE)
        c.results_dir.mkdir(parents=True, exist_ok=True)
        write_curve(state.curve, c.results_dir / CURVE_FILE)
        atomic.write_text(c.results_dir / "metrics.json", json.dumps(summary, indent=2) + "\n")
        if tracker:
            tracker.finish(learner.net, c.results_dir / CURVE_FILE, summary, state.winprob)
        self._say(f"done ({state.stop_reason}): {state.loop} loops; final evaluation {summary['win_rate']:.3f} "
                  f"[{final['ci_low']:.3f}, {final['ci_high']:.3f}] vs SL over {final['eval_games']} games; "
                  f"model in {c.out_dir}")
        return summary


class _Tracker:
    """MLflow logging for one phase run; resumes the same MLflow run after a restart."""

    def __init__(self, cfg: PhaseConfig, state: RunState) -> None:
        import mlflow

        from ..runstate import owner_tags, remember_run, remembered_run
        from ..tracking import setup_experiment

        self.mlflow = mlflow
        self.cfg = cfg
        exp = setup_experiment("rl")
        run = None
        record = cfg.out_dir / "checkpoints" / RUN_RECORD
        run_id = state.run_id or remembered_run(record, state.fingerprint)  # killed before its first checkpoint
        if run_id:
            try:
                run = mlflow.start_run(run_id=run_id, tags=owner_tags())
                state.run_id = run_id
            except Exception:  # the store was moved or wiped: log to a new run
                run = None
        if run is None:
            run = mlflow.start_run(experiment_id=exp, run_name=f"rl-phase{cfg.phase}-{cfg.variant}", tags=owner_tags())
            state.run_id = run.info.run_id
            remember_run(record, state.run_id, state.fingerprint)
            flat = dotted(cfg.params.model_dump(), "rl")
            flat.update({"phase": cfg.phase, "variant": cfg.variant, "sl_dir": str(cfg.sl_dir)})
            if cfg.variant == "wp":
                flat.update(dotted(cfg.winprob.model_dump(), "winprob"))
            mlflow.log_params(flat)
        else:
            mlflow.set_tag("resumed_after_loop", state.loop)

    def metrics(self, values: dict, step: int) -> None:
        self.mlflow.log_metrics({k: float(v) for k, v in values.items()}, step=step)

    def finish(self, net: KoiKoiNet, curve: Path, summary: dict, winprob: dict | None) -> None:
        from ..registry import log_model
        from ..runstate import log_metrics_once

        mlflow = self.mlflow
        mlflow.log_artifact(str(curve))
        if winprob:
            mlflow.log_dict(winprob, "winprob.json")
        final = {f"final/{k}": float(v) for k, v in summary.items() if isinstance(v, int | float)}
        lo, hi = summary["ci95"]
        final.update({"final/ci95": (hi - lo) / 2, "final/ci95_low": lo, "final/ci95_high": hi})
        log_metrics_once(mlflow.MlflowClient(), mlflow.active_run().info.run_id, final)  # a rerun repeats none
        mlflow.set_tag("stop_reason", summary["stop_reason"])
        log_model(self.cfg.out_dir, register=self.cfg.register and self.cfg.phase == 2)
        mlflow.end_run()


def write_curve(rows: list[dict], path: Path) -> None:
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=CURVE_COLUMNS)
    w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in CURVE_COLUMNS})
    atomic.write_text(path, f.getvalue())


def read_curve(path: Path) -> list[dict]:
    with path.open() as f:
        return [{"loop": int(r["loop"]), "games": int(r["games"]), "win_rate": float(r["win_rate"]),
                 "point_diff": float(r["point_diff"]), "eval_games": int(r["eval_games"]),
                 "ci_low": float(r["ci_low"]), "ci_high": float(r["ci_high"])} for r in csv.DictReader(f)]
