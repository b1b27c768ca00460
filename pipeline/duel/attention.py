"""The paper's Fig. 7/8: a model's attention between card tokens (each head of its first and last layers) and the
value of each legal action at a chosen discard of round 1, the model greedy against itself."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from ..agents.model_agent import ModelAgent  # noqa: E402
from ..engine import DISCARD, GameState, Observation  # noqa: E402
from ..engine.cards import card_name, ids_of  # noqa: E402
from ..net.encoding import decisions, encode, legal_masks  # noqa: E402
from ..net.model import masked  # noqa: E402
from ..net.modelio import load_model  # noqa: E402
from ..runtime import atomic  # noqa: E402

LOCATIONS = (("hand", "H"), ("field", "F"), ("my_pile", "P"), ("opp_pile", "O"))


class AttentionError(ValueError):
    """The chosen decision cannot be reached."""


def play_to_discard(agent, seed: int, turn: int, num_rounds: int = 8, init_points: int = 30) -> Observation:
    """The acting player's view at the discard decision of turn ``turn`` (1..16) of round 1."""
    if not 1 <= turn <= 16:
        raise AttentionError(f"turn must be in 1..16 (a round has 16 turns), got {turn}")
    s = GameState(seed=seed, num_rounds=num_rounds, init_points=init_points)
    while True:
        if s.is_over or s.round > 1:
            last = s.results[0].turns[-1] if s.results else None
            ended = len(s.results[0].turns) if s.results else "?"
            raise AttentionError(f"round 1 of seed {seed} ended at turn {ended} before turn {turn}"
                                 f"{' (a stop)' if last is not None and last.koikoi is False else ''}; "
                                 f"choose an earlier turn or another seed")
        if s.phase == DISCARD and s.turn == turn:
            return s.observation(s.player)
        s.step(agent.act([s.observation(s.player)])[0])


def token_labels(obs: Observation) -> tuple[list[int], list[str]]:
    ids, labels = [], []
    for attr, tag in LOCATIONS:
        for c in ids_of(getattr(obs, attr)):
            ids.append(c)
            labels.append(f"{card_name(c)} ({tag})")
    return ids, labels


def value_axis(meta: dict) -> tuple[bool, str, str]:
    """(softmax them?, axis label, title word) of a model's outputs: only a Monte-Carlo DQN model outputs Q values."""
    if str(meta.get("kind", "")).lower() == "rl" and meta.get("algorithm") == "mc_dqn":
        return False, "Q value (expected round reward, training units)", "Q value"
    return True, "probability (softmax of the policy logits)", "probability"


def attention_figure(net, meta: dict, obs: Observation, out: str | Path, title: str = "") -> Path:
    """Draw the attention maps and action values of ``net`` at ``obs``; returns the PNG path."""
    x = torch.from_numpy(encode([obs]))
    d = torch.from_numpy(decisions([obs]))
    legal = torch.from_numpy(legal_masks([obs]))
    maps = net.attention_weights(x, d)
    net.eval()
    with torch.inference_mode():
        values = masked(net(x, d), legal)[0]
    kind = str(meta.get("kind", "")).lower()
    softmax, ylabel, what = value_axis(meta)
    shown = torch.softmax(values, dim=0) if softmax else values
    legal_ids = [int(i) for i in torch.nonzero(legal[0]).flatten()]

    ids, labels = token_labels(obs)
    layers = [0] if len(maps) == 1 else [0, len(maps) - 1]
    heads = maps[0].shape[1]
    size = 0.22 * len(ids) + 2.0
    fig = plt.figure(figsize=(size * heads, size * len(layers) + 3.5))
    grid = fig.add_gridspec(len(layers) + 1, heads, height_ratios=[size] * len(layers) + [3.0])
    idx = torch.tensor(ids, dtype=torch.long)
    for r, layer in enumerate(layers):
        for h in range(heads):
            ax = fig.add_subplot(grid[r, h])
            w = maps[layer][0, h].index_select(0, idx).index_select(1, idx).numpy()
            im = ax.imshow(w, cmap="viridis")  # own scale per panel: weights are ~1/50 near uniform
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02).ax.tick_params(labelsize=6)
            ax.set_xticks(range(len(ids)), labels, rotation=90, fontsize=6)
            ax.set_yticks(range(len(ids)), labels, fontsize=6)
            ax.set_title(f"layer {layer + 1}, head {h + 1}", fontsize=9)
    ax = fig.add_subplot(grid[len(layers), :])
    vals = np.array([float(shown[i]) for i in legal_ids])
    ax.bar(range(len(legal_ids)), vals, color=["tab:red" if v == vals.max() else "tab:blue" for v in vals])
    ax.set_xticks(range(len(legal_ids)), [card_name(i) for i in legal_ids], fontsize=8)
    ax.set_ylabel(ylabel)
    algorithm = f", {meta['algorithm']}" if meta.get("algorithm") else ""
    ax.set_title(f"{what} of each legal discard (model kind: {kind or 'unknown'}{algorithm})")
    legend = "attention between card tokens (H hand, F field, P my pile, O opponent's pile; rows attend to columns)"
    fig.suptitle((title or f"round {obs.round} turn {obs.turn} discard") + "\n" + legend)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    out = atomic.savefig(fig, out, dpi=100)
    plt.close(fig)
    return out


def render_attention(model_dir: str | Path, seed: int, turn: int, out: str | Path) -> Path:
    net, meta = load_model(model_dir)
    obs = play_to_discard(ModelAgent(net, name=str(model_dir)), seed, turn)
    title = f"{model_dir}: seed {seed}, round 1 turn {turn} discard"
    return attention_figure(net, meta, obs, out, title=title)
