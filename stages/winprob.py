"""Stage winprob: the win-probability table P(win | round, points, dealer) from greedy SL self-play (Fig. 5)."""

from __future__ import annotations

import json
import sys

from pipeline.params import load_params
from pipeline.rl.stages import winprob_stage
from pipeline.runstate import stage_exit


def main() -> None:
    params = load_params()
    try:
        metrics = winprob_stage(params.winprob)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"winprob: error: {e}")
    print(json.dumps(metrics))


if __name__ == "__main__":
    with stage_exit("winprob"):  # Ctrl-C: one line, exit code 130
        main()
