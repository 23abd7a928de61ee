"""Callback data of the replay and watch buttons (issue #16): ``rp:<table>:<game>:<step>:<op>``
-- ``o`` opens the replay in the presser's private chat (from a game-over
message), ``s`` shows step ``step`` in the replay message itself."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from aiogram.filters.callback_data import CallbackData
from pydantic import Field

from telegram_bot.callbacks import CODE_PATTERN


class ReplayOp(StrEnum):
    OPEN = "o"
    STEP = "s"


class ReplayCb(CallbackData, prefix="rp"):
    table: Annotated[str, Field(pattern=CODE_PATTERN)]
    game: Annotated[int, Field(ge=1, le=10**9)]
    step: Annotated[int, Field(ge=0, le=10**6)]
    op: ReplayOp


class WatchCb(CallbackData, prefix="w"):
    """*Watch* under a group's table message: its public view in the presser's
    private chat, updated like the table (issue #16)."""

    table: Annotated[str, Field(pattern=CODE_PATTERN)]
