"""The RL algorithms, one module each, behind one interface (``base.Algorithm``). A new algorithm is a module
here, its name in ``params.rl.ALGORITHMS`` (with any params section of its own) and its line in ``ALGORITHMS``."""

from ...params import RLParams, RolloutParams
from .base import Algorithm
from .expert_iteration import ExpertIteration
from .mc_dqn import MonteCarloDQN
from .rollout_pi import RolloutPolicyIteration

ALGORITHMS = {  # rl.algorithm -> its class (``from_params(rl) -> Algorithm``)
    "mc_dqn": MonteCarloDQN,
    "rollout_pi": RolloutPolicyIteration,
    "expert_it": ExpertIteration,
}


def algorithm_for(p: RLParams, phase: int = 1, distill: RolloutParams | None = None) -> Algorithm:
    """The algorithm phase ``phase`` trains with (``rl.algorithm``, ``rl.phase2.algorithm``), configured by the ``rl``
    section (and expert_it by ``distill``, the rollout section: how it distils its rollout policy again)."""
    name = p.algorithm_of(phase)
    return ExpertIteration.from_params(p, distill) if name == "expert_it" else ALGORITHMS[name].from_params(p)
