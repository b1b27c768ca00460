"""The RL training loop: phase 1 against the frozen SL agent, phase 2 by self-play (docs/rl.md).

A loop plays, fits ``rl.epochs`` passes (phase 1 beside the replayed loops), hands the net to the algorithm's
``after_fit`` and evaluates every ``eval_every`` loops. Every random choice is seeded from (seed, phase, loop) and
``state.pt`` is rewritten after every loop, so a resumed run replays an uninterrupted one exactly.
"""

import time
from dataclasses import asdict, replace

import numpy as np
import torch

from ..agents.base import PlayerSpec
from ..net.inference import checked
from ..net.modelio import load_model
from ..runtime import atomic
from ..runtime.hardware import announce, placement_params
from ..runtime.memory import bound_kernel_caches, release_free_memory
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob, PlayResult
from ..selfplay.executor import Executor, make_executor
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from ..value.winprob import WinProbTable
from . import first_loop
from .algorithms import algorithm_for
from .devices import execution_key, resolve_devices
from .evaluation import curve_row, evaluate
from .experience import Replay
from .learner import PolicyLearner, SampleBuffer, fit_pass
from .phase_outputs import finish_phase
from .phase_state import (
    CURVE_FILE,
    STATE_FILE,
    LoopCounters,
    PhaseConfig,
    eval_seed,
    initial_state,
    loop_seed,
    phase_fingerprint,
    start_or_resume,
)
from .phase_tracking import PhaseTracker


def search_metrics(result: PlayResult) -> dict[str, float]:
    """A loop's searched decisions (expert_it): how many, how many changed the network's move, seconds each."""
    stats = {k.split(".", 1)[1]: v for k, v in result.player_stats.items()}
    n = stats.get("searched", 0)
    if not n:
        return {}
    return {"search/decisions": n, "search/changed": stats.get("changed", 0) / n,
            "search/seconds_per_decision": stats.get("search_seconds", 0.0) / n}


EVAL_METRICS = ("win_rate", "point_diff", "ci_low", "ci_high", "vs_phase1", "vs_phase1_low", "vs_phase1_high")

__all__ = ["CURVE_FILE", "STATE_FILE", "PhaseConfig", "PhaseRunner", "LoopCounters"]


