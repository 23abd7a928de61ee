"""*My cards* on a group's table message: the presser's hand shown in the group,
to him alone (issue 14); a presser who does not play there gets a toast."""

from __future__ import annotations

from dataclasses import dataclass

from telegram_bot.publishing.hands import HandPlacement


@dataclass(frozen=True)
class MyCards:
    hands: HandPlacement

    async def __call__(self, table_id: str, user: int, query_id: str) -> str:
        """The msgid to answer him with.  The hand goes out before the answer: it
        is sent as the answer's ephemeral message (``callback_query_id``), and
        whether it could be decides what the answer says."""
        return await self.hands.show_in_group(table_id, user, query_id)
