"""Stage rl_phase2@<reward>: self-play against itself and past snapshots, from phase 1's model.

Usage: python stages/rl_phase2.py point|wp. A killed run started again resumes after its last loop.
"""

from __future__ import annotations

import json
import sys

from pipeline.params import load_params
from pipeline.rl.stages import rl_stage
from pipeline.runstate import stage_exit


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("rl_phase2: error: usage: python stages/rl_phase2.py point|wp")
    params = load_params()
    try:
        summary = rl_stage(2, sys.argv[1], params, register=params.registry.enabled)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"rl_phase2: error: {e}")
    print(json.dumps(summary))


if __name__ == "__main__":
    with stage_exit("rl_phase2"):  # Ctrl-C: one line, exit code 130
        main()
