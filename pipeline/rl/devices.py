"""Where an RL phase runs: the learner's device and precision, the players' device and inference setup, made
concrete for this machine from ``rl.learner_device``, ``rl.train_precision``, ``rl.selfplay.device`` and
``rl.selfplay.inference``.

The rule of ``auto`` (docs/scaling.md): the learner on the GPU where torch sees one; the players too, as long as
they run on this machine (process backend, or a private local Ray). A CPU worker plays at about the rate of its
pure forward passes (``koikoi bench selfplay``: ``decisions_vs_inference`` 0.78-1.04 on 2 cores), so they are most
of its time, which a GPU serves in a fraction of that while the games stay on the workers' cores. Except where the
players search with a rollout policy (``expert_it`` with ``rl.expert.rollout`` a model): their playouts are many
small forward passes of a small network, which one GPU shared by every worker serves far slower than the workers'
own cores (phase 2 of RL-WP on an H200 with 16 Xeon cores, 14 workers: 3.1 games/s with the players on the GPU,
11.8 on the CPUs; docs/rl-experiments.md#long-profile-gpu), so ``auto`` keeps those players on the CPUs. The learner and
the players take turns (play, then fit), so they never compete for the card. On a Ray cluster (``RAY_ADDRESS``
set), ``auto`` keeps the players on CPUs: a GPU share per task would leave the CPU-only nodes idle. ``cuda`` asks
for the GPU there anyway.

``execution_key`` is what of this changes the games or the weights, for the checkpoint's fingerprint: the
resolved devices and precisions, and on CUDA, whose kernels (and so the last bits of an output) vary with the
batch size, how the games are split over workers and batched (``rl.selfplay.workers``, ``concurrency``) and
which GPU plays. On the CPU, batched play equals one-by-one play (tests/selfplay/test_selfplay.py), so the split is
free to change between a run and its resumption there.
"""

from dataclasses import dataclass

from ..net.inference import Inference, resolve_inference
from ..params import RLParams
from ..runtime.hardware import Placement, device_name, play_device, resolve_device, resolve_precision
from ..search.spec import SELF


@dataclass(frozen=True)
class PhaseDevices:
    """The resolved devices of a phase; ``auto``: which of the learner's and the players' params said auto."""

    learner: str  # cpu | cuda
    train_precision: str  # Lightning's: 32-true | bf16-mixed | 16-mixed
    play: str  # cpu | cuda
    inference: Inference  # how the players run their forward passes
    auto: tuple[bool, bool] = (False, False)

    @property
    def accelerator(self) -> str:
        """The learner's Lightning accelerator."""
        return "gpu" if self.learner == "cuda" else "cpu"

    def placements(self) -> list[Placement]:
        return [Placement("learner", self.learner, self.train_precision, self.auto[0]),
                Placement("selfplay", self.play, self.inference.setup, self.auto[1])]


def searches_with_a_rollout_policy(p: RLParams, phase: int) -> bool:
    """Whether phase ``phase``'s players search with playouts of a rollout policy model (``expert_it``)."""
    return p.algorithm_of(phase) == "expert_it" and p.expert.rollout != SELF


def resolve_devices(p: RLParams, phase: int = 1) -> PhaseDevices:
    """``p``'s devices and precisions on this machine for phase ``phase``; a ``ValueError`` naming the param where one
    cannot run here."""
    learner = resolve_device(p.learner_device, "rl.learner_device")
    precision = resolve_precision(p.train_precision, "gpu" if learner == "cuda" else "cpu", "rl.train_precision")
    play = play_device(p.selfplay.device, "rl.selfplay.device", p.selfplay.backend)
    if p.selfplay.device == "auto" and searches_with_a_rollout_policy(p, phase):
        play = "cpu"  # a rollout policy's playouts: the workers' cores beat one shared GPU (the module doc)
    inference = resolve_inference(p.selfplay.inference, play, "rl.selfplay.inference")
    return PhaseDevices(learner, precision, play, inference, (p.learner_device == "auto", p.selfplay.device == "auto"))


def execution_key(devices: PhaseDevices, p: RLParams) -> dict:
    """What of how the phase runs here decides its games and weights (the module doc), for the fingerprint."""
    key: dict = {"learner": [devices.learner, devices.train_precision], "play": [devices.play, devices.inference.setup]}
    if devices.learner == "cuda":
        key["learner"].append(device_name("cuda"))
    if devices.play == "cuda":
        key["play"] += [device_name("cuda"), p.selfplay.workers, p.selfplay.concurrency]
    return key
