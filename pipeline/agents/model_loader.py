"""A model directory as an agent: its weights read once (``modelio.load_model``), the agent playing that one
network, and its player spec (what duels ship to their workers) made from it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..engine import DECISION_NAMES
from ..net.inference import resolve_inference
from ..net.model import KoiKoiNet
from ..net.modelio import load_model, load_value
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from ..value.lookahead import LookaheadSpec
from ..value.winprob import WinProbTable
from .model_agent import ModelAgent


def load_model_agent(directory: str | Path, name: str, seed: int = 0, inference: str = "auto") -> ModelAgent:
    """The greedy agent of the model in ``directory``, named ``name``; raises as ``load_model`` does."""
    net, meta = load_model(directory)
    spec = player_spec(net, meta, directory, name)
    # a plain network plays itself; a model of several networks plays what its spec builds
    player = None if isinstance(spec, NetSpec) else spec.player(resolve_inference(inference, "cpu"), "cpu")
    agent = ModelAgent(net, name=name, seed=seed, inference=inference, spec=spec, player=player)
    agent.meta = meta  # kind (sl/rl) etc., for reports
    return agent


def player_spec(net: KoiKoiNet, meta: dict, directory: str | Path,
                name: str) -> NetSpec | LookaheadSpec:
    """A loaded model (``net``, ``meta`` of ``directory``) as a self-play player: its network, looking ahead with
    its value where it has one, played at some decision types only where it has a network for the others
    (``selfplay.split``)."""
    spec = NetSpec.from_net(net, name)
    value = load_value(directory)
    if value is None:
        return spec
    la = meta.get("lookahead")
    if not isinstance(la, dict):
        raise ValueError(f"{Path(directory) / 'config.json'}: a value network without its meta 'lookahead'")
    try:
        table = WinProbTable.from_dict(la["table"]) if la["table"] is not None else None
        reward = RewardModel(la["reward"], la["scale"], table, la["baseline"])
        decisions = tuple(DECISION_NAMES.index(d) for d in la["decisions"])
        return replace(LookaheadSpec.from_nets(name, spec, value, reward, float(la["temperature"]),
                                               float(la["prior_weight"])), decisions=decisions)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{Path(directory) / 'config.json'}: bad meta 'lookahead' ({e})") from None
