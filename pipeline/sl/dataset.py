"""Replay game records into supervised samples (one per decision, seen by the acting player) and split them
by game, so no game leaks between train and val."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine import Observation, RecordError, load_record, replay_record
from ..engine.records import record_files, records_sha256
from ..net import encoding
from ..runtime import atomic
from ..runtime.progress import progress_bar
from . import DECISION_NAMES
from .packing import Layout, LayoutPlanner, pack

INFO_FILE = "info.json"


@dataclass
class GameDecisions:
    """The decisions of one replayed game: acting players' observations and the recorded actions."""

    name: str
    observations: list[Observation]
    actions: list[int]


def game_decisions(rec: dict, path: str | Path) -> GameDecisions:
    """Replay one record; ``RecordError`` if it is malformed, unfinished or the engine disagrees with it."""
    obs: list[Observation] = []
    actions: list[int] = []

    def visit(state, action: int) -> None:
        obs.append(state.observation(state.player))
        actions.append(int(action))

    report = replay_record(rec, path, visitor=visit)
    if report.mismatches:
        first = report.mismatches[0].removeprefix(f"{path}: ")
        raise RecordError(path, "record", f"does not replay through the engine ({first})")
    if report.unfinished:  # the paper learns from the 200 finished games of its 201 records
        raise RecordError(path, "result.isOver", "an unfinished game (saved mid-round): not learned from")
    return GameDecisions(Path(path).stem, obs, actions)


def read_games(records_dir: str | Path, progress: bool = True) -> tuple[list[GameDecisions], list[str]]:
    """Replay every record of a directory; returns the games and the error lines of the files skipped."""
    files = record_files(records_dir)
    it = progress_bar(files, enabled=progress, desc="replay records", unit="game", leave=False)
    games, skipped = [], []
    for f in it:
        try:
            games.append(game_decisions(load_record(f), f))
        except RecordError as e:
            print(f"WARNING: skipping {e}", file=sys.stderr, flush=True)
            skipped.append(str(e))
    return games, skipped


@dataclass
class SampleSet:
    """Packed samples; ``game`` indexes the dataset's list of game names."""

    bits: np.ndarray
    values: np.ndarray
    legal: np.ndarray
    action: np.ndarray
    decision: np.ndarray
    game: np.ndarray

    def __len__(self) -> int:
        return int(self.action.shape[0])

    def select(self, rows: np.ndarray) -> SampleSet:
        return SampleSet(*(getattr(self, k)[rows] for k in _FIELDS))

    @staticmethod
    def concat(sets: Sequence[SampleSet]) -> SampleSet:
        return SampleSet(*(np.concatenate([getattr(s, k) for s in sets]) for k in _FIELDS))

    def counts(self) -> dict[str, int]:
        c = np.bincount(self.decision, minlength=len(DECISION_NAMES))
        return {name: int(c[i]) for i, name in enumerate(DECISION_NAMES)}


_FIELDS = ("bits", "values", "legal", "action", "decision", "game")


def encode_games(games: Sequence[GameDecisions], progress: bool = True) -> tuple[SampleSet, Layout]:
    """Encode every decision (batched per game) and pack it; two passes so the layout fits all games."""
    planner = LayoutPlanner()
    for g in games:
        planner.update(encoding.encode(g.observations))
    layout = planner.layout()
    parts = []
    it = progress_bar(enumerate(games), enabled=progress, total=len(games), desc="encode samples", unit="game",
                      leave=False)
    for i, g in it:
        x = encoding.encode(g.observations)
        legal = encoding.legal_masks(g.observations)
        action = np.asarray(g.actions, dtype=np.int64)
        if not legal[np.arange(len(action)), action].all():
            raise AssertionError(f"{g.name}: a recorded action is not legal in the encoding")
        p = pack(x, layout)
        parts.append(SampleSet(p["bits"], p["values"], legal, action,
                               encoding.decisions(g.observations), np.full(len(action), i, dtype=np.int64)))
    return SampleSet.concat(parts), layout


