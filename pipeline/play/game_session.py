"""One game of a person against an agent, from the person's observation; a failed request leaves it as it was."""

import json
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.base import Agent, ScoringAgent
from ..engine import DECISION_NAMES, GameState, Observation, game_to_record, ids_of
from ..engine.records import TIME_FORMAT
from ..runtime import atomic
from . import view
from .analysis import Analysis, Judges
from .guard import excerpt
from .opponents import log

HUMAN_NAME = "human"


class PlayError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def shown(value: object) -> str:
    return excerpt(repr(value))


def options(values: np.ndarray, legal: list[int]) -> list[dict[str, Any]]:
    """The agent's value and softmax probability of each legal action (the paper's Fig. 7)."""
    v = values[legal].astype(np.float64)
    p = np.exp(v - v.max())
    p /= p.sum()
    return [{"action": a, "card": view.card(a) if a < 48 else None, "value": round(float(x), 4),
             "probability": round(float(q), 4)} for a, x, q in zip(legal, v, p)]


class GameSession:
    def __init__(self, game_id: str, agent: Agent | partial[Agent], opponent: str, seed: int, rounds: int, points: int,
                 records_dir: Path, you: int = 0) -> None:
        self.id, self._agent = game_id, agent
        first = self.agent
        self.has_values = isinstance(first, ScoringAgent)  # model agents score moves: hints and the review need it
        self.meta: dict[str, Any] = dict(getattr(first, "meta", {}) or {}) if self.has_values else {}
        self.opponent, self.seed, self.you, self.records_dir = opponent, seed, you, records_dir
        self.record_doc: dict[str, Any] | None = None  # the finished game's record, kept once it ends
        self.record_path: Path | None = None  # where it was written; None while it is not
        self.record_error: str | None = None  # why the last write failed and what to do
        self.start_time = time.strftime(TIME_FORMAT)  # the record's startTime; its endTime is the last move's
        self.lock = threading.Lock()
        self.state = GameState(seed=seed, num_rounds=rounds, init_points=points)
        self.move = 0  # actions applied so far, both players: a client echoes it to guard against stale clicks
        self.agent_decisions: list[tuple[Observation, int]] = []
        self._review: list[dict[str, Any]] | None = None
        self._analysis: Analysis | None = None
        self._seen = (0, 0)  # (finished rounds, turns of the current round) already sent as events
        self.opening_events = self._advance()  # the agent deals first in about half the games

    @property
    def agent(self) -> Agent:
        """The opponent; a caller holds a pool's shared agent for one request only."""
        return self._agent() if isinstance(self._agent, partial) else self._agent

    @property
    def values_kind(self) -> str | None:
        return self.meta.get("kind") if self.has_values else None

    @property
    def record_unsaved(self) -> bool:
        return self.record_doc is not None and self.record_path is None

    def view(self) -> dict[str, Any]:
        s = self.state
        return view.state_view(s.observation(self.you), s.results, over=s.is_over, winner=s.winner,
                               opponent=self.opponent, move=self.move, values=self.values_kind,
                               has_values=self.has_values)

    def act(self, action: int, move: int | None = None) -> list[dict[str, Any]]:
        """Apply the person's ``action``, then the agent's up to the person's next decision; the events since the
        last response. On any exception the game is put back as it was."""
        s = self.state
        if s.is_over:
            raise PlayError(409, f"game {self.id} is over: start a new game")
        if move is not None and move != self.move:
            raise PlayError(409, f"out of turn: the action was chosen at move {shown(move)}, the game is at move "
                                 f"{self.move}; fetch the game and choose again")
        obs = s.observation(self.you)
        if not obs.to_act:  # never while requests end in a rolled-back or consistent game; never shows its moves
            raise PlayError(409, f"game {self.id}: the opponent is to move, not you; fetch the game")
        legal = ids_of(obs.legal_mask)
        if type(action) is not int or action not in legal:  # the person's own legal actions, nobody else's
            raise PlayError(400, f"illegal action {shown(action)} in your {DECISION_NAMES[obs.decision]} decision; "
                                 f"legal: {legal}")
        before = (s.clone(), self.move, len(self.agent_decisions), self._seen)
        try:
            s.step(action)
            self.move += 1
            return self._advance()
        except BaseException:
            self.state, self.move, n, self._seen = before
            del self.agent_decisions[n:]
            self.record_doc = self.record_path = self.record_error = None
            raise

    def _advance(self) -> list[dict[str, Any]]:
        s, opp = self.state, self.you ^ 1
        events = self._new_events()
        agent = self.agent if not s.is_over and s.current_player == opp else None
        while not s.is_over and s.current_player == opp:
            obs = s.observation(opp)
            action = agent.act([obs])[0]
            self.agent_decisions.append((obs, action))
            s.step(action)
            self.move += 1
            events += self._new_events()
        if s.is_over and self.record_doc is None:
            names = (HUMAN_NAME, self.opponent) if self.you == 0 else (self.opponent, HUMAN_NAME)
            self.record_doc = game_to_record(s, names, start_time=self.start_time)
            self.record_doc["info"]["seed"] = self.seed  # only now: the deals follow from it
            self.save_record()
            events[-1]["record"] = "saved" if self.record_path is not None else self.record_error
        return events

    def _new_events(self) -> list[dict[str, Any]]:
        """Turns completed and rounds ended since the last call, in order (all public)."""
        s = self.state
        rounds_seen, turns_seen = self._seen
        out: list[dict[str, Any]] = []
        for res in s.results[rounds_seen:]:
            for i, t in enumerate(res.turns[turns_seen:], start=turns_seen + 1):
                out.append({"type": "turn", "round": res.round, "turn": i, **view.turn_view(t)})
            out.append({"type": "round", **view.round_view(res, self.you)})
            turns_seen = 0
        if not s.is_over:  # at the game's end s.turns is the last round's, already sent above
            for i, t in enumerate(s.turns[turns_seen:], start=turns_seen + 1):
                out.append({"type": "turn", "round": s.round, "turn": i, **view.turn_view(t)})
        self._seen = (len(s.results), len(s.turns))
        if s.is_over:
            out.append({"type": "over", "winner": s.winner,
                        "points": {"you": s.points[self.you], "opponent": s.points[self.you ^ 1]}})
        return out

    def save_record(self, directory: Path | None = None) -> Path | None:
        """Write the finished game's record once; its path, or None when the write failed (``record_error``)."""
        if self.record_doc is None or self.record_path is not None:
            return self.record_path
        directory = directory or self.records_dir
        path = directory / f"{time.strftime('%Y%m%d-%H%M%S')}-{self.id}.json"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            atomic.write_text(path, json.dumps(self.record_doc))
        except OSError as e:
            log(f"game {self.id}: cannot write its record to {directory} ({e.strerror or e}); it is kept in memory "
                f"and written when a client asks for it, or when the server stops")
            self.record_error = (f"the record could not be written on the server ({e.strerror or 'error'}); it is "
                                 f"kept there in memory: GET /api/games/{self.id}/record returns it and tries "
                                 f"again, so download it, and ask the server's operator to make --records writable")
            return None
        self.record_path, self.record_error = path, None
        return path

    def hint(self) -> list[dict[str, Any]]:
        """The agent's values for the person's legal moves, from the person's own observation."""
        if self.state.is_over:
            raise PlayError(409, f"game {self.id} is over: no decision to hint")
        if not self.has_values:
            raise PlayError(409, f"opponent {shown(self.opponent)} has no values to hint with: only model agents "
                                 f"have")
        obs = self.state.observation(self.you)
        if not obs.to_act:
            raise PlayError(409, f"game {self.id}: the opponent is to move, not you; fetch the game")
        values = self.agent.action_scores([obs])[0]
        return options(values, ids_of(obs.legal_mask))

    def review(self) -> list[dict[str, Any]]:
        if not self.state.is_over:
            raise PlayError(409, f"game {self.id} is not over: the review comes after the game")
        if self._review is None:
            obs = [o for o, _ in self.agent_decisions]
            values = self.agent.action_scores(obs) if self.has_values and obs else None
            self._review = [{
                "round": o.round, "turn": o.turn, "decision": DECISION_NAMES[o.decision], "action": a,
                "card": view.card(a) if a < 48 else None, "hand": view.cards(o.hand),
                "field": view.cards(o.field), "pending": view.card(o.pick_card),
                "options": options(values[i], ids_of(o.legal_mask)) if values is not None
                else [{"action": x, "card": view.card(x) if x < 48 else None} for x in ids_of(o.legal_mask)],
            } for i, (o, a) in enumerate(self.agent_decisions)]
        return self._review

    def analysis(self, judges: Judges) -> dict[str, Any]:
        """After the game: the analysis of the person's decisions, started by the first call; its progress."""
        if self.record_doc is None:
            raise PlayError(409, f"game {self.id} is not over: the analysis comes after the game")
        if judges.spec is None:
            raise PlayError(409, "this server has no searcher to judge games with: it needs a trained model "
                                 "(docs/analysis.md)")
        if self._analysis is None:
            self._analysis = Analysis(self.id, self.record_doc, self.you, judges)
        view = self._analysis.view()
        if view["status"] == "failed":
            self._analysis = None  # the next request tries again
            raise PlayError(500, "the analysis failed on the server (its log says why); try again")
        return view

    def record(self) -> dict[str, Any]:
        """The finished game's record, from memory; the write is tried again first."""
        if self.record_doc is None:
            raise PlayError(409, f"game {self.id} is not over: its record is written when it ends")
        self.save_record()
        return self.record_doc
