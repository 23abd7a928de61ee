"""Stepping through a finished game's record (issue #16): the state after any
number of its moves, and where its bouts start -- what ``/replay`` and the
*Replay* button show, and what ``python -m engine replay`` checks.  Pure: the
record comes from :func:`engine.verify.make_record`; loading it is the caller's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.actions import Action
from engine.state import GameState
from engine.verify import load_record


@dataclass(frozen=True)
class ReplayStep:
    """The state after ``step`` of the record's ``last`` moves; ``bout`` of
    ``bouts`` (1-based); the first step of each bout, to jump between them."""

    record: Mapping[str, Any]
    state: GameState
    step: int
    last: int
    bout: int
    bouts: int
    bout_starts: tuple[int, ...]
    action: Action | None

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
    step = max(0, min(step, len(actions)))
    starts = [0]
    shown = state.copy()
    bout = 1
    for i, action in enumerate(actions, start=1):
        events = state.apply(action)
        if any(e.kind == "bout_end" for e in events) and i < len(actions):
            starts.append(i)  # the next bout starts after move i
        if i == step:
            shown = state.copy()
            bout = len(starts)
    if step == 0:
        bout = 1
    return ReplayStep(
        record=record,
        state=shown,
        step=step,
        last=len(actions),
        bout=bout,
        bouts=len(starts),
        bout_starts=tuple(starts),
        action=actions[step - 1] if step else None,
    )


__all__ = ["ReplayStep", "may_watch", "replay_step"]
