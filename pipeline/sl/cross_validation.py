"""k-fold cross-validation of supervised training, split by game (``koikoi sl-cv``, the paper's Table I)."""

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ..net.encoding import same_choice
from ..params import SLTrainParams
from . import DECISION_NAMES
from .datamodule import SLDataModule
from .dataset import SampleSet, fold_games, load_split
from .evaluate import predict
from .fitting import fit
from .train import resolve_threads, resolved


def cross_validate(dataset_dir: str | Path, params: SLTrainParams, folds: int = 5, max_epochs: int | None = None,
                   progress: bool = True, decisions: Sequence[str] | None = None) -> dict:
    """k-fold cross-validation by game over train+val; accuracies pooled over the folds' held-out predictions.

    ``decisions`` trains only those networks (three networks learn apart); the batch shrinks in proportion so
    each takes the same steps as in a full run.
    """
    p = resolved(params)
    epochs = int(max_epochs if max_epochs is not None else p["max_epochs"])
    torch.set_num_threads(resolve_threads(p["threads"]))
    train, layout = load_split(dataset_dir, "train")
    val, _ = load_split(dataset_dir, "val")
    every = SampleSet.concat([train, val])
    names = list(DECISION_NAMES) if decisions is None else list(dict.fromkeys(decisions))
    unknown = sorted(set(names) - set(DECISION_NAMES))
    if unknown or not names:
        raise ValueError(f"decisions must be some of {list(DECISION_NAMES)}, got {list(decisions or [])}")
    if len(names) < len(DECISION_NAMES):
        if p["shared_trunk"]:
            raise ValueError("decisions: a subset needs three networks (sl_train.shared_trunk false)")
        keep = np.isin(every.decision, [DECISION_NAMES.index(n) for n in names])
        p["batch_size"] = max(1, round(p["batch_size"] * keep.mean()))
        every = every.select(keep)
    games = np.unique(every.game)
    groups = fold_games(games.size, folds, p["seed"])
    correct = {n: 0 for n in ("all", *DECISION_NAMES)}
    total = dict(correct)
    per_fold = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, g in enumerate(groups):
            held = np.isin(every.game, games[g])
            dm = SLDataModule(train=every.select(~held), val=every.select(held), layout=layout,
                              batch_size=p["batch_size"], num_workers=p["num_workers"], seed=p["seed"],
                              augment=p["augment"])
            net, metrics, _, _ = fit(dm, p, Path(tmp) / f"fold{i}", (), None, epochs, progress, None, None)
            pred = predict(net, dm)
            hit = same_choice(pred, dm.val_set.action)
            per_fold.append(round(float(hit.mean()), 4))
            print(f"sl-cv: fold {i + 1}/{folds}: {int(held.sum())} held-out samples ({', '.join(names)}), "
                  f"accuracy {per_fold[-1]:.4f}", file=sys.stderr)
            for d, name in enumerate(DECISION_NAMES):
                sel = dm.val_set.decision == d
                correct[name] += int(hit[sel].sum())
                total[name] += int(sel.sum())
            correct["all"] += int(hit.sum())
            total["all"] += int(hit.size)
    out = {name: round(correct[name] / max(1, total[name]), 4) for name in names}
    if len(names) == len(DECISION_NAMES):
        out["overall"] = round(correct["all"] / max(1, total["all"]), 4)
    out["samples"] = total["all"]
    out.update({f"samples_{n}": total[n] for n in names})
    out["folds"] = folds
    out["fold_acc"] = per_fold
    return out
