from dataclasses import dataclass, replace

import numpy as np
import pytest

from pipeline.agents.base import legal_list
from pipeline.engine import DISCARD
from pipeline.selfplay.batched import GameSpec, PlayJob, Recorder, Sample, Step, play_job, play_one_by_one
from pipeline.selfplay.executor import InlineExecutor, ProcessExecutor
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel


@pytest.fixture
def job_of(make_net):
    return lambda epsilon=0.0: _job(make_net, epsilon)


def _job(tiny_net, epsilon: float = 0.0, n: int = 6) -> PlayJob:
    a = NetSpec.from_net(tiny_net(0), "a", epsilon)
    b = NetSpec.from_net(tiny_net(1), "b")
    games = tuple(GameSpec(100 + i, (0, 1) if i % 2 else (1, 0), (True, i % 3 == 0)) for i in range(n))
    games += (GameSpec(200, (0, 0), (True, True)),)
    return PlayJob(players=(a, b), games=games, concurrency=16, reward=RewardModel("point"), num_rounds=3)


def _key(result):
    return [(o.seed, o.seats, o.points, o.winner, o.rounds, o.decisions) for o in result.outcomes]


@pytest.mark.parametrize("epsilon", [0.0, 0.3])
def test_batched_play_equals_one_game_at_a_time(job_of, epsilon):
    job = job_of(epsilon)
    batched = play_job(job)
    single = play_one_by_one(job)
    assert batched.mean_batch > 1.5 and single.mean_batch == 1.0  # really batched vs really not
    assert _key(batched) == _key(single)
    assert [(s.action, s.reward, s.obs.decision) for s in batched.samples] == \
        [(s.action, s.reward, s.obs.decision) for s in single.samples]


def test_samples_follow_the_recorded_seats_and_round_points(job_of):
    job = job_of()
    result = play_job(job)
    for o, traj in zip(result.outcomes, result.trajectories):
        game = next(g for g in job.games if g.seed == o.seed)
        if not any(game.record):
            assert traj == []
            continue
        assert traj, "a recording seat must yield samples"
        per_round = {r[0]: r[3] for r in o.rounds}
        for s in traj:
            assert s.obs.to_act and (s.obs.legal_mask >> s.action) & 1
            assert game.record[s.obs.player]
            assert s.reward == per_round[s.obs.round][s.obs.player]


def test_split_jobs_merge_to_the_same_result(job_of):
    job = job_of()
    whole = play_job(job)
    merged = InlineExecutor().run(job)
    parts = [play_job(j) for j in job.split(3)]
    assert len(job.split(3)) == 3
    from pipeline.selfplay.batched import PlayResult

    assert _key(PlayResult.merge(parts)) == _key(whole) == _key(merged)


def test_recording_without_a_reward_model_is_an_error(job_of):
    with pytest.raises(ValueError, match="reward model"):
        play_job(replace(job_of(), reward=None))


@pytest.mark.slow
def test_process_pool_plays_the_same_games(job_of):
    job = job_of()
    ticks = []
    with ProcessExecutor(2) as ex:
        pooled = ex.run(job, progress=ticks.append)
    assert _key(pooled) == _key(play_job(job))
    assert sum(ticks) <= len(job.games)


@dataclass(frozen=True)
class _LowestDiscard(Recorder):
    """A recorder of its own: at a discard the lowest legal card instead of the player's, kept with its values."""

    def record(self, step: Step) -> None:
        for i, o in enumerate(step.obs):
            if o.decision == DISCARD:
                step.actions[i] = legal_list(o)[0]
                step.keep(i, step.values[i].copy())

    def sample(self, obs, action, reward, kept):
        return Sample(obs, action, reward, kept)


def test_the_recorder_keeps_what_it_chooses_and_its_actions_are_played(job_of):
    job = replace(job_of(), recorder=_LowestDiscard())
    result, plain = play_job(job), play_job(job_of())
    samples = result.samples
    assert samples and all(s.obs.decision == DISCARD and s.action == legal_list(s.obs)[0] for s in samples)
    assert all(s.target.shape == (50,) and s.target[s.action] > -np.inf for s in samples)
    assert _key(result) != _key(plain)  # the games played the recorder's discards
    single = play_one_by_one(job)
    assert _key(single) == _key(result)
    assert [(s.action, s.reward) for s in single.samples] == [(s.action, s.reward) for s in samples]
