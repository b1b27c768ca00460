"""Where a model comes from, in MLflow: from a registered version to the run that trained its weights, that
run's starting models, the SL dataset and the pipeline execution (docs/mlflow.md "Lineage")."""

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

from ..net.model_dir import MODEL_FILE
from .executions import DVC_EXP, PARAMS_HASH, PIPELINE_RUN, run_link, summary_run

SHA_TAG = "model_sha256"  # the SHA-256 of model.pt, on logged models and registered versions
SL_RUN = "sl_run"  # on an RL run: the run that trained its SL model (its opponent, baseline and start)
INIT_RUN = "init_run"  # on a phase-2 run: the phase-1 run whose weights it starts from
TRAINED_BY = "trained_by_run"  # on a registered version: the run whose training produced its weights
DATASET = "sl-dataset"
DATASET_FILES = ("info.json", "train.npz", "val.npz")


def dataset_digest(data_dir: str | Path) -> str:
    """A short hash of the SL dataset's files (what the model was fitted on, byte for byte)."""
    h = hashlib.sha256()
    for name in DATASET_FILES:
        p = Path(data_dir) / name
        h.update(name.encode() + (p.read_bytes() if p.is_file() else b"-"))
    return h.hexdigest()[:10]


def sl_dataset(data_dir: str | Path) -> Any:
    """The SL dataset in ``data_dir`` as an MLflow dataset (source: the records directory; profile: its counts)."""
    from mlflow.data.dataset_source_registry import resolve_dataset_source
    from mlflow.data.meta_dataset import MetaDataset

    info = json.loads((Path(data_dir) / "info.json").read_text())
    profile = {"records": info.get("games"), "records_source": info.get("source"),
               "records_fingerprint": info.get("records_fingerprint"), "skipped_files": info.get("skipped_files"),
               **{k: info.get(k) for k in ("train_games", "val_games", "samples", "train_samples", "val_samples",
                                           "feature_version")}}

    class SLDataset(MetaDataset):
        @property
        def profile(self) -> dict:
            return profile

        def to_dict(self) -> dict[str, str]:
            return {**super().to_dict(), "profile": json.dumps(profile)}

    with warnings.catch_warnings():  # "can be interpreted in multiple ways": every local scheme says the same
        warnings.simplefilter("ignore")
        source = resolve_dataset_source(str(Path(info.get("records_dir") or data_dir).resolve()))
    return SLDataset(source=source, name=DATASET, digest=dataset_digest(data_dir))


def log_sl_dataset(client: Any, run_id: str, data_dir: str | Path) -> Any:
    from mlflow.entities import DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    ds = sl_dataset(data_dir)
    tags = [InputTag(MLFLOW_DATASET_CONTEXT, "training"), InputTag("path", str(data_dir))]
    client.log_inputs(run_id, datasets=[DatasetInput(ds._to_mlflow_entity(), tags)])
    return ds


def weights_model(client: Any, sha: str, experiments: tuple[str, ...] = ("sl", "rl"),
                  exclude_run: str | None = None) -> Any | None:
    """The newest READY logged model (of ``experiments``) holding weights ``sha``, not of run ``exclude_run``."""
    from mlflow.entities import LoggedModelStatus

    ids = [e.experiment_id for n in experiments if (e := client.get_experiment_by_name(n)) is not None]
    if not ids:
        return None
    found = [m for m in client.search_logged_models(ids, filter_string=f"tags.{SHA_TAG} = '{sha}'")
             if m.status == LoggedModelStatus.READY and m.source_run_id and m.source_run_id != exclude_run]
    return max(found, key=lambda m: m.creation_timestamp, default=None)


def weights_run(client: Any, model_dir: str | Path, experiments: tuple[str, ...] = ("sl", "rl")) -> str | None:
    """The run that produced the weights in ``model_dir`` (its newest logged model), if this store has it."""
    path = Path(model_dir) / MODEL_FILE
    if not path.is_file():
        return None
    model = weights_model(client, hashlib.sha256(path.read_bytes()).hexdigest(), experiments)
    return model.source_run_id if model is not None else None


def _get_run(client: Any, run_id: str | None) -> Any | None:
    from mlflow.exceptions import MlflowException

    if not run_id:
        return None
    try:
        return client.get_run(run_id)
    except MlflowException:
        return None


def _dataset_line(run: Any) -> str | None:
    for d in run.inputs.dataset_inputs if run.inputs else []:
        if d.dataset.name == DATASET:
            profile = json.loads(d.dataset.profile or "{}")
            source = json.loads(d.dataset.source or "{}").get("uri", d.dataset.source)
            return (f"**Dataset**: `{DATASET}` digest `{d.dataset.digest}`, {profile.get('records')} game records "
                    f"from `{source}` ({profile.get('records_source')}), {profile.get('train_samples')} training and "
                    f"{profile.get('val_samples')} validation samples: an input of {run_link(run)}.")
    return None


def describe_version(client: Any, name: str, version: str) -> None:
    """Tag and describe a registered version with its lineage, from its run."""
    v = client.get_model_version(name, version)
    run = _get_run(client, v.run_id)
    if run is None:
        return
    tags = run.data.tags
    chain, lines = [run], [f"**Trained by**: {run_link(run)} (its curves: `eval/win_rate` with its 95% interval "
                           "`eval/ci_low`..`eval/ci_high` per evaluation, the `loss/*` units in its description; "
                           "`val/*` per epoch for SL)."]
    start = _get_run(client, tags.get(INIT_RUN))
    if start is not None:
        chain.append(start)
        lines.append(f"**Started from**: the weights of {run_link(start)}.")
    sl = _get_run(client, tags.get(SL_RUN) or (start.data.tags.get(SL_RUN) if start is not None else None))
    if sl is not None:
        chain.append(sl)
        lines.append(f"**SL model**: {run_link(sl)} (the RL opponent, evaluation baseline and starting weights).")
    dataset = next((line for r in chain if (line := _dataset_line(r))), None)
    if dataset:
        lines.append(dataset)
    execution = tags.get(PIPELINE_RUN)
    if execution:
        summary = summary_run(client, execution)
        lines.append(f"**Pipeline execution**: `{execution}`, DVC experiment `{tags.get(DVC_EXP, '-')}`, params hash "
                     f"`{tags.get(PARAMS_HASH, '-')}`"
                     + (f"; params and every stage's metrics in {run_link(summary)} (experiment `pipeline`)"
                        if summary is not None else "")
                     + f"; all its runs: filter `tags.{PIPELINE_RUN} = '{execution}'`.")
    for key, value in ((TRAINED_BY, run.info.run_id), (PIPELINE_RUN, execution), (DVC_EXP, tags.get(DVC_EXP)),
                       (PARAMS_HASH, tags.get(PARAMS_HASH)), (SL_RUN, sl.info.run_id if sl is not None else None)):
        if value:
            client.set_model_version_tag(name, version, key, value)
    client.update_model_version(name, version, description="\n\n".join(lines))
