"""``koikoi tune``: an Optuna study over the SL (or RL) hyperparameters or a searcher's options, tracked in MLflow.

Unset options come from params.yaml's ``tune`` section; run again, it resumes. The last line is the summary (JSON).
"""

import argparse
import json
import shlex
import sys
from pathlib import Path

from ..cli_args import UserError, float_range, int_range, plain
from ..params import PARAMS_FILE, load_params
from ..runtime.paths import repo_root
from ..tune import apply


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="Optuna search over SL or RL params or a searcher's options, tracked in MLflow",
                       description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", choices=("sl", "rl", "search"), help="what to tune (default: tune.target)")
    p.add_argument("--trials", type=int_range(0), help="trials to add; 0 rewrites the outputs (default: tune.trials)")
    p.add_argument("--max-epochs", type=int_range(1), help="SL epochs per trial (default: tune.max_epochs)")
    p.add_argument("--storage", help="Optuna RDB URL (default: sqlite:///<repo>/mlruns/optuna.db)")
    p.add_argument("--study", help="study name (default: tune.study, else the target's name)")
    p.add_argument("--timeout", type=float_range(0), help="stop starting trials after this many seconds")
    p.add_argument("--seed", type=int, help="sampler seed (default: tune.seed; use one per machine)")
    p.add_argument("--apply", action="store_true", help="merge results/tune/<study>/best_params.yaml into params.yaml")
    p.add_argument("--params", default=None, help="params file (default: <repo>/params.yaml)")
    p.add_argument("--dataset", default=None, help="SL dataset directory (default: data/sl)")
    p.add_argument("--out", default=None, help="output root (default: results/tune)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tune import study_report as report  # lightning, optuna: loaded only when this runs
    from ..tune import tuning_session as session  # lightning, optuna: loaded only when this runs
    root = repo_root()
    params_path = Path(args.params) if args.params else root / PARAMS_FILE
    params = load_params(params_path)  # a ParamError is one line and exit code 2 (cli.main)
    try:
        section, study = params.tune, args.study
        if args.target and args.target != section.target and not study:
            study = args.target  # the params' study belongs to the other target
        trials = 0 if args.trials is None and args.apply else args.trials
        cfg = session.config_from_params(section, target=args.target, trials=trials, max_epochs=args.max_epochs,
                                         storage=args.storage, study=study, timeout=args.timeout, seed=args.seed)
        out_root = Path(args.out) if args.out else root / session.RESULTS
        summary: dict = {"study": cfg.study_name}
        if not (args.apply and args.trials is None):
            summary = session.tune(cfg, params, root, out_root, args.dataset, source=str(params_path))
        if args.apply:
            best = report.read_best(out_root / cfg.study_name)
            summary_file = out_root / cfg.study_name / report.SUMMARY_FILE
            study_summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
            for warning in apply.budget_warnings(study_summary, params):
                print(f"koikoi tune: warning: {warning}", file=sys.stderr)
            changed = apply.apply_params(params_path, best)
            print(f"merged {out_root / cfg.study_name / report.BEST_FILE} into {params_path}: "
                  f"{', '.join(changed) if changed else 'nothing changed'}")
            summary["applied"] = changed
        elif summary.get("trials_complete"):
            best = report.read_best(out_root / cfg.study_name)
            print(f"best params: {out_root / cfg.study_name / report.BEST_FILE}")
            line = ["koikoi", "tune", "--apply", "--study", cfg.study_name]
            line += [x for flag, v in (("--params", args.params), ("--out", args.out)) if v for x in (flag, v)]
            print(f"apply with `{shlex.join(line)}`, or try them with\n  {apply.exp_run_line(best)}")
            if cfg.target == "search" and "best_spec" in summary:  # picked on the trials' deals: confirm on fresh ones
                print(f"confirm it on fresh deals with\n  "
                      f"{apply.confirm_line(summary['best_spec'], summary['budget'], params)}")
    except (ValueError, FileNotFoundError) as e:
        raise UserError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    print(json.dumps(summary))
    return 0
