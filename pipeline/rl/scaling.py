"""The scaling study: does strength grow with games? One phase-1 run of ``rl.algorithm`` against the frozen SL
agent, trained through budgets on a log scale (its checkpoint goes on from one budget to the next: a raised
budget continues a run), the model of each budget saved and dueled against SL on the same duplicate deals,
and for an anchored learner (``rl.algorithm: advantage``) its advantage's rank correlation with the discard
benchmark's rollout values (``probes.discard_bench``).

Everything is kept under ``out``: ``games-<N>/`` (each budget's model), ``checkpoints/`` (the run's state),
``study.json`` (a row per finished budget, rewritten after each: a killed study started again skips what is
done and resumes the training run after its last loop) and ``curve.png``. MLflow: one parent run with a
child run per budget (``scaling`` experiment).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..agents.loader import load_agent
from ..duel.runner import duel_agents
from ..net.model_dir import is_model_dir
from ..params import Params
from ..probes.discard_bench import read_bench, score_views
from ..runtime import atomic
from ..tracking.store import setup_experiment
from .phase_state import PhaseConfig
from .training import PhaseRunner

STUDY_FILE = "study.json"
EXPERIMENT = "scaling"


@dataclass(frozen=True)
class StudyConfig:
    variant: str  # point | wp
    budgets: tuple[int, ...]  # training games, ascending, each a multiple of rl.games_per_loop
    out: Path
    sl_dir: Path = Path("models/sl")
    winprob_path: Path = Path("models/winprob/winprob.json")
    duel_games: int = 2000
    duel_seed: int = 900_000_000  # deals no training loop or curve evaluation plays (phase_state.loop_seed)
    workers: int = 2
    device: str = "cpu"  # the duels' forward passes (cuda on a GPU machine)
    bench: Path | None = Path("results/discard_bench/sl.json")
    taus: tuple[float, ...] = ()  # also duel the largest budget's advantage at these temperatures (tau)
    discard_only: bool = True  # also duel the largest budget's advantage at discards only (SL elsewhere), at the
    # best tau of the study's
    progress: bool = True
    mlflow: bool = True


def check_budgets(budgets: tuple[int, ...], games_per_loop: int) -> None:
    if not budgets or list(budgets) != sorted(set(budgets)):
        raise ValueError(f"budgets must be distinct and ascending, got {list(budgets)}")
    bad = [b for b in budgets if b <= 0 or b % games_per_loop]
    if bad:
        raise ValueError(f"budgets {bad} are not positive multiples of rl.games_per_loop ({games_per_loop})")


def _read_rows(out: Path) -> dict:
    f = out / STUDY_FILE
    return json.loads(f.read_text()) if f.is_file() else {"rows": [], "run_id": None}


def _duel(model: str, sl: str, cfg: StudyConfig, label: str) -> dict:
    a, b = load_agent(model, seed=cfg.duel_seed), load_agent(sl, seed=cfg.duel_seed + 1)
    r = duel_agents(a, b, cfg.duel_games, cfg.duel_seed, workers=cfg.workers, device=cfg.device,
                    progress=label if cfg.progress else None)
    out = r.summary()
    out["duel_games"] = out.pop("games")  # a row's "games" are the training games
    return {**out, "seconds": round(r.seconds, 1)}


def _bench_scores(model_dir: Path, bench_file: Path) -> dict:
    """The anchored policy's and its advantage's rank correlations with the benchmark's values at its discards."""
    out = {}
    for name, r in score_views(model_dir, read_bench(bench_file), ("policy", "advantage")).items():
        out.update({f"{name}_spearman": r["spearman"], f"{name}_spearman_ci95": r["spearman_ci95"],
                    f"{name}_regret": r["regret"], f"{name}_best_rate": r["best_rate"]})
    return out


