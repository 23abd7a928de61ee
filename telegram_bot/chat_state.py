"""UI state of the chat adapters, kept next to the tables (never in the CAS hash).

What a bot process must remember between updates -- and share with the other
bot processes -- that is not game state:

``P{t:<id>}:ui`` -- hash, per table (same hash tag as the table):

    ==============  ====================================================
    ``h:<user>``    message id of the player's hand message (his private chat)
    ``s:<user>``    his multi-card selection (JSON, :class:`telegram_bot.moves.Selection`)
    ``l:<user>``    his language (for messages he did not ask for)
    ``g``           message id of the group's table message (chat = the table's chat)
    ``L:<chat>``    message id of a lobby message in that chat
    ``gl``          the group's language
    ==============  ====================================================

``P ui:<id>`` -- hash, per user or chat: ``lang`` (/lang override), ``tg``
    (Telegram's language), ``name`` (display name), ``started`` (the user opened
    the private chat, so the bot may write to him).

Nothing here is authoritative: losing it loses only message ids (a new message is
sent) and selections.  Keys expire like the table (``ttl``) and after
``prefs_ttl`` for user preferences.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import redis.asyncio as aredis

from engine.live.keys import Keys


@dataclass
class TableUi:
    """The UI hash of one table, parsed."""

    hands: dict[int, int] = field(default_factory=dict)  # user -> message id
    selections: dict[int, dict[str, Any]] = field(default_factory=dict)
    langs: dict[int, str] = field(default_factory=dict)
    table_message: int | None = None
    lobby_messages: dict[int, int] = field(default_factory=dict)  # chat -> message id
    group_lang: str | None = None


@dataclass
class Prefs:
    """A user's (or chat's) preferences."""

    lang: str | None = None
    tg: str | None = None
    name: str = ""
    started: bool = False


def _s(b: bytes | str) -> str:
    return b.decode() if isinstance(b, bytes) else b


class UiStore:
    """Reads and writes of the UI hashes (one round trip each)."""

    def __init__(
        self,
        client: aredis.Redis,
        keys: Keys,
        *,
        ttl: float = 86400.0,
        prefs_ttl: float = 400 * 86400.0,
    ) -> None:
        self.r = client
        self.keys = keys
        self.ttl_ms = int(ttl * 1000)
        self.prefs_ttl_ms = int(prefs_ttl * 1000)

    @classmethod
    def of(cls, service: Any) -> UiStore:
        """The UI store next to a :class:`engine.live.TableService`."""
        return cls(service.redis, service.keys, ttl=service.config.game_ttl)

    # ------------------------------------------------------------------ tables
    async def table(self, table_id: str) -> TableUi:
        raw = cast("dict[bytes, bytes]", await self.r.hgetall(self.keys.table_ui(table_id)))
        ui = TableUi()
        for k, v in raw.items():
            key, val = _s(k), _s(v)
            kind, _sep, arg = key.partition(":")
            try:
                if kind == "h":
                    ui.hands[int(arg)] = int(val)
                elif kind == "s":
                    data = json.loads(val)
                    if isinstance(data, dict):
                        ui.selections[int(arg)] = data
                elif kind == "l":
                    ui.langs[int(arg)] = val
                elif kind == "g":
                    ui.table_message = int(val)
                elif kind == "L":
                    ui.lobby_messages[int(arg)] = int(val)
                elif kind == "gl":
                    ui.group_lang = val
            except ValueError:
                continue
        return ui

    async def update_table(
        self,
        table_id: str,
        *,
        hands: Mapping[int, int] | None = None,
        langs: Mapping[int, str] | None = None,
        selections: Mapping[int, Mapping[str, Any] | None] | None = None,
        table_message: int | None = None,
        lobby_messages: Mapping[int, int] | None = None,
        group_lang: str | None = None,
        drop_hands: Iterable[int] = (),
        new_game: bool = False,
    ) -> None:
        """Set what is given (a selection of ``None`` is deleted); ``new_game``
        first forgets the hand messages, selections and table message of the
        previous game.  One round trip."""
        key = self.keys.table_ui(table_id)
        fields: dict[Any, Any] = {}
        dels: list[str] = [f"h:{u}" for u in drop_hands]
        for u, m in (hands or {}).items():
            fields[f"h:{u}"] = str(m)
        for u, lang in (langs or {}).items():
            fields[f"l:{u}"] = lang
        for u, sel in (selections or {}).items():
            if sel is None:
                dels.append(f"s:{u}")
            else:
                fields[f"s:{u}"] = json.dumps(sel, separators=(",", ":"))
        if table_message is not None:
            fields["g"] = str(table_message)
        for chat, m in (lobby_messages or {}).items():
            fields[f"L:{chat}"] = str(m)
        if group_lang is not None:
            fields["gl"] = group_lang
        async with self.r.pipeline(transaction=True) as p:
            if new_game:
                old = await self.table(table_id)
                stale = [f"h:{u}" for u in old.hands] + [f"s:{u}" for u in old.selections]
                if old.table_message is not None:
                    stale.append("g")
                if stale:
                    p.hdel(key, *stale)
            if dels:
                p.hdel(key, *dels)
            if fields:
                p.hset(key, mapping=fields)
            p.pexpire(key, self.ttl_ms)
            await p.execute()

    async def forget_table(self, table_id: str) -> None:
        await self.r.delete(self.keys.table_ui(table_id))

    # ------------------------------------------------------------------ users
    async def prefs(self, who: int) -> Prefs:
        raw = cast("dict[bytes, bytes]", await self.r.hgetall(self.keys.prefs(who)))
        d = {_s(k): _s(v) for k, v in raw.items()}
        return Prefs(
            lang=d.get("lang") or None,
            tg=d.get("tg") or None,
            name=d.get("name", ""),
            started=d.get("started") == "1",
        )

    async def many_prefs(self, ids: Iterable[int]) -> dict[int, Prefs]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        async with self.r.pipeline(transaction=False) as p:
            for i in ids:
                p.hmget(self.keys.prefs(i), "lang", "tg", "name", "started")
            rows = await p.execute()
        out = {}
        for i, (lang, tg, name, started) in zip(ids, rows, strict=True):
            out[i] = Prefs(
                lang=_s(lang) if lang else None,
                tg=_s(tg) if tg else None,
                name=_s(name) if name else "",
                started=bool(started) and _s(started) == "1",
            )
        return out

    async def set_prefs(
        self,
        who: int,
        *,
        lang: str | None = None,
        clear_lang: bool = False,
        tg: str | None = None,
        name: str | None = None,
        started: bool | None = None,
    ) -> None:
        key = self.keys.prefs(who)
        fields: dict[Any, Any] = {}
        if lang is not None:
            fields["lang"] = lang
        if tg is not None:
            fields["tg"] = tg
        if name is not None:
            fields["name"] = name
        if started is not None:
            fields["started"] = "1" if started else "0"
        async with self.r.pipeline(transaction=False) as p:
            if clear_lang:
                p.hdel(key, "lang")
            if fields:
                p.hset(key, mapping=fields)
            p.pexpire(key, self.prefs_ttl_ms)
            await p.execute()
