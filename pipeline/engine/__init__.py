"""The Koi-Koi rules engine: pure Python, no torch. See ``state.GameState``."""

from .actions import (
    DECISION_NAMES,
    DISCARD,
    GAME_OVER,
    KOIKOI,
    KOIKOI_DECISION,
    NUM_ACTIONS,
    PICK,
    STOP,
    IllegalActionError,
    RoundResult,
    Turn,
)
from .cards import NUM_CARDS, card_id, card_name, card_tuple, ids_of, mask_of
from .hidden import determinize, hidden_cards, resample_hidden
from .observation import Observation
from .records import RecordError, game_to_record, load_record, write_record
from .records_replay import ReplayReport, replay_dir, replay_record
from .scoring import Score, base_points, score, score_mask
from .state import GameState, random_observations

__all__ = [
    "DECISION_NAMES", "DISCARD", "GAME_OVER", "KOIKOI", "KOIKOI_DECISION", "NUM_ACTIONS", "NUM_CARDS", "PICK",
    "STOP", "GameState", "IllegalActionError", "Observation", "RecordError", "ReplayReport", "RoundResult",
    "Score", "Turn", "base_points", "card_id", "card_name", "card_tuple", "determinize", "game_to_record",
    "hidden_cards", "ids_of", "load_record", "mask_of", "random_observations", "replay_dir", "replay_record",
    "resample_hidden", "score", "score_mask", "write_record",
]
