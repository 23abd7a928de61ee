"""Replays (issue #16): a finished game's record from the table service, stepped
through move by move (``/replay``, the *Replay* button) by the rules
(:mod:`engine.replay`).  The game is over, so a replay shows every hand; only
its players see it -- and, for a group's game, anyone who could follow it on the
group's table message."""

from __future__ import annotations

from engine import EngineError
from engine.replay import ReplayStep, may_watch
from engine.replay import replay_step as step_record
from tables import LiveError, TableService


async def replay_step(svc: TableService, table: str, game: int, step: int, user: int) -> ReplayStep:
    """Step ``step`` (clamped to the record) of a kept record.  Raises
    :class:`LiveError` ``no_record`` (expired or never played) or ``not_allowed``."""
    record = await svc.replays.record(table, game)
    if not may_watch(record, user):
        raise LiveError("not_allowed", "only the game's players can replay it")
    try:
        return step_record(record, step)
    except EngineError as e:  # pragma: no cover - the service writes valid records
        raise LiveError("no_record", f"the record cannot be replayed: {e.message}") from None


__all__ = ["ReplayStep", "replay_step"]
