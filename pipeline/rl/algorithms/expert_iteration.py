"""``rl.algorithm: expert_it`` (phase 2's default), expert iteration over the all-decision search: at a share of
the learner's recorded decisions (``rl.expert.fraction`` of those of the types in ``rl.expert.decisions``) the
game asks the search (``search.player.SearchPlayer`` over the learner's current network) for its choice, plays
it, and records the observation with the search's improved policy; the network is fitted to those policies.

The target of a searched decision is ``softmax(policy)``, ``policy`` being ``SearchPlayer.improve``'s logits:
each candidate's anchored score (log prior + paired gain / (z SE)), every other legal action its log-prior (as
Gumbel MuZero trains toward softmax(logits + sigma(completed Q))). The loss of a mini-batch is the cross-entropy
of the network's softmax over the legal actions to that target, plus ``rl.expert.anchor_weight`` times
KL(anchor || network) on the same observations, the anchor being the network the loop started from
(``anchor: start``) or SL (``sl``): the noise of a few hundred searched targets cannot pull the network far
from where the search started. The next loop searches over the fitted network.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch
from torch import nn

from ...agents.base import PlayerSpec
from ...engine import DECISION_NAMES
from ...net.model import KoiKoiNet
from ...params import RLParams
from ...params.rl import Expert
from ...search.player import SearchSpec
from ...search.spec import SELF, SearchOptions
from ...selfplay.branches import BranchSpec
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel
from .base import PolicyAlgorithm


def rollout_player(path: str) -> PlayerSpec | None:
    """The rollout policy of ``rl.expert.rollout`` (None: the searched network plays its own playouts)."""
    if path == SELF:
        return None
    from ...search.agent import rollout_spec  # the rollout policy's loader: only where one is named

    try:
        return rollout_spec("rl.expert.rollout", path)
    except ImportError as e:
        raise ValueError(f"params.yaml: rl.expert.rollout={path!r} needs a rollout policy loader "
                         f"(pipeline.net.rollout): {e}") from None


def anchored_loss(out: torch.Tensor, target: torch.Tensor, legal: torch.Tensor, anchor: torch.Tensor | None,
                  weight: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(loss, cross-entropy, KL)`` per batch: the cross-entropy of softmax(``out``) over the ``legal`` tokens to
    ``target`` (a distribution), plus ``weight`` times KL(softmax(``anchor``) || softmax(``out``)) (0 without one)."""
    logp = torch.log_softmax(out.masked_fill(~legal, float("-inf")), dim=1).masked_fill(~legal, 0.0)
    ce = -(target * logp).sum(1).mean()
    if anchor is None or weight == 0.0:
        return ce, ce, torch.zeros_like(ce)
    logq = torch.log_softmax(anchor.masked_fill(~legal, float("-inf")), dim=1).masked_fill(~legal, 0.0)
    kl = (logq.exp() * (logq - logp)).sum(1).mean()
    return ce + weight * kl, ce, kl


@dataclass
class ExpertIteration(PolicyAlgorithm):
    expert: Expert  # the rl.expert section
    seed: int = 0  # rl.seed: the searches' deals are seeded from it, the loop and the observation
    anchor_net: nn.Module | None = field(default=None, repr=False)  # frozen: the loop's start, or SL
    _sums: list[torch.Tensor] = field(default_factory=list, repr=False)  # (cross-entropy, KL, batches) of a fit

    @classmethod
    def from_params(cls, p: RLParams) -> ExpertIteration:
        return cls(p.expert, p.seed)

    def options(self) -> SearchOptions:
        e = self.expert
        return SearchOptions(deals=e.deals, k=e.k, z=e.z, gap=e.gap, rollout=e.rollout,
                             decisions=tuple(DECISION_NAMES.index(d) for d in e.decisions))

    def branch_spec(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                    seed: int = 0) -> tuple[tuple[NetSpec, ...], BranchSpec | None]:
        """The searcher over the learner (``players[0]``) rides along unseated; the decisions it searches are the
        ones ``BranchSpec`` picks (``search``: its index)."""
        if reward is None:
            raise ValueError("expert_it searches: its play job needs the reward model")
        searcher = SearchSpec("searcher", players[0].with_epsilon(0.0), reward, self.options(), seed,
                              rollout=rollout_player(self.expert.rollout))
        e = self.expert
        return (*players, searcher), BranchSpec(e.fraction, 1.0, tuple(DECISION_NAMES.index(d) for d in e.decisions),
                                                loss="cross_entropy", search=len(players))

    def start_loop(self, net: nn.Module, sl: KoiKoiNet) -> None:
        """Freeze this loop's anchor: a copy of the network the loop starts from, or SL."""
        anchor = copy.deepcopy(net if self.expert.anchor == "start" else sl).eval()
        for w in anchor.parameters():
            w.requires_grad_(False)
        self.anchor_net = anchor
        self._sums = []

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if len(batch) == 4:
            raise ValueError("expert_it fits searched targets only: a sample without one reached its loss")
        x, d = batch[:2]
        target, legal = batch[4:]
        out = net(x, d).float()
        anchor = None
        if self.anchor_net is not None and self.expert.anchor_weight > 0.0:
            if next(self.anchor_net.parameters()).device != x.device:  # a GPU learner: the anchor follows once
                self.anchor_net = self.anchor_net.to(x.device)
            with torch.no_grad():
                anchor = self.anchor_net(x, d).float()
        loss, ce, kl = anchored_loss(out, target, legal, anchor, self.expert.anchor_weight)
        parts = torch.stack([ce.detach(), kl.detach(), torch.ones_like(ce)]).double()
        self._sums = [self._sums[0] + parts] if self._sums else [parts]  # summed on the device, read once
        return loss

    def fit_metrics(self) -> dict[str, float]:
        """The last fit's mean cross-entropy to the improved policies and KL to the anchor, in nats."""
        if not self._sums:
            return {}
        ce, kl, n = self._sums[0].tolist()
        return {"expert/cross_entropy": ce / n, "expert/kl_anchor": kl / n}

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        e = p.expert
        target = (f"nats: cross-entropy to the search's improved policy + {e.anchor_weight:g} x "
                  f"KL({e.anchor} network || network)")
        return {d: target if d in e.decisions else "not fitted (no searched decision of this type)"
                for d in DECISION_NAMES}
