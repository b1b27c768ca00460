"""What the page says about an opponent: its name (not a path), its duel rating, and what its hint values mean.

Ratings come from the duels stage's ``results/duels/ratings.json`` (Bradley-Terry, in Elo, with the anchor
agent at 0) when it exists. Hint values: every model plays the arg-max of its outputs, but what an output
*is* depends on how the model was trained (its ``config.json`` meta), so the page is told the unit:

- SL, and RL trained by rollout policy iteration (the default): the outputs are policy logits, so the
  hint shows their softmax over the legal moves: the model's probability of playing each move.
- RL trained by Monte-Carlo DQN (``mc_dqn``): the outputs are Q values, the expected round reward: points
  for RL-Point, or for RL-WP the win probability after the round, less ``wp_baseline``, times the
  variant's ``reward_scale`` (undone here with the project's params.yaml, so the page shows points or P(win)).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..agents.specs import key_name, model_of
from ..duel.duel_report import display_name
from ..duel.ratings_file import read_ratings
from ..params import ParamError, load_params


def agent_name(spec: str) -> str:
    """The name a person knows an agent by: ``models/rl/wp`` -> ``RL-WP``, ``heuristic`` -> ``Heuristic``."""
    return display_name(key_name(spec))


def ratings(root: Path) -> dict[str, Any]:
    """``{key: {"elo", "elo_lo", "elo_hi"}}`` and the anchor from the duels' ratings file; empty without one."""
    anchor, table = read_ratings(root)
    return {"anchor": None if anchor is None else display_name(anchor), "ratings": table}


def rating(spec: str, root: Path) -> dict[str, Any] | None:
    """The agent's Elo with its 95% interval and the anchor it is relative to, or None when it was not rated."""
    doc = ratings(root)
    r = doc["ratings"].get(key_name(spec))
    return None if r is None else {**r, "anchor": doc["anchor"]}


def _reward_scale(root: Path, variant: str) -> tuple[float, float] | None:
    """(reward_scale, baseline) of an RL variant from the project's params.yaml; None when it cannot be read."""
    try:
        rl = load_params(root / "params.yaml").rl
    except ParamError:
        return None
    return float(getattr(rl.reward_scale, variant)), float(rl.wp_baseline if variant == "wp" else 0.0)


def hint_units(meta: dict[str, Any] | None, name: str, root: Path) -> dict[str, Any] | None:
    """How the page turns a hint option into a number with a unit: ``unit`` is ``probability`` (read the
    option's ``probability``), ``points`` or ``win_probability`` (``value * scale + offset``), or ``q`` (the raw
    value, when params.yaml cannot be read to convert it); ``what`` says it in words. None for an agent
    without values (random, heuristic)."""
    if meta is None:
        return None
    if meta.get("kind") == "rl" and meta.get("algorithm") == "mc_dqn":
        variant = "wp" if meta.get("variant", meta.get("reward")) == "wp" else "point"
        scaled = _reward_scale(root, variant)
        if scaled is None:
            return {"unit": "q", "scale": 1.0, "offset": 0.0,
                    "what": f"{name}'s Q value of the move, in its training units ({root / 'params.yaml'} could not "
                            f"be read to turn it into {'a win probability' if variant == 'wp' else 'points'})"}
        scale, baseline = scaled
        if variant == "wp":
            return {"unit": "win_probability", "scale": 1 / scale, "offset": baseline,
                    "what": f"{name}'s estimate of your chance to win the game if you make this move (its Q value)"}
        return {"unit": "points", "scale": 1 / scale, "offset": 0.0,
                "what": f"{name}'s estimate of the points you win (+) or lose (-) this round with this move "
                        "(its Q value)"}
    return {"unit": "probability", "scale": 1.0, "offset": 0.0,
            "what": f"how likely {name} would be to make this move in your place (the softmax of its outputs over "
                    f"your legal moves; not a chance of winning)"}


def describe(spec: str, root: Path, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the page shows about an opponent; ``meta`` is its model's meta (None: no values to hint).

    A searcher (``search:<model>?...``) hints with its model's values, so they are said to be its model's."""
    name = agent_name(spec)
    return {"spec": spec, "name": name, "rating": rating(spec, root),
            "hint": hint_units(meta, agent_name(model_of(spec)), root)}
