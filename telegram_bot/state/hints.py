"""Hints a player is given once per game, whichever bot process notices first
(#24 item 6): the first to claim a hint in Redis (``SET NX``, through the table
service's key-value API ``svc.kv``; keys in
:class:`telegram_bot.state.keys.HintKeys`) gives it, the others do not."""

from __future__ import annotations

from tables import KeyValueStore, TableService
from telegram_bot.state.keys import HintKeys


class HintClaims:
    """Claims of the once-per-game hints; ``ttl``: seconds a claim lives (a
    table's chat state lives as long: ``game_ttl``)."""

    def __init__(self, kv: KeyValueStore, *, ttl: float = 86400.0) -> None:
        self.kv = kv
        self.keys = HintKeys(kv)
        self.ttl_ms = max(1, int(ttl * 1000))

    @classmethod
    def of(cls, service: TableService) -> HintClaims:
        return cls(service.kv, ttl=service.config.game_ttl)

    async def flood(self, table_id: str, game_no: int, user: int) -> bool:
        """Claim telling ``user`` that the group's flood limit holds his hand back
        in game ``game_no`` of the table: True for the first claim of that game
        only (any process).  Raises :class:`tables.ServiceUnavailable`."""
        key = self.keys.flood(table_id, game_no, user)
        return (await self.kv.set_nx([key], "1", ttl_ms=self.ttl_ms))[0]

    async def lost(self, chat: int, whom: list[int]) -> list[int]:
        """Claim telling each of ``whom`` that the bot lost the group ``chat``
        (#38): those claimed now (the two service messages of one upgrade, a
        400, another process: each is told once)."""
        keys = [self.keys.lost(chat, w) for w in whom]
        claimed = await self.kv.set_nx(keys, "1", ttl_ms=self.ttl_ms)
        return [w for w, ok in zip(whom, claimed, strict=True) if ok]
