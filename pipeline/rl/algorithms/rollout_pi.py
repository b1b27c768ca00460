"""``rl.algorithm: rollout_pi``, rollout policy iteration: at a share of the decisions of the types in
``rl.branch.decisions`` the game branches into one playout per legal action (``selfplay.branches``), and the
network is fitted to the branch targets those playouts give.

The loss, ``rl.branch.loss``: ``cross_entropy`` between the softmax of the outputs over the branched tokens and the
target distribution, or ``logit_mse``: the squared error between the outputs and the target logits, both centred
over the branched tokens. The SL outputs are classification logits, so either continues from them without
re-scaling them into values. The samples of decisions that did not branch carry no target (``learner.collate``
gives their batches four tensors): they keep the Monte-Carlo loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...engine import DECISION_NAMES
from ...net.model import KoiKoiNet
from ...params import RLParams
from ...params.rl import Branch
from ...selfplay.branches import BranchSpec
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel
from .base import PolicyAlgorithm, centred_logit_mse, taken_action_mse


@dataclass(frozen=True)
class RolloutPolicyIteration(PolicyAlgorithm):
    branch_loss: str  # rl.branch.loss
    branch: Branch | None = None  # the rl.branch section: what branches (None: a learner that only fits)

    @classmethod
    def from_params(cls, p: RLParams) -> RolloutPolicyIteration:
        return cls(p.branch.loss, p.branch)

    def branch_spec(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                    seed: int = 0) -> tuple[tuple[NetSpec, ...], BranchSpec | None]:
        r = self.branch
        anchor = None
        if r.prior == "sl":  # the SL net rides along unseated in phase 2
            if sl not in players:
                players = (*players, sl)
            anchor = players.index(sl)
        temperature = getattr(r.temperature, variant)
        return players, BranchSpec(r.fraction, temperature, tuple(DECISION_NAMES.index(d) for d in r.decisions),
                                   anchor=anchor, loss=r.loss, samples=r.samples, flat=r.prior == "none")

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if len(batch) == 4:  # a decision that did not branch: no target
            return taken_action_mse(net, batch)
        x, d = batch[:2]
        target, legal = batch[4:]
        out = net(x, d).float()
        if self.branch_loss == "logit_mse":
            return centred_logit_mse(out, target, legal)
        logp = torch.log_softmax(out.masked_fill(~legal, float("-inf")), dim=1)
        return -(target * logp.masked_fill(~legal, 0.0)).sum(1).mean()

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        branch = p.branch
        units = {}
        for d in DECISION_NAMES:
            if d in branch.decisions:
                target = ("cross-entropy in nats between the branch target policy and the network's softmax"
                          if branch.loss == "cross_entropy"
                          else "mean squared error of the centred logits, in logits^2")
                units[d] = (target if branch.fraction >= 1
                            else f"{target} where branched ({branch.fraction:g} of decisions), else {mse}")
            else:
                units[d] = mse
        return units
