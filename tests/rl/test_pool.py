"""Phase 2's pool: a snapshot is played only once it differs from the learner, and kept only if it held its own
in a duel against the learner; the curve's interval is over deals."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.duel.stats import DuelResult
from pipeline.params import parse_params
from pipeline.rl.evaluation import Evaluation, pair_scores
from pipeline.rl.phase_state import LoopCounters, PhaseConfig, snapshot_path
from pipeline.rl.pool import START, SnapshotPool, held_its_own
from pipeline.selfplay.batched import GameOutcome
from stages.rl_phase import PhasePaths, rl_stage


def _evaluation(win_rate: float, games: int = 64) -> Evaluation:
    wins = round(win_rate * games)
    pairs = [1.0] * (wins // 2) + [0.0] * ((games - wins) // 2) + ([0.5] if wins % 2 else [])
    return Evaluation(DuelResult(games=games, wins=wins, losses=games - wins), pairs)


def _pool(tmp_path: Path, params: dict, **phase2) -> SnapshotPool:
    params["rl"]["phase2"].update(phase2)
    cfg = PhaseConfig(2, "point", parse_params(params).rl, parse_params(params).winprob, tmp_path, tmp_path,
                      tmp_path, tmp_path / "ckpt")
    cfg.ckpt_dir.mkdir()
    return SnapshotPool(cfg, LoopCounters("fp"), [])


def test_a_snapshot_is_played_once_it_differs_and_kept_only_if_it_held_its_own(tmp_path, params, make_net):
    pool = _pool(tmp_path, params, pool_start=True, gate_games=8, pool_size=3)
    phase1, sl = make_net(0), make_net(1)
    pool.open(phase1, sl)
    assert pool.state.snapshots == [START, 0]
    duels = []

    def duel(win_rate):
        return lambda net, loop: duels.append(loop) or _evaluation(win_rate)

    # loop 1: the learner is phase 1's model: snapshot 0 is itself, never played; the start network duels once
    assert [s for s, _ in pool.opponents(phase1, duel(0.45))] == [START] and duels == [START]
    learner = make_net(2)  # the learner has fitted: phase 1's model differs now
    assert [s for s, _ in pool.opponents(learner, duel(0.05))] == [START] and duels == [START, 0]
    assert pool.state.snapshots == [START] and pool.dropped == [0]  # beaten plainly: out, its file goes later
    assert pool.state.gated == [START]  # gated once: not duelled again
    assert [s for s, _ in pool.opponents(learner, duel(0.0))] == [START] and duels == [START, 0]
    for loop in (1, 2, 3):  # pool_size 3: the oldest leave
        pool.add(make_net(10 + loop), loop)
    assert pool.state.snapshots == [1, 2, 3] and START in pool.dropped and pool.state.gated == []
    assert snapshot_path(pool.cfg, START).name == "snapshot-start.pt"


def test_without_a_duel_every_differing_snapshot_is_played(tmp_path, params, make_net):
    pool = _pool(tmp_path, params, pool_start=False, gate_games=0)
    pool.open(make_net(0), make_net(1))
    assert pool.state.snapshots == [0]
    assert pool.opponents(make_net(0), lambda *_: pytest.fail("no duel")) == []
    assert [s for s, _ in pool.opponents(make_net(3), lambda *_: pytest.fail("no duel"))] == [0]


def test_held_its_own_and_the_interval_over_deals():
    assert held_its_own(_evaluation(0.45)) and not held_its_own(_evaluation(0.05))
    ev = _evaluation(0.5)
    lo, hi = ev.ci95
    wilson = ev.result.ci95
    assert lo < 0.5 < hi and (lo, hi) != wilson
    flat = Evaluation(DuelResult(games=8, wins=4, losses=4), [0.5] * 4)  # no spread over deals: Wilson's
    assert flat.ci95 == flat.result.ci95
    outcomes = [GameOutcome(7, (0, 1), (40, 20), 0, (), 1), GameOutcome(7, (1, 0), (40, 20), 0, (), 1),
                GameOutcome(8, (0, 1), (30, 30), None, (), 1)]  # deal 8 lost its second game: no pair
    assert pair_scores(outcomes) == [0.5]


def test_phase2_pool_games_meet_another_network_from_the_first_loop(project, params, monkeypatch):
    from pipeline.rl import training

    params["rl"]["phase1"]["loops"] = 1
    params["rl"]["phase2"].update(loops=1, pool_start=True, gate_games=2, self_play_fraction=0.0)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    jobs = []
    original_play = training.PhaseRunner.play
    monkeypatch.setattr(training.PhaseRunner, "play",
                        lambda self, job, desc: jobs.append(job) or original_play(self, job, desc))
    rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    seated = {jobs[0].players[i].name for g in jobs[0].games for i in g.seats}
    assert seated == {"learner", "snapshot-start"}  # phase 1's model is the learner itself: not an opponent