class PhaseRunner:
    """Runs (or resumes) one phase; ``run()`` returns the final metrics."""

    def __init__(self, cfg: PhaseConfig, executor: Executor | None = None) -> None:
        self.cfg = cfg
        self.p = cfg.params
        bound_kernel_caches()  # before the first bf16 op: new batch shapes grew its kernel caches (docs/faults.md)
        devices = resolve_devices(self.p, cfg.phase)
        self.sl_net, _ = load_model(cfg.sl_dir)
        # a compiled setup that fails here runs (and is recorded, and fingerprinted) uncompiled, by every player
        self.devices = replace(devices, inference=checked(devices.inference, self.sl_net, devices.play))
        self.accelerator, self.inference = self.devices.accelerator, self.devices.inference
        self.train_precision = self.devices.train_precision
        self.cfg = cfg = replace(cfg, execution=execution_key(self.devices, self.p))  # resumes only on the same
        self._own_executor = executor is None
        sp = self.p.selfplay
        self.executor = executor or make_executor(sp.workers, sp.start_method, sp.backend, self.devices.play)
        self.sl_spec = NetSpec.from_net(self.sl_net, "sl")
        self.algorithm = algorithm_for(self.p, cfg.phase, cfg.distill)
        self.phase1_spec = NetSpec.from_net(load_model(cfg.init_dir)[0], "phase1") if cfg.init_dir else None

    def _say(self, msg: str) -> None:
        if self.cfg.progress:
            print(f"rl_phase{self.cfg.phase}[{self.cfg.variant}]: {msg}", flush=True)

    def _player(self, net: torch.nn.Module, name: str, epsilon: float = 0.0, training: bool = False) -> PlayerSpec:
        """How the learner's ``net`` plays: the algorithm says (``algorithms``)."""
        return self.algorithm.player(net, self.sl_spec, name, self.cfg.variant, epsilon, training)

    def _loop_job(self, learner: PolicyLearner, state: LoopCounters, loop: int, epsilon: float) -> PlayJob:
        p, c = self.p, self.cfg
        me = self._player(learner.net, "learner", epsilon, training=True)
        base = loop_seed(p, c.phase, loop, 0)
        games = []
        if c.phase == 1:
            players = (me, self.sl_spec)
            for i in range(p.games_of(1)):
                seats = (0, 1) if i % 2 == 0 else (1, 0)
                games.append(GameSpec(base + i, seats, (seats[0] == 0 or p.phase1.record_sl,
                                                        seats[1] == 0 or p.phase1.record_sl)))
        else:  # self-play: both seats the learner, both recorded
            players = (me,)
            games = [GameSpec(base + i, (0, 0), (True, True)) for i in range(p.games_of(2))]
        table = WinProbTable.from_dict(state.winprob) if state.winprob else None
        scale = getattr(p.reward_scale, c.variant)
        reward = RewardModel(c.variant, scale, table, p.wp_baseline)
        players, recorder = self.algorithm.recorder(players, self.sl_spec, c.variant, reward=reward,
                                                    seed=loop_seed(p, c.phase, loop, 3))
        return PlayJob(players=players, games=tuple(games), inference=self.inference,
                       concurrency=p.selfplay.concurrency, reward=reward, recorder=recorder, explore_seed=base)

    def first_loop_job(self) -> tuple[PlayJob, str]:
        """The games of this phase's first loop from a fresh start (what ``rl_phase1_play`` plays once for both
        reward models: ``first_loop``) and the fingerprint of the run that would play them."""
        net, state, _, _ = initial_state(self.cfg, phase_fingerprint(self.cfg))
        learner = PolicyLearner(net, lr=self.p.lr, algorithm=self.algorithm, augment=self.p.augment)
        return self._loop_job(learner, state, 1, self.p.epsilon_at(state.loop_offset)), state.fingerprint

    def _shared_first_loop(self, state: LoopCounters, loop: int) -> tuple[PlayResult, None] | None:
        """Phase 1's first loop as ``rl_phase1_play`` played it for this run (``cfg.first_loop``; no play time of its
        own), or None."""
        c = self.cfg
        if c.phase != 1 or loop != 1 or c.first_loop is None:
            return None
        shared = first_loop.read(c.first_loop, c.variant, state.fingerprint)
        if shared is None and c.first_loop.is_file():
            self._say(f"loop 1: {c.first_loop} holds no games of this run (other params, models, code or "
                      "devices): playing them here")
        elif shared is None:
            self._say(f"loop 1: no {c.first_loop} (the rl_phase1_play stage's): playing the games here")
        else:
            self._say(f"loop 1: the games rl_phase1_play played once for both rewards ({c.first_loop})")
        return None if shared is None else (shared, None)

    def play(self, job: PlayJob, desc: str) -> tuple[PlayResult, float]:
        t0 = time.perf_counter()
        with progress_bar(total=len(job.games), desc=desc, unit="game", leave=False, enabled=self.cfg.progress) as bar:
            result = self.executor.run(job, progress=bar.update)
        return result, time.perf_counter() - t0

    def _evaluate(self, learner: PolicyLearner, state: LoopCounters, label: str) -> dict:
        """A curve row: the learner against SL and (phase 2) against phase 1's network, on the same deals."""
        p = self.p
        me = self._player(learner.net, "learner")
        ev = evaluate(self.executor, me, self.sl_spec, p.eval_games, eval_seed(p, final=False), self.inference,
                      p.selfplay.concurrency, self.cfg.progress, desc=label)
        row = {"loop": state.loop_offset + state.loop, "games": state.games_offset + state.games,
               "seconds": round(state.cpu_seconds, 1), **curve_row(ev)}
        if self.phase1_spec is not None:
            ev1 = evaluate(self.executor, me, self.phase1_spec, p.eval_games, eval_seed(p, final=False),
                           self.inference, p.selfplay.concurrency, self.cfg.progress, desc=f"{label} vs phase 1")
            lo, hi = ev1.ci95
            row.update(vs_phase1=round(ev1.win_rate, 4), vs_phase1_low=round(lo, 4), vs_phase1_high=round(hi, 4))
        state.curve.append(row)
        return row

    def _final_evaluation(self, learner: PolicyLearner, state: LoopCounters) -> dict:
        """``rl.final_eval_games`` games against SL on deals of their own (not the curve's); made once. Both
        phases play the same deals, so phase 2 with no loop keeps phase 1's (``phase_state.initial_state``)."""
        if state.final is None:
            p = self.p
            ev = evaluate(self.executor, self._player(learner.net, "learner"), self.sl_spec, p.final_eval_games,
                          eval_seed(p, final=True), self.inference, p.selfplay.concurrency, self.cfg.progress,
                          desc=f"phase {self.cfg.phase} {self.cfg.variant} final eval")
            state.final = curve_row(ev)
            self._checkpoint(learner, state)
        return state.final

    def _target_reached(self, state: LoopCounters) -> bool:
        p = self.p
        return (self.cfg.phase == 1 and len(state.evals) >= p.phase1.window
                and float(np.mean(state.evals[-p.phase1.window:])) >= p.phase1.target_win_rate)

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
        learner, state, resumed, packed = start_or_resume(c, self.algorithm)
        self.replay = Replay(p.replay if c.phase == 1 else 0, packed)  # phase 2 fits its own loop's targets only
        if resumed:
            self._say(f"resuming from {c.ckpt_dir / STATE_FILE} after loop {state.loop} ({state.games} games)")
        budget = c.budget
        placements = self.devices.placements()
        placement = announce(f"rl_phase{c.phase}[{c.variant}]", placements) if c.progress \
            else placement_params(placements)
        tracker = PhaseTracker(c, state, placement) if c.mlflow else None
        if state.loop == 0 and not any(r["loop"] == state.loop_offset for r in state.curve):
            row = self._evaluate(learner, state, "eval (start)")
            self._say(f"start: win rate {row['win_rate']:.3f}, point diff {row['point_diff']:+.2f} vs SL")
            if tracker:
                tracker.metrics({f"eval/{k}": row[k] for k in EVAL_METRICS if k in row}, row["loop"])
            self._checkpoint(learner, state)

        loops = progress_bar(total=budget, initial=state.loop, desc=f"rl_phase{c.phase}[{c.variant}] loops",
                             unit="loop", enabled=c.progress and budget > state.loop)  # a log's line a minute
        while state.loop < budget and not self._target_reached(state):  # a raised budget continues a run
            t0, cpu0 = time.perf_counter(), time.process_time()
            state.final = None  # a raised budget trains on: the old final evaluation no longer applies
            loop = state.loop + 1
            epsilon = p.epsilon_at(state.loop_offset + state.loop)
            games = p.games_of(c.phase)
            result, play_s = self._shared_first_loop(state, loop) or self.play(
                self._loop_job(learner, state, loop, epsilon), f"phase {c.phase} {c.variant} loop {loop}/{budget} play")
            fitted = self.algorithm.fitted(result)
            buffer = SampleBuffer([*self.replay.samples(), *fitted], self.replay.encoded())
            torch.manual_seed(loop_seed(p, c.phase, loop, 1))  # dropout
            losses = fit_pass(learner, buffer, p.batch_size, loop_seed(p, c.phase, loop, 2), self.train_precision,
                              progress=c.progress, epochs=p.epochs_of(c.phase), accelerator=self.accelerator)
            n = len(fitted)  # kept encoded with the replay: the loops that replay them encode them no more
            self.replay.add(fitted, buffer.encode().since(len(buffer) - n) if n else None)
            after = self.algorithm.after_fit(learner.net, result, loop_seed(p, c.phase, loop, 4), self.inference)
            metrics = {**losses, **after,
                       **search_metrics(result), "epsilon": epsilon, "play/samples": len(fitted),
                       "train/samples": len(buffer),
                       "play/mean_batch": result.mean_batch}
            if play_s is not None:  # played here, not by rl_phase1_play
                metrics.update({"play/games_per_s": games / play_s, "play/seconds": play_s})
            # the loop's CPU: this process's (fit, distillation) and the workers' play (rl_phase1_play's for its games)
            state.cpu_seconds += time.process_time() - cpu0 + result.seconds
            del buffer, result, fitted  # beyond the replay's loops, samples are dropped: the next loop plays anew
            state.loop, state.games, state.epsilon = loop, state.games + games, epsilon
            if loop % p.eval_every == 0 or loop == budget:
                row = self._evaluate(learner, state, f"phase {c.phase} {c.variant} loop {loop} eval")
                state.evals.append(row["win_rate"])
                metrics.update({f"eval/{k}": row[k] for k in EVAL_METRICS if k in row})
                self._say(f"loop {loop}/{budget}: win rate {row['win_rate']:.3f} "
                          f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}], "
                          f"point diff {row['point_diff']:+.2f} vs SL, "
                          + (f"{row['vs_phase1']:.3f} [{row['vs_phase1_low']:.3f}, {row['vs_phase1_high']:.3f}] vs "
                             "phase 1, " if "vs_phase1" in row else "") + f"eps {epsilon:.3f}, "
                          + (f"{games / play_s:.1f} games/s" if play_s is not None else "games of rl_phase1_play"))
            state.seconds += time.perf_counter() - t0
            metrics.update(loop_seconds=time.perf_counter() - t0, cpu_seconds=state.cpu_seconds)
            if tracker:
                tracker.metrics(metrics, state.loop_offset + loop)
            self._checkpoint(learner, state)
            loops.update()
        loops.close()
        state.stop_reason = "target win rate reached" if self._target_reached(state) else "loop budget used"
        self._checkpoint(learner, state)
        self._final_evaluation(learner, state)
        return finish_phase(c, self.algorithm, learner.net, self.sl_net, state, tracker)

    def _checkpoint(self, learner: PolicyLearner, state: LoopCounters) -> None:
        ck = {"state": asdict(state), "model": learner.net.state_dict(),
              "optimizer": learner.configure_optimizers().state_dict(), "replay": self.replay.pack(),
              "algorithm": self.algorithm.state()}
        atomic.torch_save(ck, self.cfg.ckpt_dir / STATE_FILE)
        release_free_memory()  # glibc keeps a loop's freed buffers otherwise (docs/faults.md, "RL main-process memory")
