"""Stage tune (frozen: `dvc repro` skips it; `make tune` runs this script): one session of the study
described by the ``tune`` section of params.yaml. Outputs in results/tune/<study>/."""

from __future__ import annotations

import json
import sys

from pipeline.params import load_params
from pipeline.runstate import stage_exit
from pipeline.tune import session


def main() -> None:
    params = load_params()
    try:
        summary = session.tune(params.tune, params)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"tune: error: {str(e).splitlines()[0]}")
    print(json.dumps(summary))


if __name__ == "__main__":
    with stage_exit("tune"):  # Ctrl-C: one line, exit code 130
        main()
