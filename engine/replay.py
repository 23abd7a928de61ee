"""Stepping through a finished game's record (issue #16): the state after any
number of its moves, and where its bouts start -- what ``/replay`` and the
*Replay* button show, and what ``python -m engine replay`` checks.  Pure: the
record comes from :func:`engine.verify.make_record`; loading it is the caller's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.actions import PASS, Action
from engine.state import GameState
from engine.verify import load_record


@dataclass(frozen=True)
class ReplayStep:
    """The state after ``step`` of the record's ``last`` steps; ``bout`` of
    ``bouts`` (1-based); the first step of each bout, to jump between them.

    A step is a move that is not a pass, with the passes that follow it (#29: a
    Shchelkovsky game of 754 moves had 412 passes, each a step that showed
    nothing new); ``action`` is that move, ``passes`` how many passes it
    carries."""

    record: Mapping[str, Any]
    state: GameState
    step: int
    last: int
    bout: int
    bouts: int
    bout_starts: tuple[int, ...]
    action: Action | None
    passes: int = 0

    @property
    def names(self) -> list[str]:
        return [str(name) for _user, name in self.record["seats"]]

    def prev_bout(self) -> int:
        return max((s for s in self.bout_starts if s < self.step), default=0)

    def next_bout(self) -> int:
        return min((s for s in self.bout_starts if s > self.step), default=self.last)


def may_watch(record: Mapping[str, Any], user: int) -> bool:
    """Only the game's players: a replay shows every hand, which the group's
    table message never showed its other members (#28)."""
    return any(u == user for u, _name in record["seats"])


def replay_step(record: Mapping[str, Any], step: int) -> ReplayStep:
    """Step ``step`` (clamped to the record) of ``record``, replayed through the
    rules.  Raises :class:`engine.EngineError` for a record that cannot be
    replayed."""
    state, raw_actions = load_record(record)
    actions = [Action.from_json(a) for a in raw_actions]
    # the moves that make a step: every move but a pass (the deal is step 0)
    moves = [i for i, a in enumerate(actions) if a.kind != PASS]
    last = len(moves)
    step = max(0, min(step, last))
    # step k shows the state before move moves[k] (after every pass behind k)
    ends = [*moves, len(actions)]
    starts = [0]
    shown = state.copy()
    bout = 1
    done = 0  # steps made so far
    for i, action in enumerate(actions, start=1):
        if action.kind != PASS:
            done += 1
        events = state.apply(action)
        ended = any(e.kind == "bout_end" for e in events)
        if ended and i < len(actions) and starts[-1] != done:
            starts.append(done)  # the next bout starts after step ``done``
        if step and i == ends[step]:
            shown = state.copy()
            bout = len(starts)
    if step == 0:
        shown = _before_first_move(record, actions)
        bout = 1
    made = actions[moves[step - 1]] if step else None
    passes = (ends[step] - moves[step - 1] - 1) if step else 0
    return ReplayStep(
        record=record,
        state=shown,
        step=step,
        last=last,
        bout=bout,
        bouts=len(starts),
        bout_starts=tuple(starts),
        action=made,
        passes=passes,
    )


def replay_steps(record: Mapping[str, Any]) -> list[ReplayStep]:
    """Every step of ``record`` in one pass through the rules (the Mini App's
    replay viewer, #42, steps through them all): ``replay_steps(r)[k]`` is
    :func:`replay_step` ``(r, k)``, in O(moves) for the whole game instead of
    O(moves) for each step.  Raises :class:`engine.EngineError` for a record
    that cannot be replayed."""
    state, raw_actions = load_record(record)
    actions = [Action.from_json(a) for a in raw_actions]
    moves = [i for i, a in enumerate(actions) if a.kind != PASS]
    ends = [*moves, len(actions)]  # step k: the state after the first ends[k] actions
    shots: list[tuple[GameState, int]] = []  # (state, bout) of each step
    starts = [0]
    done = 0
    if ends[0] == 0:
        shots.append((state.copy(), 1))
    for i, action in enumerate(actions, start=1):
        if action.kind != PASS:
            done += 1
        events = state.apply(action)
        ended = any(e.kind == "bout_end" for e in events)
        if ended and i < len(actions) and starts[-1] != done:
            starts.append(done)
        while len(shots) < len(ends) and ends[len(shots)] == i:
            shots.append((state.copy(), 1 if not shots else len(starts)))
    last = len(moves)
    return [
        ReplayStep(
            record=record,
            state=shown,
            step=k,
            last=last,
            bout=bout,
            bouts=len(starts),
            bout_starts=tuple(starts),
            action=actions[moves[k - 1]] if k else None,
            passes=(ends[k] - moves[k - 1] - 1) if k else 0,
        )
        for k, (shown, bout) in enumerate(shots)
    ]


def _before_first_move(record: Mapping[str, Any], actions: list[Action]) -> GameState:
    """The deal (and any passes before the first real move, which RULES never
    asks for, but a record could hold)."""
    state, _raw = load_record(record)
    for action in actions:
        if action.kind != PASS:
            break
        state.apply(action)
    return state


__all__ = ["ReplayStep", "may_watch", "replay_step", "replay_steps"]