def split_games(n_games: int, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Game indices of train and val: a seeded shuffle, ``round(val_fraction * n)`` games (>= 1) to val."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    if n_games < 2:
        raise ValueError(f"need at least 2 games to split train/val, got {n_games}")
    order = np.random.default_rng(seed).permutation(n_games)
    n_val = min(n_games - 1, max(1, round(val_fraction * n_games)))
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def fold_games(n_games: int, folds: int, seed: int) -> list[np.ndarray]:
    """``folds`` disjoint groups of game indices covering all games (seeded), for k-fold cross-validation."""
    if not 2 <= folds <= n_games:
        raise ValueError(f"folds must be in [2, {n_games}], got {folds}")
    order = np.random.default_rng(seed).permutation(n_games)
    return [np.sort(f) for f in np.array_split(order, folds)]


def records_fingerprint(files: Sequence[Path]) -> str:
    """A short hash of the records' names and bytes."""
    return records_sha256(files)[:16]


def save_split(path: Path, samples: SampleSet, layout: Layout) -> None:
    atomic.write_with(path, lambda f: np.savez_compressed(f, **{k: getattr(samples, k) for k in _FIELDS},
                                                          **layout.to_arrays()))


def load_split(dataset_dir: str | Path, split: str) -> tuple[SampleSet, Layout]:
    """One split (``train`` or ``val``) of a dataset directory written by ``build_dataset``."""
    path = Path(dataset_dir) / f"{split}.npz"
    if not path.is_file():
        raise FileNotFoundError(f"no SL dataset split at {path} (run the sl_dataset stage)")
    with np.load(path) as z:
        a = {k: z[k] for k in z.files}
    return SampleSet(*(a[k] for k in _FIELDS)), Layout.from_arrays(a)


def load_info(dataset_dir: str | Path) -> dict:
    path = Path(dataset_dir) / INFO_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no SL dataset at {Path(dataset_dir)} ({INFO_FILE} missing; run the sl_dataset stage)")
    return json.loads(path.read_text())


def build_dataset(records_dir: str | Path, out_dir: str | Path, val_fraction: float = 0.2, seed: int = 0,
                  source: str = "records", progress: bool = True) -> dict:
    """Replay ``records_dir`` into ``out_dir/{train,val}.npz`` + ``info.json``; returns the metrics."""
    records_dir, out = Path(records_dir), Path(out_dir)
    files = record_files(records_dir)
    games, skipped = read_games(records_dir, progress)
    if len(games) < 2:
        raise ValueError(f"{records_dir}: {len(games)} usable game record(s); need at least 2")
    samples, layout = encode_games(games, progress)
    train_g, val_g = split_games(len(games), val_fraction, seed)
    in_val = np.isin(samples.game, val_g)
    out.mkdir(parents=True, exist_ok=True)
    train, val = samples.select(~in_val), samples.select(in_val)
    save_split(out / "train.npz", train, layout)
    save_split(out / "val.npz", val, layout)
    names = [g.name for g in games]
    counts = samples.counts()
    metrics = {
        "source": source, "records_dir": str(records_dir), "records_fingerprint": records_fingerprint(files),
        "games": len(games), "skipped_files": len(skipped), "samples": len(samples),
        **{f"samples_{k}": v for k, v in counts.items()},
        "train_games": int(train_g.size), "val_games": int(val_g.size), "train_samples": len(train),
        "val_samples": len(val), **{f"val_samples_{k}": v for k, v in val.counts().items()},
        "num_features": layout.num_features, "bit_packed_rows": int(layout.binary_rows.size),
        "value_rows": int(layout.value_rows.size), "value_dtype": str(samples.values.dtype),
    }
    info = {**metrics, "feature_version": encoding.FEATURE_VERSION, "val_fraction": val_fraction, "seed": seed,
            "games_list": names, "train_game_names": [names[i] for i in train_g],
            "val_game_names": [names[i] for i in val_g], "skipped": skipped}
    atomic.write_text(out / INFO_FILE, json.dumps(info, indent=2) + "\n")
    return metrics
