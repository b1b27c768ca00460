"""The params layer: one typed model per params.yaml section, one loader, one ``ParamError``.

- ``base``: the strict base model, ``ParamError`` and its one-line message, ``tuned`` (a field's Optuna range).
- ``sections``: registry, engine_tests, sl_dataset, sl_train, rollout, duels, tune.
- ``rl``: rl (with its nested phase1, phase2, branch, selfplay, epsilon, reward_scale) and winprob.
- ``load``: ``Params`` (the whole file), ``load_params``, and dotted-key overrides.
"""

from .base import ParamError, dotted, overridden, validated
from .load import PARAMS_FILE, Params, load_params, params_with, parse_params, read_doc, with_overrides
from .rl import RLParams, WinProbParams, check_variant
from .sections import DuelsParams, RolloutParams, SLDatasetParams, SLTrainParams, TuneParams

__all__ = ["PARAMS_FILE", "DuelsParams", "ParamError", "Params", "RLParams", "RolloutParams", "SLDatasetParams",
           "SLTrainParams", "TuneParams", "WinProbParams", "check_variant", "dotted", "load_params", "overridden",
           "params_with", "parse_params", "read_doc", "validated", "with_overrides"]
