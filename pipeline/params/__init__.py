"""The params layer: one typed model per params.yaml section, one loader, one ``ParamError``."""

from .base import ParamError, dotted, overridden, validated
from .load import PARAMS_FILE, Params, load_params, params_with, parse_params, read_doc, with_overrides
from .rl import RLParams, WinProbParams, check_variant
from .sections import DuelsParams, RolloutParams, SLDatasetParams, SLTrainParams, TuneParams

__all__ = ["PARAMS_FILE", "DuelsParams", "ParamError", "Params", "RLParams", "RolloutParams", "SLDatasetParams",
           "SLTrainParams", "TuneParams", "WinProbParams", "check_variant", "dotted", "load_params", "overridden",
           "params_with", "parse_params", "read_doc", "validated", "with_overrides"]
