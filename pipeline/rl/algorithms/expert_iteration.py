"""``rl.algorithm: expert_it`` (phase 2's default): iterated expert iteration over the all-decision search.

A share of the learner's recorded decisions is searched by a ``SearchPlayer`` over the learner's network, and the
game plays the search's choice. The target is logits: the network's log-prior, each candidate tilted by its
searched gain / ``rl.expert.temperature``, fitted with ``logit_mse`` (linear in the gains, so the noise of many
few-deal searches averages out). After each fit the rollout policy is distilled afresh from the fitted network.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ...agents.base import PlayerSpec
from ...agents.model_agent import NetPlayer
from ...distill.fit import fit_rollout, judge_net
from ...distill.teacher_games import label_positions
from ...engine import DECISION_NAMES
from ...net.inference import FP32, Inference
from ...net.model import KoiKoiNet
from ...params import RLParams, RolloutParams
from ...params.rl import Expert
from ...rollout.network import RolloutConfig, save_rollout
from ...rollout.rollout_player import RolloutSpec, load_rollout
from ...search.player import SearchSpec
from ...search.spec import SELF, SearchOptions
from ...selfplay.batched import PlayResult, Sample, Step
from ...selfplay.playout import Pending, log_prior
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel
from .base import Algorithm, TargetRecorder, centred_logit_mse

PLAYOUTS = "rollout"  # the final rollout policy's directory inside the phase's model directory


@dataclass(frozen=True)
class SearchRecorder(TargetRecorder):
    """A step's picked decisions searched together by the job's player ``searcher`` (over player 0, whose seats play
    the search's choice); each keeps a ``Pending`` of the searched gains over the network's log-prior."""

    searcher: int = 1

    def record(self, step: Step) -> None:
        picked = self.picked(step)
        if not picked:
            return
        searcher, observations = step.players[self.searcher], [step.obs[i] for i in picked]
        scores = searcher.model.values(observations)
        choices, kept = [int(s.argmax()) for s in scores], [None] * len(picked)
        rows = [r for r, o in enumerate(observations) if searcher.searches(o, scores[r])]
        if rows:
            t0 = time.perf_counter()
            choice, gains = searcher.improve([observations[r] for r in rows], scores[rows])
            searcher.search_seconds += time.perf_counter() - t0
            searcher.searched += len(rows)
            searcher.changed += int((choice.argmax(axis=1) != scores[rows].argmax(axis=1)).sum())
            for r, c, g in zip(rows, choice, gains):
                legal = np.flatnonzero(np.isfinite(c)).tolist()
                kept[r] = Pending(legal, log_prior(scores[r])[legal])
                kept[r].rewards = np.nan_to_num(g[legal], nan=0.0).astype(np.float64).tolist()
                choices[r] = int(c.argmax())
        for i, a, p in zip(picked, choices, kept):
            if step.player == 0:
                step.actions[i] = a
            step.keep(i, p)


@dataclass
class ExpertIteration(Algorithm):
    expert: Expert  # the rl.expert section
    seed: int = 0  # rl.seed: the searches' deals are seeded from it, the loop and the observation
    distill: RolloutParams | None = None  # the rollout section: how the rollout policy is distilled again each loop
    playouts: RolloutSpec | None = field(default=None, repr=False)  # the current rollout policy (None: not loaded yet)
    distilled: bool = False  # whether ``playouts`` was distilled from the learner (after a loop), not rl.expert.rollout

    @classmethod
    def from_params(cls, p: RLParams, distill: RolloutParams | None = None) -> ExpertIteration:
        return cls(p.expert, p.seed, distill)

    def options(self) -> SearchOptions:
        e = self.expert
        return SearchOptions(deals=e.deals, k=e.k, z=e.z, gap=e.gap, rollout=e.rollout,
                             decisions=tuple(DECISION_NAMES.index(d) for d in e.decisions))

    def rollout_policy(self) -> RolloutSpec | None:
        """The rollout policy this loop's searches play out with: the last one distilled, else ``rl.expert.rollout``'s
        (None: ``self``, the searched network plays its own playouts)."""
        if self.playouts is None and self.expert.rollout != SELF:
            self.playouts = load_rollout(self.expert.rollout)
        return self.playouts

    def recorder(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                 seed: int = 0) -> tuple[tuple[PlayerSpec, ...], SearchRecorder]:
        """The searcher over the learner (``players[0]``) rides along unseated."""
        if reward is None:
            raise ValueError("expert_it searches: its play job needs the reward model")
        searcher = SearchSpec("searcher", players[0].with_epsilon(0.0), reward, self.options(), seed,
                              rollout=self.rollout_policy())
        e = self.expert
        return (*players, searcher), SearchRecorder(e.fraction, getattr(e.temperature, variant),
                                                    tuple(DECISION_NAMES.index(d) for d in e.decisions), "logit_mse",
                                                    searcher=len(players))

    def fitted(self, result: PlayResult) -> list[Sample]:
        """The searched decisions: one the search had nothing to weigh (one candidate) has no target."""
        return [s for s in result.samples if s.target is not None]

    def after_fit(self, net: nn.Module, result: PlayResult, seed: int, inference: Inference = FP32) -> dict[str, float]:
        """Distil the rollout policy afresh from the fitted ``net`` on the loop's recorded positions (the last
        tenth of its games validate); returns the fit's validation figures."""
        if self.distill is None or self.rollout_policy() is None:
            return {}
        d = self.distill
        # the labels in the players' arithmetic, uncompiled: one pass over the loop's positions repays no compile
        player = NetPlayer(net.eval(), inference=Inference(inference.setup.removeprefix("compile-")))
        games = [i for i, t in enumerate(result.trajectories) for _ in t]
        observations = [s.obs for t in result.trajectories for s in t]
        positions = label_positions(observations, player.values(observations), games)
        val = positions.game >= len(result.trajectories) - max(1, len(result.trajectories) // 10)
        student = fit_rollout(positions.subset(~val), positions.subset(val), RolloutConfig(hidden=d.hidden,
                              layers=d.layers), epochs=d.epochs, lr=d.lr, batch_size=d.batch_size, seed=seed)
        self.playouts, self.distilled = RolloutSpec.from_net(student, "rollout"), True
        judged = judge_net(student, positions.subset(val))
        return {"rollout/agreement": judged["agreement"], "rollout/kl": judged["kl"]}

    def state(self) -> dict:
        """What a checkpoint keeps: the rollout policy last distilled, its config and weights."""
        if not self.distilled:
            return {}
        return {"config": self.playouts.config, "weights": self.playouts.weights}

    def load_state(self, state: dict) -> None:
        if state:
            self.playouts, self.distilled = RolloutSpec("rollout", state["config"], state["weights"]), True

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if len(batch) == 4:
            raise ValueError("expert_it fits searched targets only: a sample without one reached its loss")
        x, d = batch[:2]
        return centred_logit_mse(net(x, d).float(), *batch[4:])

    def save(self, net: nn.Module, sl: KoiKoiNet, out_dir, meta: dict, variant: str) -> None:
        """The network, and beside it (``<out_dir>/rollout``) the rollout policy its expert ended with: a search of
        the model plays out with it, a network's own playouts being far too slow."""
        super().save(net, sl, out_dir, meta, variant)
        if (policy := self.rollout_policy()) is not None:
            teacher = str(out_dir) if self.distilled else self.expert.rollout
            save_rollout(policy.build(), out_dir / PLAYOUTS, {"teacher": teacher})

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        e = p.expert
        return {d: "mean squared error of the centred logits to log-prior + searched gain / temperature, in logits^2"
                if d in e.decisions else "not fitted (no searched decision of this type)" for d in DECISION_NAMES}
