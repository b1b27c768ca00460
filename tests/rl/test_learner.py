import pytest
import torch

from pipeline.rl.algorithms.rollout_pi import RolloutPolicyIteration
from pipeline.rl.learner import PolicyLearner, SampleBuffer, TypedBatchSampler, collate, fit_pass
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel


def _samples(tiny_net, n_games: int = 3):
    spec = NetSpec.from_net(tiny_net(0), "a", 0.2)
    job = PlayJob(players=(spec,), games=tuple(GameSpec(i, (0, 0), (True, True)) for i in range(n_games)),
                  reward=RewardModel("point"), num_rounds=2)
    return play_job(job).samples


def test_learner_steps_decrease_the_loss_on_a_fixed_batch(make_net):
    tiny_net = make_net
    torch.manual_seed(0)
    buffer = SampleBuffer(_samples(tiny_net))
    batch = collate([buffer[i] for i in buffer.by_type[0][:64]])
    learner = PolicyLearner(tiny_net(0), lr=1e-3, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False)
    opt = learner.configure_optimizers()
    learner.net.train()
    before = float(learner.loss(batch))
    for _ in range(50):
        opt.zero_grad()
        learner.loss(batch).backward()
        opt.step()
    assert float(learner.loss(batch)) < 0.6 * before


def test_batches_hold_one_decision_type_and_cover_the_buffer(make_net):
    buffer = SampleBuffer(_samples(make_net))
    counts = buffer.counts()
    assert counts["discard"] > 0 and sum(counts.values()) == len(buffer)
    sampler = TypedBatchSampler(buffer, batch_size=16, seed=3)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    assert sorted(i for b in batches for i in b) == list(range(len(buffer)))
    for b in batches:
        assert len({buffer[i].obs.decision for i in b}) == 1 and len(b) <= 16
    assert batches == list(TypedBatchSampler(buffer, 16, seed=3))  # seeded


def test_a_lightning_pass_trains_and_keeps_the_optimizer(make_net, tmp_path, monkeypatch):
    tiny_net = make_net
    monkeypatch.chdir(tmp_path)
    buffer = SampleBuffer(_samples(tiny_net))
    learner = PolicyLearner(tiny_net(0), lr=1e-3, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False)
    w0 = [p.detach().clone() for p in learner.net.parameters()]
    losses = fit_pass(learner, buffer, batch_size=32, seed=0)
    assert "loss/discard" in losses and losses["loss/discard"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(w0, learner.net.parameters()))
    opt = learner.optimizer
    step = max(float(s["step"]) for s in opt.state.values())  # float: Adam updates the step tensors in place
    fit_pass(learner, buffer, batch_size=32, seed=1)
    assert learner.optimizer is opt and max(float(s["step"]) for s in opt.state.values()) > step  # Adam state kept


def _branch_samples(make_net, loss: str):
    from pipeline.rl.algorithms.rollout_pi import BranchRecorder

    spec = NetSpec.from_net(make_net(0), "a")
    job = PlayJob(players=(spec,), games=tuple(GameSpec(i, (0, 0), (True, True)) for i in range(2)),
                  reward=RewardModel("point"), num_rounds=1, recorder=BranchRecorder(1.0, 1.0, loss=loss))
    return play_job(job).samples


@pytest.mark.parametrize("kind", ["mc", "cross_entropy", "logit_mse"])
def test_the_loaders_packed_batches_unpack_to_collates(make_net, kind):
    # a pass's batches are encoded once and travel packed; on the device they are exactly collate's tensors
    samples = _samples(make_net) if kind == "mc" else _branch_samples(make_net, kind)
    buffer = SampleBuffer(samples)
    learner = PolicyLearner(make_net(0), lr=1e-4, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False)
    batches = list(TypedBatchSampler(buffer, 16, seed=0))
    assert len(batches) > 2
    for idx in batches:
        packed = buffer.__getitems__(idx)
        assert packed[0].dtype == torch.uint8 and packed[0].nbytes * 20 < packed[1].shape[0] * 270 * 50 * 4
        got, want = learner.on_after_batch_transfer(packed, 0), collate([buffer[i] for i in idx])
        assert len(got) == len(want) == (4 if kind == "mc" else 6)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and torch.equal(a, b)


def test_a_pass_encodes_each_sample_once(make_net, monkeypatch):
    from pipeline.rl import batches

    encoded = []
    real = batches.encode
    monkeypatch.setattr(batches, "encode", lambda obs: encoded.append(len(obs)) or real(obs))
    buffer = SampleBuffer(_samples(make_net))
    learner = PolicyLearner(make_net(0), lr=1e-3, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False)
    losses = fit_pass(learner, buffer, batch_size=16, seed=0, epochs=3)
    assert sum(encoded) == len(buffer) and set(losses) == {f"loss/{k}" for k, n in buffer.counts().items() if n}
    buffer.extend(_samples(make_net, 1))  # a buffer that grows is encoded anew
    fit_pass(PolicyLearner(make_net(0), lr=1e-3, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False),
             buffer, batch_size=16, seed=0)
    assert sum(encoded) == 2 * len(buffer) - len(_samples(make_net, 1))


def test_a_replayed_loops_encoding_is_reused_and_gives_the_same_batches(make_net, monkeypatch):
    # the replay keeps each loop's encoded features: a later buffer encodes only its new samples, and its
    # batches are those of a buffer that encodes everything (mixed: branch targets, then samples without)
    from pipeline.rl import batches
    from pipeline.rl.batches import EncodedSamples

    old, new = _branch_samples(make_net, "logit_mse"), _samples(make_net)
    encoded = []
    real = batches.encode
    monkeypatch.setattr(batches, "encode", lambda obs: encoded.append(len(obs)) or real(obs))
    kept = SampleBuffer(old).encode().since(0)
    encoded.clear()
    reused, fresh = SampleBuffer([*old, *new], [kept]), SampleBuffer([*old, *new])
    reused.encode()
    assert sum(encoded) == len(new)
    for idx in TypedBatchSampler(fresh, 16, seed=0):
        for a, b in zip(reused.__getitems__(idx), fresh.__getitems__(idx), strict=True):
            assert a.dtype == b.dtype and torch.equal(a, b)
    tail = fresh.encode().since(len(old))  # the new loop's part, as the training loop keeps it
    assert tail.target is None and torch.equal(tail.bits, EncodedSamples(new).bits)
    with pytest.raises(ValueError, match="more encoded samples"):
        SampleBuffer(new[:1], [kept])
