"""Phase 1's first loop played once for both reward models (``rl_phase1_play``): each model's samples are the
ones its own play gives, and ``rl_phase1@<reward>`` fits on them only where they are its run's."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pipeline.params import parse_params
from stages.rl_phase import FIRST_LOOP, PhasePaths, phase_config, rl_stage
from stages.rl_phase1_play import play_stage
from stages.winprob import winprob_stage


def _same_samples(a, b) -> bool:
    def equal(x, y):
        return (x is None and y is None) or (x is not None and y is not None and np.array_equal(x, y, equal_nan=True))

    return len(a) == len(b) and all(s.obs == t.obs and s.action == t.action and s.reward == t.reward
                                    and equal(s.target, t.target) for s, t in zip(a, b))


def _play_stage(project, params):
    winprob_stage(parse_params(params).winprob, "models/winprob", "results/winprob", progress=False)
    return play_stage(parse_params(params), Path("models/sl"), project / FIRST_LOOP,
                      Path("models/winprob/winprob.json"), progress=False)


@pytest.mark.parametrize("algorithm", ["rollout_pi", "mc_dqn"])
def test_one_play_gives_each_reward_the_samples_of_its_own_play(project, params, algorithm):
    from pipeline.rl import first_loop
    from pipeline.rl.phase_state import phase_fingerprint
    from pipeline.rl.training import PhaseRunner

    params["rl"]["algorithm"] = algorithm
    summary = _play_stage(project, params)
    assert summary["shared"] and summary["games"] == 4
    written = (project / FIRST_LOOP).read_bytes()
    _play_stage(project, params)
    assert (project / FIRST_LOOP).read_bytes() == written  # nothing timed: the same bytes, phase 1 stays up to date
    for variant in ("point", "wp"):
        runner = PhaseRunner(phase_config(1, variant, parse_params(params), PhasePaths.layout(1, variant),
                                          progress=False, mlflow=False))
        try:
            job, fingerprint = runner.first_loop_job()
            own, _ = runner.play(job, "own")
        finally:
            runner.executor.close()
        assert fingerprint == phase_fingerprint(runner.cfg)
        shared = first_loop.read(project / FIRST_LOOP, variant, fingerprint)
        assert own.samples and _same_samples(shared.samples, own.samples)
        assert first_loop.read(project / FIRST_LOOP, variant, "another run") is None


def test_phase1_fits_its_first_loop_on_the_shared_games_of_its_own_run_only(project, params, monkeypatch, capsys):
    from pipeline.rl import training

    _play_stage(project, params)
    played = []
    original_play = training.PhaseRunner.play
    monkeypatch.setattr(training.PhaseRunner, "play",
                        lambda self, job, desc: played.append(desc) or original_play(self, job, desc))
    rl_stage(1, "wp", parse_params(params), PhasePaths.layout(1, "wp"), mlflow=False)  # 2 loops
    assert played == ["phase 1 wp loop 2/2 play"]
    assert "loop 1: the games rl_phase1_play played once for both rewards" in capsys.readouterr().out

    played.clear()
    params["rl"]["branch"]["temperature"]["wp"] = 0.2  # another run: its first loop's targets differ
    rl_stage(1, "wp", parse_params(params), PhasePaths.layout(1, "wp"), mlflow=False)
    assert played == ["phase 1 wp loop 1/2 play", "phase 1 wp loop 2/2 play"]
    assert "holds no games of this run" in capsys.readouterr().out


def test_games_that_differ_are_not_shared():
    from pipeline.rl.algorithms.rollout_pi import BranchRecorder
    from pipeline.rl.first_loop import same_games
    from pipeline.selfplay.batched import GameSpec, PlayJob
    from pipeline.selfplay.rewards import RewardModel

    job = PlayJob(players=(), games=(GameSpec(1),), reward=RewardModel("point"),
                  recorder=BranchRecorder(temperature=0.25))
    scored_apart = replace(job, reward=RewardModel("point", 10.0), recorder=BranchRecorder(temperature=0.1))
    assert same_games([job, scored_apart])
    assert not same_games([job, replace(job, games=(GameSpec(2),))])
    assert not same_games([job, replace(job, recorder=replace(job.recorder, samples=2))])


def test_nothing_is_played_where_the_games_differ_by_reward(project, params, capsys):
    from pipeline.rl.first_loop import read

    params["rl"]["algorithm"] = "expert_it"
    assert _play_stage(project, params) == {"shared": False}
    assert "nothing to share" in capsys.readouterr().out
    assert read(project / FIRST_LOOP, "point", "any") is None
