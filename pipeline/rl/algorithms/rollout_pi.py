"""``rl.algorithm: rollout_pi``, rollout policy iteration: at a share of the decisions of the types in
``rl.branch.decisions`` the game branches into playouts of every legal action, and the network is fitted to the
prior (``rl.branch.prior``: SL's outputs, the player's own, or none) tilted by each action's mean round reward,
with ``cross_entropy`` or ``logit_mse`` (``rl.branch.loss``). Decisions that did not branch keep the Monte-Carlo loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...engine import DECISION_NAMES
from ...net.model import KoiKoiNet
from ...params import RLParams
from ...params.rl import Branch
from ...selfplay.batched import Step
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel
from .base import Algorithm, TargetRecorder, centred_logit_mse, taken_action_mse


@dataclass(frozen=True)
class BranchRecorder(TargetRecorder):
    """Each picked decision branches into playouts of every legal action on ``samples`` deals; the target tilts the
    outputs of player ``anchor`` (None: the recording player's), or none (``flat``)."""

    anchor: int | None = None
    samples: int = 1  # deals per branched action: the true one, then samples - 1 with the hidden cards dealt again
    flat: bool = False

    def record(self, step: Step) -> None:
        picked = self.picked(step)
        prior = step.values[picked]
        if picked and self.anchor is not None:  # the targets tilt the anchor's outputs, not the player's
            prior = step.players[self.anchor].values([step.obs[i] for i in picked])
        for i, q in zip(picked, prior):
            step.keep(i, step.branch(i, None if self.flat else q, self.samples))


@dataclass(frozen=True)
class RolloutPolicyIteration(Algorithm):
    branch_loss: str  # rl.branch.loss
    branch: Branch | None = None  # the rl.branch section: what branches (None: a learner that only fits)

    @classmethod
    def from_params(cls, p: RLParams) -> RolloutPolicyIteration:
        return cls(p.branch.loss, p.branch)

    def recorder(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                 seed: int = 0) -> tuple[tuple[NetSpec, ...], BranchRecorder]:
        r = self.branch
        anchor = None
        if r.prior == "sl":  # the SL net rides along unseated in phase 2
            if sl not in players:
                players = (*players, sl)
            anchor = players.index(sl)
        return players, BranchRecorder(r.fraction, getattr(r.temperature, variant),
                                       tuple(DECISION_NAMES.index(d) for d in r.decisions), r.loss, anchor=anchor,
                                       samples=r.samples, flat=r.prior == "none")

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
