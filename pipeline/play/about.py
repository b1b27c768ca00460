"""What the page says of an opponent: its name, its duel rating, and the unit of its hint values."""

import json
from pathlib import Path
from typing import Any

from ..agents.specs import key_name, model_of
from ..duel.duel_report import display_name
from ..duel.ratings_file import read_ratings
from ..params import ParamError, load_params


def agent_name(spec: str) -> str:
    """The name a person knows an agent by: ``models/rl/wp`` -> ``RL-WP``, ``heuristic`` -> ``Heuristic``."""
    return display_name(key_name(spec))


def meta_of(spec: str, root: Path) -> dict[str, Any] | None:
    """A model directory's meta from its config.json (no torch needed); None for the built-in agents."""
    try:
        return dict(json.loads((root / model_of(spec) / "config.json").read_text(encoding="utf-8")).get("meta", {}))
    except (OSError, ValueError, AttributeError):
        return None


def rating(spec: str, root: Path) -> dict[str, Any] | None:
    anchor, table = read_ratings(root)
    r = table.get(key_name(spec))
    return None if r is None else {**r, "anchor": None if anchor is None else display_name(anchor)}


def hint_units(meta: dict[str, Any] | None, name: str, root: Path) -> dict[str, Any] | None:
    """How the page shows a hint option: ``probability``, or ``value * scale + offset`` in ``unit``; None: no values."""
    if meta is None:
        return None
    if meta.get("kind") == "rl" and meta.get("algorithm") == "mc_dqn":
        variant = "wp" if meta.get("variant", meta.get("reward")) == "wp" else "point"
        try:
            rl = load_params(root / "params.yaml").rl
        except ParamError:
            return {"unit": "q", "scale": 1.0, "offset": 0.0,
                    "what": f"{name}'s Q value of the move, in its training units ({root / 'params.yaml'} could not "
                            f"be read to turn it into {'a win probability' if variant == 'wp' else 'points'})"}
        scale = float(getattr(rl.reward_scale, variant))
        if variant == "wp":
            return {"unit": "win_probability", "scale": 1 / scale, "offset": float(rl.wp_baseline),
                    "what": f"{name}'s estimate of your chance to win the game if you make this move (its Q value)"}
        return {"unit": "points", "scale": 1 / scale, "offset": 0.0,
                "what": f"{name}'s estimate of the points you win (+) or lose (-) this round with this move "
                        "(its Q value)"}
    return {"unit": "probability", "scale": 1.0, "offset": 0.0,
            "what": f"how likely {name} would be to make this move in your place (the softmax of its outputs over "
                    f"your legal moves; not a chance of winning)"}


def describe(spec: str, root: Path, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"spec": spec, "name": agent_name(spec), "rating": rating(spec, root),
            "hint": hint_units(meta, agent_name(model_of(spec)), root)}
