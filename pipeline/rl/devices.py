"""Where an RL phase runs: the learner's and the players' devices, precision and inference (docs/scaling.md).

``auto`` keeps players that search with a rollout policy on the CPUs: their many small playout passes run far
slower on one shared GPU. ``execution_key``: what of this changes the games or weights, for the fingerprint (on
CUDA the kernels vary with the batch size, so the split over workers counts too).
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
