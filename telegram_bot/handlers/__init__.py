"""Handler routers, one per module, in the order the dispatcher tries them."""

from __future__ import annotations

from aiogram import Router

from telegram_bot.handlers import (
    anonymous,
    arena,
    commands,
    errors,
    game,
    group,
    inline,
    lobby,
    replay,
    start,
    watch,
)


def routers() -> list[Router]:
    """Every router; the catch-alls (unknown commands, unknown buttons) last."""
    return [
        errors.router,
        anonymous.router,
        start.router,
        lobby.router,
        arena.router,
        game.router,
        inline.router,
        group.router,
        replay.router,
        watch.router,
        commands.router,
        errors.fallback,
    ]
