"""Where the game records come from: one rule for the pipeline, the tests and the commands (docs/sl.md)."""

import shutil
import sys
from pathlib import Path

import yaml

from ..agents.heuristic import HeuristicAgent
from ..duel.arena import play_games
from ..engine import write_record
from ..engine.records import ENV_VAR, has_records, records_folder
from ..runtime.paths import repo_root

RECORDS_HELP = ("human records: the folder sl_dataset.records_dir names (or $KOIKOI_RECORDS), else `make repro` "
                "fetches sl_dataset.records_git into data/records (docs/sl.md)")
__all__ = ["ENV_VAR", "RECORDS_HELP", "has_records", "records_folder", "shared_records_dir", "synthesize_records",
           "warn"]


def shared_records_dir() -> Path | None:
    """The records folder of the project's params.yaml when it holds records (those the tests replay), else None."""
    root = repo_root()
    try:
        records_dir = yaml.safe_load((root / "params.yaml").read_text())["sl_dataset"]["records_dir"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        records_dir = None
    folder, _ = records_folder(records_dir if isinstance(records_dir, str) else None, root)
    return folder if has_records(folder) else None


def synthesize_records(dest: Path, games: int, seed: int, progress: bool = True) -> Path:
    """Write ``games`` heuristic-vs-heuristic games as JSON records into ``dest`` (seeded)."""
    import numpy as np

    if games < 1:
        raise ValueError(f"synthetic_games must be >= 1, got {games}")
    seeds = [int(s) for s in np.random.default_rng(seed).integers(0, 2**31 - 1, size=games)]
    agents = (HeuristicAgent(seed), HeuristicAgent(seed + 1))
    states = play_games(agents, seeds, progress="synthetic games" if progress else None)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for i, s in enumerate(states, start=1):
        write_record(s, dest / f"{i}.json", names=("heuristic", "heuristic"))
    return dest


def warn(msg: str) -> None:
    print(f"WARNING: {msg}", file=sys.stderr, flush=True)
