"""Phase 2's pool of past snapshots, the opponents of its games that are not self-play.

- It opens with phase 1's model (snapshot 0) and, with ``rl.phase2.pool_start``, the network phase 1 started
  from (``START``: SL under ``init: sl``), so that a first loop's pool games already meet another network.
- Every ``snapshot_every`` loops the fitted learner joins it; the oldest leave beyond ``pool_size``.
- Only snapshots whose weights differ from the learner's are played (the freshest one is the learner itself until
  the learner fits again): a pool game is never the network against itself.
- Before a snapshot is first played it duels the learner on ``gate_games`` duplicate games; it stays only if it
  held its own (its interval reaches 0.5): a snapshot the learner has plainly outgrown teaches nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .evaluation import Evaluation
from .phase_state import LoopCounters, PhaseConfig, load_snapshot, save_snapshot

START = -1  # the snapshot id of the network phase 1 started from


def snapshot_name(loop: int) -> str:
    """A snapshot's player name: ``snapshot-<loop>``, ``snapshot-start`` for the network phase 1 started from."""
    return "snapshot-start" if loop == START else f"snapshot-{loop}"


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def held_its_own(ev: Evaluation) -> bool:
    """Whether a snapshot (A) was not shown weaker than the learner: its 95% interval reaches 0.5."""
    return ev.ci95[1] >= 0.5


class SnapshotPool:
    """The pool kept in ``state.snapshots`` (ids: the loop after which each was taken; files in the checkpoint
    directory) and ``state.gated`` (those that passed their duel); ``dropped``: ids whose files may go once a
    checkpoint no longer lists them."""

    def __init__(self, cfg: PhaseConfig, state: LoopCounters, dropped: list[int]) -> None:
        self.cfg, self.state, self.dropped = cfg, state, dropped
        self.p = cfg.params.phase2

    def open(self, model: nn.Module, start: nn.Module | None) -> None:
        """The phase's first pool: phase 1's ``model`` and, if asked and different, the network it ``start``-ed from."""
        if self.p.pool_start and start is not None and not same_weights(start, model):
            save_snapshot(self.cfg, start, START)
            self.state.snapshots.append(START)
        self.add(model, 0)

    def add(self, net: nn.Module, loop: int) -> None:
        save_snapshot(self.cfg, net, loop)
        self.state.snapshots.append(loop)
        while len(self.state.snapshots) > self.p.pool_size:
            self._drop(self.state.snapshots[0])

    def _drop(self, loop: int) -> None:
        self.state.snapshots.remove(loop)
        if loop in self.state.gated:
            self.state.gated.remove(loop)
        self.dropped.append(loop)

    def opponents(self, learner: nn.Module,
                  duel: Callable[[nn.Module, int], Evaluation]) -> list[tuple[int, nn.Module]]:
        """The snapshots to play this loop, oldest first: those that differ from ``learner``, each duelled once
        (``duel(snapshot, id)``: the snapshot as A against the learner) before it is first played, and kept only
        if it held its own. Returns (id, network) pairs."""
        out = []
        for loop in list(self.state.snapshots):
            net = load_snapshot(self.cfg, learner, loop)
            if same_weights(net, learner):
                continue
            if loop not in self.state.gated:
                if self.p.gate_games and not held_its_own(duel(net, loop)):
                    self._drop(loop)
                    continue
                self.state.gated.append(loop)
            out.append((loop, net))
        return out
