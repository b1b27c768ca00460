"""rl.replay (the last loops' samples, fitted again) and rl.augment (month relabelling in RL batches)."""

import numpy as np
import pytest
import torch

from pipeline.params import parse_params
from pipeline.rl.algorithms.rollout_pi import BranchRecorder, RolloutPolicyIteration
from pipeline.rl.experience import Replay
from pipeline.rl.learner import PolicyLearner, SampleBuffer, collate, fit_pass
from pipeline.runtime import atomic
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from pipeline.tracking.resume import read_training_state
from stages.rl_phase import PhasePaths, rl_stage


def _samples(make_net, seed: int, loss: str = "logit_mse"):
    players = (NetSpec.from_net(make_net(0), "a"), NetSpec.from_net(make_net(1), "b"))
    games = tuple(GameSpec(seed + i, (0, 1) if i % 2 else (1, 0), (True, True)) for i in range(3))
    job = PlayJob(players=players, games=games, concurrency=8, reward=RewardModel("point"), num_rounds=2,
                  recorder=BranchRecorder(temperature=1.0, loss=loss, samples=2))
    return play_job(job).samples


def _same(a, b) -> None:
    assert len(a) == len(b) > 10
    for x, y in zip(a, b, strict=True):
        assert x.obs == y.obs and x.action == y.action and x.reward == y.reward
        np.testing.assert_array_equal(x.target, y.target)  # NaN off the branched actions, in both


def test_replay_survives_a_weights_only_checkpoint(tmp_path, make_net):
    """The samples come back equal from a ``state.pt`` read as every checkpoint is (weights_only)."""
    loops = [_samples(make_net, 100), _samples(make_net, 200, "cross_entropy")]
    replay = Replay(2)
    for loop in loops:
        replay.add(loop)
    atomic.torch_save({"replay": replay.pack()}, tmp_path / "state.pt")
    back = Replay(2, read_training_state(tmp_path / "state.pt", "test")["replay"])
    _same(back.samples(), loops[0] + loops[1])
    assert len(back) == len(replay) == len(loops[0]) + len(loops[1])
    assert all(t.dtype == torch.uint8 and t.dim() == 1 for t in replay.pack())  # one blob a loop


def test_replay_keeps_only_the_last_loops(make_net):
    a, b = _samples(make_net, 100), _samples(make_net, 200)
    one = Replay(1)
    one.add(a)
    one.add(b)
    _same(one.samples(), b)
    assert len(one.pack()) == 1
    none = Replay(0)
    none.add(a)
    assert none.samples() == [] and none.pack() == []


def test_augmented_passes_relabel_months_and_still_fit(make_net):
    samples = _samples(make_net, 300)
    seen = []
    learner = PolicyLearner(make_net(0), lr=3e-3, algorithm=RolloutPolicyIteration("logit_mse"), augment=True)
    original = learner.loss
    learner.loss = lambda batch: seen.append(batch[0]) or original(batch)
    with torch.no_grad():
        before = float(original(collate(samples)))
    torch.manual_seed(0)
    fit_pass(learner, SampleBuffer(samples), 64, seed=0, epochs=3)
    plain = collate(samples)[0]
    assert any(not torch.equal(x, plain[:len(x)]) for x in seen)  # some batch had months relabelled
    with torch.no_grad():
        assert float(original(collate(samples))) < before


@pytest.mark.slow
def test_replay_feeds_later_loops_and_phase_2_and_resumes(project, params, monkeypatch):
    """Loop 2 fits loop 1's samples too, phase 2 starts with phase 1's, and a resumed run (the replay
    read back from ``state.pt``) ends with the weights of an uninterrupted one."""
    from pipeline.rl import training

    params["rl"].update(algorithm="rollout_pi", epochs=1, replay=1, augment=True, games_per_loop=6)
    params["rl"]["branch"].update(decisions=["koikoi"], samples=2, loss="logit_mse")
    original, sizes, calls = training.fit_pass, [], []

    def fit(learner, buffer, *a, **k):
        sizes.append(len(buffer))
        calls.append(1)
        if len(calls) == kill_at:
            raise KeyboardInterrupt
        return original(learner, buffer, *a, **k)

    monkeypatch.setattr(training, "fit_pass", fit)
    kill_at = 0

    def stage(phase: int):
        return rl_stage(phase, "point", parse_params(params), PhasePaths.layout(phase, "point"),
                        progress=False, mlflow=False)

    stage(1)
    w_straight = torch.load(project / "models/rl_phase1/point/model.pt")
    kept = torch.load(project / "checkpoints/rl_phase1/point/state.pt", weights_only=True)["replay"]
    n_kept = len(Replay(1, kept))  # the one loop's blob, unpacked
    assert len(kept) == 1 and len(sizes) == 2 and sizes[1] == sizes[0] + n_kept > sizes[0] > 0
    stage(2)
    assert len(sizes) == 3 and sizes[2] > n_kept  # phase 1's last loop rides along

    (project / "checkpoints/rl_phase1/point/state.pt").unlink()
    calls.clear()
    kill_at = 2  # during loop 2's fit: loop 1's samples must come back from state.pt
    with pytest.raises(KeyboardInterrupt):
        stage(1)
    kill_at = 0
    stage(1)
    for k, v in torch.load(project / "models/rl_phase1/point/model.pt").items():
        torch.testing.assert_close(v, w_straight[k])


def test_replay_keeps_encodings_of_its_loops_but_not_in_the_checkpoint(make_net):
    from pipeline.rl.batches import EncodedSamples

    a, b = _samples(make_net, 0), _samples(make_net, 100)
    replay = Replay(2)
    replay.add(a)
    replay.add(b, EncodedSamples(b))
    assert replay.encoded() == []  # the oldest loop lacks them: a buffer's head is the leading loops only
    replay.add(a, EncodedSamples(a))
    assert [len(e) for e in replay.encoded()] == [len(b), len(a)]
    assert Replay(2, replay.pack()).encoded() == []  # a resumed run encodes again
    with pytest.raises(ValueError, match="encoded samples for"):
        replay.add(a, EncodedSamples(b[:3]))
