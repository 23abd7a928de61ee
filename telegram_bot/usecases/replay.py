"""Replays (issue #16): a finished game's record from the table service, stepped
through move by move (``/replay``, the *Replay* button).  The game is over, so
a replay shows every hand; only its players see it -- and, for a group's game,
anyone who could follow it on the group's table message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import Action, EngineError, GameState
from engine.live import LiveError, TableService
from engine.verify import load_record


@dataclass(frozen=True)
class ReplayStep:
    """The state after ``step`` of the record's ``last`` moves; ``bout`` of
    ``bouts`` (1-based); the first step of each bout, to jump between them."""

    record: dict[str, Any]
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


def may_watch(record: dict[str, Any], user: int) -> bool:
    """A player of the game, or anyone for a game played in a group."""
    chat = record.get("result", {}).get("chat")
    return any(u == user for u, _name in record["seats"]) or (chat is not None and chat < 0)


async def replay_step(svc: TableService, table: str, game: int, step: int, user: int) -> ReplayStep:
    """Step ``step`` (clamped to the record) of a kept record.  Raises
    :class:`LiveError` ``no_record`` (expired or never played) or ``not_allowed``."""
    record = await svc.replay_record(table, game)
    if not may_watch(record, user):
        raise LiveError("not_allowed", "only the game's players can replay it")
    try:
        state, raw_actions = load_record(record)
        actions = [Action.from_json(a) for a in raw_actions]
    except EngineError as e:  # pragma: no cover - the service writes valid records
        raise LiveError("no_record", f"the record cannot be replayed: {e.message}") from None
    step = max(0, min(step, len(actions)))
    starts = [0]
    shown = state.copy()
    bout = 1
    for i, action in enumerate(actions, start=1):
        events = state.apply(action)
        if any(e.kind == "bout_end" for e in events) and i < len(actions):
            starts.append(i)
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
