"""A split player: one network at some decision types, another at the rest.

``koikoi probe fit --decisions discard --save DIR`` fits a copy of SL on discards alone; the fit also moves the
trunk that picks and koi-koi calls read, so a fair duel of what it learned plays it at discards only and SL
elsewhere. A model directory says so with ``elsewhere.pt`` (the network played elsewhere) and its meta
"split" (the decision types ``model.pt`` plays); ``agents.model_loader`` loads it as a ``SplitSpec``, so
duels, evaluations and the play server use it as they use any model. ``combine`` (``koikoi split``) writes one
from two model directories: a discard fit beside an RL model's koi-koi calls, say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..agents.model_agent import NetGroup, NetPlayer
from ..engine import DECISION_NAMES, Observation
from ..net.encoding import NUM_TOKENS, decisions, encode, legal_masks
from ..net.inference import Inference
from ..net.model_dir import MODEL_FILE
from ..net.modelio import extra_networks, load_model, save_model
from ..runtime.fingerprints import file_fingerprint
from .policies import NetSpec


class SplitPlayer(NetGroup):
    """``values(observations) -> (B, 50)``: ``at``'s values at the decision types ``decisions``, ``elsewhere``'s
    at the others (``NetPlayer.values``' shape); one encoding feeds both."""


    def __init__(self, at: NetPlayer, elsewhere: NetPlayer, decisions: tuple[int, ...], epsilon: float = 0.0) -> None:
        self.at, self.elsewhere = at, elsewhere
        self.decisions = decisions
        self.epsilon = epsilon

    def _nets(self) -> tuple[NetPlayer, NetPlayer]:
        return self.at, self.elsewhere

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        x, d, legal = encode(observations), decisions(observations), legal_masks(observations)
        out = np.full((len(observations), NUM_TOKENS), -np.inf, dtype=np.float32)
        mine = np.isin(d, self.decisions)
        for rows, player in ((mine, self.at), (~mine, self.elsewhere)):
            if rows.any():
                out[rows] = player.encoded_values(x[rows], d[rows], legal[rows])
        return out


@dataclass(frozen=True)
class SplitSpec:
    """A split player as sent to a worker: the network played at ``decisions`` (indices into ``DECISION_NAMES``)
    and the one played elsewhere."""

    name: str
    at: NetSpec
    elsewhere: NetSpec
    decisions: tuple[int, ...]
    epsilon: float = 0.0

    def with_epsilon(self, epsilon: float) -> SplitSpec:
        return replace(self, epsilon=float(epsilon))

    def with_inference(self, inference: Inference) -> SplitSpec:
        return replace(self, at=self.at.with_inference(inference), elsewhere=self.elsewhere.with_inference(inference))

    def player(self, inference: Inference, device: str) -> SplitPlayer:
        return SplitPlayer(self.at.player(inference, device), self.elsewhere.player(inference, device),
                           self.decisions, self.epsilon)



def split_decisions(meta: dict, directory: str | Path) -> tuple[int, ...]:
    """A split model's meta "split": the decision types (indices into ``DECISION_NAMES``) ``model.pt`` plays;
    ``ValueError`` naming the directory's config where it is malformed."""
    try:
        return tuple(DECISION_NAMES.index(d) for d in meta["split"]["decisions"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{Path(directory) / 'config.json'}: bad meta 'split' ({e!r})") from None


def combine(at: str | Path, elsewhere: str | Path, decisions: Sequence[str], out: str | Path) -> Path:
    """Save at ``out`` a split model that plays ``at``'s network at ``decisions`` (names in ``DECISION_NAMES``) and
    ``elsewhere``'s at the other decision types; returns ``out``.

    A split model may be ``at`` where its own decision types hold ``decisions`` (its ``model.pt`` is what it plays
    there); otherwise each directory must be one network, since a value, advantage or second network would be
    dropped. Raises ``FileNotFoundError``/``ValueError`` in one line naming the directory."""
    names = tuple(dict.fromkeys(decisions))
    if not names or len(names) == len(DECISION_NAMES) or any(n not in DECISION_NAMES for n in names):
        raise ValueError(f"decisions {list(decisions)}: name one or two of {', '.join(DECISION_NAMES)}")
    nets, sources = [], {}
    for role, directory in (("at", at), ("elsewhere", elsewhere)):
        net, meta = load_model(directory)
        extras = extra_networks(directory)
        if role == "at" and "elsewhere" in extras:
            own = split_decisions(meta, directory)
            if not {DECISION_NAMES.index(n) for n in names} <= set(own):
                raise ValueError(f"{directory}: a split model playing its own network at "
                                 f"{', '.join(DECISION_NAMES[d] for d in own)} only, not at {', '.join(names)}")
            extras = tuple(e for e in extras if e != "elsewhere")  # its model.pt is the network wanted
        if extras:
            what = {"value": "a value network", "advantage": "an advantage network", "elsewhere": "a second network"}
            raise ValueError(f"{directory}: plays {what[extras[0]]} beside its own, which a split model would drop; "
                             "pass a model directory of one network")
        nets.append(net)
        sources[role] = {"model": str(directory), "weights": file_fingerprint(Path(directory) / MODEL_FILE)}
    meta = {"kind": "split", "split": {"decisions": list(names)}, **sources}
    return save_model(nets[0], out, meta, elsewhere=nets[1])