def anchored_variant(model_dir: Path, out: Path, **anchored: object) -> Path:
    """A copy of an anchored model playing its advantage otherwise: ``tau``, ``decisions`` (its meta "anchored")."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(model_dir, out)
    doc = json.loads((out / "config.json").read_text())
    doc["meta"]["anchored"].update(anchored)
    atomic.write_text(out / "config.json", json.dumps(doc, indent=2) + "\n")
    return out


def run_study(params: Params, cfg: StudyConfig) -> dict:
    """Train through every budget, duel each against SL, write ``study.json`` and ``curve.png``; returns the study."""
    rl = params.rl
    check_budgets(cfg.budgets, rl.games_per_loop)
    cfg.out.mkdir(parents=True, exist_ok=True)
    study = _read_rows(cfg.out)
    study.update(variant=cfg.variant, algorithm=rl.algorithm, games_per_loop=rl.games_per_loop,
                 duel_games=cfg.duel_games, duel_seed=cfg.duel_seed)
    if rl.algorithm == "advantage":
        study["tau"] = getattr(rl.advantage.tau, cfg.variant)
    done = {r["games"] for r in study["rows"]}
    # the curve's evaluations and the phase's final one are the study's duels instead
    base = rl.model_copy(update={"eval_every": 10**6, "eval_games": 2, "final_eval_games": 2})
    tracker = _Tracker(cfg, study) if cfg.mlflow else None
    for budget in cfg.budgets:
        if budget in done:
            continue
        model_dir = cfg.out / f"games-{budget}"
        if not is_model_dir(model_dir):
            loops = budget // rl.games_per_loop
            p = base.model_copy(update={"phase1": base.phase1.model_copy(update={"loops": loops,
                                                                                  "target_win_rate": 1.0})})
            phase = PhaseConfig(phase=1, variant=cfg.variant, params=p, winprob=params.winprob, sl_dir=cfg.sl_dir,
                                out_dir=cfg.out / "training", results_dir=cfg.out / "training-results",
                                ckpt_dir=cfg.out / "checkpoints",
                                winprob_path=cfg.winprob_path if cfg.variant == "wp" else None,
                                progress=cfg.progress, mlflow=False)
            summary = PhaseRunner(phase).run()
            shutil.copytree(cfg.out / "training", model_dir.with_suffix(".tmp"), dirs_exist_ok=True)
            model_dir.with_suffix(".tmp").rename(model_dir)
        else:
            summary = {}
        row = {"games": budget, **_duel(str(model_dir), str(cfg.sl_dir), cfg, f"{budget} games vs SL")}
        if summary:
            row["train_seconds"] = summary.get("train_seconds")
        if cfg.bench is not None and rl.algorithm == "advantage" and cfg.bench.is_file():
            row.update(_bench_scores(model_dir, cfg.bench))
        study["rows"].append(row)
        study["rows"].sort(key=lambda r: r["games"])
        if tracker:
            tracker.child(row)
        atomic.write_text(cfg.out / STUDY_FILE, json.dumps(study, indent=2) + "\n")
        if cfg.progress:
            print(f"scaling: {budget} training games: win rate {row['win_rate']:.3f} "
                  f"[{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}] vs SL", flush=True)
    last, top = cfg.out / f"games-{cfg.budgets[-1]}", cfg.budgets[-1]
    if rl.algorithm == "advantage":
        tau = getattr(rl.advantage.tau, cfg.variant)
        tried = {r["tau"]: r for r in study.setdefault("taus", [])}
        for t in cfg.taus:
            if t not in tried and t != tau:
                d = anchored_variant(last, cfg.out / f"tau-{t:g}", tau=t)
                tried[t] = {"games": top, "tau": t, **_duel(str(d), str(cfg.sl_dir), cfg, f"tau {t:g} vs SL")}
                study["taus"] = sorted(tried.values(), key=lambda r: r["tau"])
                atomic.write_text(cfg.out / STUDY_FILE, json.dumps(study, indent=2) + "\n")
        if cfg.discard_only and "discard_only" not in study:
            best = max([{"tau": tau, **study["rows"][-1]}, *study["taus"]], key=lambda r: r["win_rate"])["tau"]
            d = anchored_variant(last, cfg.out / "discard-only", tau=best, decisions=["discard"])
            study["discard_only"] = {"games": top, "tau": best, **_duel(str(d), str(cfg.sl_dir), cfg,
                                                                         "discard-only vs SL")}
            atomic.write_text(cfg.out / STUDY_FILE, json.dumps(study, indent=2) + "\n")
    plot_study(study, cfg.out / "curve.png")
    if tracker:
        tracker.finish(cfg.out)
    return study


def plot_study(study: dict, path: Path, xlabel: str = "training games") -> Path:
    """Win rate against SL with its 95% interval, against training games (``xlabel``: what ``rows``' "games"
    count) on a log axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = study["rows"]
    x = [r["games"] for r in rows]
    y = [r["win_rate"] for r in rows]
    err = [[r["win_rate"] - r["ci95"][0] for r in rows], [r["ci95"][1] - r["win_rate"] for r in rows]]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(x, y, yerr=err, marker="o", capsize=4, label=f"{study['algorithm']} ({study['variant']}"
                + (f", tau {study['tau']:g})" if "tau" in study else ")"))
    if "discard_only" in study:
        d = study["discard_only"]
        yerr = [[d["win_rate"] - d["ci95"][0]], [d["ci95"][1] - d["win_rate"]]]
        ax.errorbar([d["games"]], [d["win_rate"]], yerr=yerr, marker="s", capsize=4, linestyle="none",
                    label=f"advantage at discards only (tau {d['tau']:g})")
    for t in study.get("taus", []):
        yerr = [[t["win_rate"] - t["ci95"][0]], [t["ci95"][1] - t["win_rate"]]]
        ax.errorbar([t["games"]], [t["win_rate"]], yerr=yerr, marker="^", capsize=4, linestyle="none",
                    label=f"tau {t['tau']:g}")
    ax.axhline(0.5, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel(f"{xlabel} (log scale)")
    ax.set_ylabel(f"win rate vs SL ({study['duel_games']} duplicate games)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


class _Tracker:
    """The study's MLflow parent run and a child run per budget."""

    def __init__(self, cfg: StudyConfig, study: dict) -> None:
        import mlflow

        self.mlflow = mlflow
        exp = setup_experiment(EXPERIMENT)
        run_id = study.get("run_id")
        if run_id:
            self.parent = mlflow.start_run(run_id=run_id)
        else:
            self.parent = mlflow.start_run(experiment_id=exp, run_name=f"scaling-{study['algorithm']}-{cfg.variant}")
            study["run_id"] = self.parent.info.run_id
            mlflow.log_params({"variant": cfg.variant, "algorithm": study["algorithm"],
                               "budgets": ",".join(map(str, cfg.budgets)), "duel_games": cfg.duel_games,
                               "duel_seed": cfg.duel_seed, "games_per_loop": study["games_per_loop"]})

    def child(self, row: dict) -> None:
        m = self.mlflow
        with m.start_run(run_name=f"games-{row['games']}", nested=True):
            m.log_param("games", row["games"])
            m.log_metrics({k: float(v) for k, v in row.items() if isinstance(v, int | float) and k != "games"})
            m.log_metrics({"ci95_low": row["ci95"][0], "ci95_high": row["ci95"][1]})
        m.log_metric("win_rate", row["win_rate"], step=row["games"])

    def finish(self, out: Path) -> None:
        self.mlflow.log_artifact(str(out / STUDY_FILE))
        self.mlflow.log_artifact(str(out / "curve.png"))
        self.mlflow.end_run()
