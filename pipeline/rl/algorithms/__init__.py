"""The RL algorithms, one module each, behind one interface (``base.Algorithm``). A new algorithm is a module
here, its name in ``params.rl.ALGORITHMS`` (with any params section of its own) and its line in ``ALGORITHMS``."""

from __future__ import annotations

from ...params import RLParams
from .base import Algorithm
from .mc_dqn import MonteCarloDQN
from .rollout_pi import RolloutPolicyIteration

ALGORITHMS = {  # rl.algorithm -> its class (``from_params(rl) -> Algorithm``)
    "mc_dqn": MonteCarloDQN,
    "rollout_pi": RolloutPolicyIteration,
}


def algorithm_for(p: RLParams) -> Algorithm:
    """The algorithm ``rl.algorithm`` names, configured by the ``rl`` section."""
    return ALGORITHMS[p.algorithm].from_params(p)
