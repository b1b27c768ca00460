"""One game between a person and an agent: the agent plays until the person's next decision.

A :class:`GameSession` owns the engine's ``GameState`` and a lock. The person's actions go through
``GameState.step`` (which rejects an illegal one before changing anything); the agent is asked through
``Agent.act`` with its own ``Observation``. Every response is built from the person's observation
(``view.state_view``). A finished game is written as a record in the project's JSON format.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..agents import Agent
from ..engine import DECISION_NAMES, GameState, IllegalActionError, Observation, ids_of, write_record
from . import view

HUMAN_NAME = "human"


class PlayError(Exception):
    """A request the game cannot take; ``status`` is the HTTP status that says why (400, 404, 409)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def options(values: np.ndarray, legal: list[int]) -> list[dict[str, Any]]:
    """The agent's value and softmax probability of each legal action (the paper's Fig. 7)."""
    v = values[legal].astype(np.float64)
    p = np.exp(v - v.max())
    p /= p.sum()
    return [{"action": a, "card": view.card(a) if a < 48 else None, "value": round(float(x), 4),
             "probability": round(float(q), 4)} for a, x, q in zip(legal, v, p)]


class GameSession:
    """A game of the person (seat ``you``) against ``agent``; thread-safe through ``lock``."""

    def __init__(self, game_id: str, agent: Agent, opponent: str, seed: int, rounds: int, points: int,
                 records_dir: Path, you: int = 0) -> None:
        self.id = game_id
        self.agent = agent
        self.opponent = opponent
        self.seed = seed
        self.you = you
        self.records_dir = records_dir
        self.record_path: Path | None = None
        self.lock = threading.Lock()
        self.state = GameState(seed=seed, num_rounds=rounds, init_points=points)
        self.move = 0  # actions applied so far, both players: a client echoes it to guard against stale clicks
        self.agent_decisions: list[tuple[Observation, int]] = []
        self._review: list[dict[str, Any]] | None = None
        self._seen = (0, 0)  # (finished rounds, turns of the current round) already sent as events
        self.opening_events = self._advance()  # the agent deals first in about half the games

    # ----------------------------------------------------------------- views
    @property
    def has_values(self) -> bool:
        """Whether the agent can score moves (model agents): hints and the review need it."""
        return hasattr(self.agent, "q_values")

    @property
    def values_kind(self) -> str | None:
        """``sl`` (values are logits of human moves) or ``rl`` (expected rewards), from the model's meta."""
        return getattr(self.agent, "meta", {}).get("kind") if self.has_values else None

    def view(self) -> dict[str, Any]:
        s = self.state
        return view.state_view(s.observation(self.you), s.results, over=s.is_over, winner=s.winner,
                               opponent=self.opponent, seed=self.seed, move=self.move, values=self.values_kind,
                               has_values=self.has_values)

    # ----------------------------------------------------------------- play
    def act(self, action: int, move: int | None = None) -> list[dict[str, Any]]:
        """Apply the person's ``action``; the agent then plays up to the person's next decision.

        Returns the events since the last response. Raises ``PlayError`` (the game unchanged):
        409 for a finished game or a stale ``move``, 400 for an illegal action.
        """
        s = self.state
        if s.is_over:
            raise PlayError(409, f"game {self.id} is over: start a new game")
        if move is not None and move != self.move:
            raise PlayError(409, f"out of turn: the action was chosen at move {move}, the game is at move "
                                 f"{self.move}; fetch the game and choose again")
        try:
            s.step(action)
        except IllegalActionError as e:
            raise PlayError(400, str(e)) from None
        self.move += 1
        return self._advance()

    def _advance(self) -> list[dict[str, Any]]:
        s = self.state
        events = self._new_events()
        opp = self.you ^ 1
        while not s.is_over and s.current_player == opp:
            obs = s.observation(opp)
            action = self.agent.act([obs])[0]
            self.agent_decisions.append((obs, action))
            s.step(action)
            self.move += 1
            events += self._new_events()
        if s.is_over and self.record_path is None:
            self._save()
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

    def _save(self) -> None:
        self.records_dir.mkdir(parents=True, exist_ok=True)
        path = self.records_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{self.id}.json"
        names = (HUMAN_NAME, self.opponent) if self.you == 0 else (self.opponent, HUMAN_NAME)
        write_record(self.state, path, names)
        self.record_path = path

    # ----------------------------------------------------------------- the agent's view
    def hint(self) -> list[dict[str, Any]]:
        """The agent's values for each of the person's legal moves, from the person's own observation."""
        if self.state.is_over:
            raise PlayError(409, f"game {self.id} is over: no decision to hint")
        if not self.has_values:
            raise PlayError(409, f"opponent {self.opponent!r} has no values to hint with: only model agents have")
        obs = self.state.observation(self.you)
        values = self.agent.q_values([obs])[0]  # type: ignore[attr-defined]
        return options(values, ids_of(obs.legal_mask))

    def review(self) -> list[dict[str, Any]]:
        """After the game: each decision the agent made, what it saw of its own cards, and its values."""
        if not self.state.is_over:
            raise PlayError(409, f"game {self.id} is not over: the review comes after the game")
        if self._review is None:
            obs = [o for o, _ in self.agent_decisions]
            values = self.agent.q_values(obs) if self.has_values and obs else None  # type: ignore[attr-defined]
            self._review = []
            for i, (o, a) in enumerate(self.agent_decisions):
                legal = ids_of(o.legal_mask)
                self._review.append({
                    "round": o.round, "turn": o.turn, "decision": DECISION_NAMES[o.decision], "action": a,
                    "card": view.card(a) if a < 48 else None, "hand": view.cards(o.hand),
                    "field": view.cards(o.field), "pending": view.card(o.pick_card),
                    "options": options(values[i], legal) if values is not None
                    else [{"action": x, "card": view.card(x) if x < 48 else None} for x in legal],
                })
        return self._review

    def record(self) -> Path:
        if self.record_path is None:
            raise PlayError(409, f"game {self.id} is not over: its record is written when it ends")
        return self.record_path


