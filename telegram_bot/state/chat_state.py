"""The bot's chat state, kept next to the tables (never in the CAS hash).

What a bot process must remember between updates -- and share with the other
bot processes -- that is not game state:

``P{t:<id>}:ui`` -- hash, per table (same hash tag as the table):

    ==============  ====================================================
    ``h:<user>``    message id of the player's hand message (his private chat);
                    negative: minus the ephemeral_message_id of his hand shown
                    in the group (issue 14, :mod:`telegram_bot.publishing.hands`)
    ``s:<user>``    his multi-card selection (JSON, :class:`telegram_bot.buttons.moves.Selection`;
                    written by compare-and-set on its ``rev``, :meth:`ChatStateStore.swap_selection`,
                    which refuses a press whose request id its last writes ``ap`` hold)
    ``l:<user>``    his language (for messages he did not ask for)
    ``g``           message id of the group's table message (chat = the table's chat)
    ``L:<chat>``    message id of a lobby message in that chat
    ``gl``          the group's language
    ``w:<user>``    message id of a spectator's private view (issue #16)
    ``fh:<user>``   the game (``game_no``) in which his hand in the group
                    carries the flood hint (#24, :mod:`telegram_bot.state.hints`)
    ``pg:<user>:<page>``  one of his Mini App pages open on the table: when it
                    expires unless its process renews it, ms (#42,
                    :mod:`telegram_bot.state.pages`)
    ==============  ====================================================

``P ui:<id>`` -- hash, per user or chat: ``lang`` (/lang override), ``tg``
    (Telegram's language), ``name`` (display name), ``started`` (the user opened
    the private chat, so the bot may write to him), ``plays`` (where his hand
    goes in a group game: ``group`` or ``private``; where he last asked for it),
    ``play`` (his last game against the AI, ``<game>:<level>``: ``/play`` offers
    it first, #41).

The key names are spelled in :class:`telegram_bot.state.keys.ChatStateKeys`.
Redis is reached only through the table service's generic key-value API
(``svc.kv``, :class:`tables.KeyValueStore`); its failures surface as
:class:`tables.ServiceUnavailable`.  Nothing here is authoritative: losing it loses only message ids (a new message is
sent) and selections.  Keys expire like the table (``ttl``) and after
``prefs_ttl`` for user preferences.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tables import KeyValueStore, TableService
from telegram_bot.state.keys import ChatStateKeys

SWAP_SELECTION_LUA = r"""
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local rev = 0
local data = nil
if cur then
  local ok, decoded = pcall(cjson.decode, cur)
  if ok and type(decoded) == 'table' then data = decoded end
end
if data and type(data['rev']) == 'number' then rev = data['rev'] end
if ARGV[5] ~= '' and data and type(data['ap']) == 'table' then
  for _, entry in ipairs(data['ap']) do
    if type(entry) == 'table' and entry[1] == ARGV[5] then return -1 end
  end
end
if rev ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""
"""Set a selection field if the stored one's ``rev`` (absent or unreadable: 0) is
the expected one and press ARGV[5] ('' = any) made none of its recorded writes
(``ap``); 1 if set, 0 if another write got there first, -1 if that press's
write is in it already."""


class SelectionSwap(enum.Enum):
    """What :meth:`ChatStateStore.swap_selection` did (true only when it wrote)."""

    WRITTEN = 1
    MOVED = 0  # another write changed it first: nothing written
    APPLIED = -1  # this press's own write is in it already (a copy won): nothing written

    def __bool__(self) -> bool:
        return self is SelectionSwap.WRITTEN


SWAP_HAND_LUA = r"""
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if ARGV[3] == '1' and cur ~= ARGV[4] then return {0, cur} end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, cur}
"""
"""Set (or, ARGV[2] empty, delete) a hand field -- only while it holds ARGV[4]
('' = none) when ARGV[3] is '1'; {1 if written, the value it held}."""

ANY_HAND = object()
"""``swap_hand(expect=ANY_HAND)``: whatever hand he has, it is replaced."""


@dataclass
class TableUi:
    """The UI hash of one table, parsed."""

    hands: dict[int, int] = field(default_factory=dict)  # user -> message id
    selections: dict[int, dict[str, Any]] = field(default_factory=dict)
    langs: dict[int, str] = field(default_factory=dict)
    table_message: int | None = None
    lobby_messages: dict[int, int] = field(default_factory=dict)  # chat -> message id
    group_lang: str | None = None
    watchers: dict[int, int] = field(default_factory=dict)  # spectator -> message id (#16)
    flood_hints: dict[int, int] = field(default_factory=dict)  # user -> game_no (#24)
    started: int | None = None  # the game whose start (hands, table) was rendered (#28)
    # user -> when his latest open Mini App page there expires, ms (#42,
    # :mod:`telegram_bot.state.pages`)
    pages: dict[int, int] = field(default_factory=dict)


@dataclass
class Prefs:
    """A user's (or chat's) preferences."""

    lang: str | None = None
    tg: str | None = None
    name: str = ""
    started: bool = False
    plays: str | None = None  # where his hand goes: "group" (ephemeral) or "private"
    play: str | None = None  # his last game against the AI: "<game>:<level>" (#41)


class ChatStateStore:
    """Reads and writes of the chat-state hashes (one round trip each)."""

    def __init__(
        self,
        kv: KeyValueStore,
        *,
        ttl: float = 86400.0,
        prefs_ttl: float = 400 * 86400.0,
    ) -> None:
        self.kv = kv
        self.keys = ChatStateKeys(kv)
        self.ttl_ms = int(ttl * 1000)
        self.prefs_ttl_ms = int(prefs_ttl * 1000)
        self._swap_selection = kv.script(SWAP_SELECTION_LUA)
        self._swap_hand = kv.script(SWAP_HAND_LUA)

    @classmethod
    def of(cls, service: TableService) -> ChatStateStore:
        """The chat state next to a table service (its key-value API and prefix)."""
        return cls(service.kv, ttl=service.config.game_ttl)

    # ------------------------------------------------------------------ tables
    async def table(self, table_id: str) -> TableUi:
        raw = await self.kv.hgetall(self.keys.table(table_id))
        ui = TableUi()
        for key, val in raw.items():
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
                elif kind == "w":
                    ui.watchers[int(arg)] = int(val)
                elif kind == "fh":
                    ui.flood_hints[int(arg)] = int(val)
                elif kind == "st":
                    ui.started = int(val)
                elif kind == "pg":  # pg:<user>:<page> -> expires (ms)
                    user = int(arg.partition(":")[0])
                    ui.pages[user] = max(ui.pages.get(user, 0), int(val))
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
        watchers: Mapping[int, int] | None = None,
        flood_hints: Mapping[int, int] | None = None,
        started: int | None = None,
    ) -> None:
        """Set what is given (a selection of ``None`` is deleted); ``new_game``
        first forgets the hand messages, selections, table message and flood
        hints of the previous game.  One round trip."""
        key = self.keys.table(table_id)
        fields: dict[str, str] = {}
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
        for u, m in (watchers or {}).items():  # kept across games: they watch the match
            fields[f"w:{u}"] = str(m)
        for u, game_no in (flood_hints or {}).items():
            fields[f"fh:{u}"] = str(game_no)
        if started is not None:
            fields["st"] = str(started)
        if new_game:
            old = await self.table(table_id)
            stale = [f"h:{u}" for u in old.hands] + [f"s:{u}" for u in old.selections]
            stale += [f"fh:{u}" for u in old.flood_hints]
            if old.table_message is not None:
                stale.append("g")
            dels = stale + dels
        await self.kv.hupdate(key, set=fields, delete=dels, ttl_ms=self.ttl_ms)

    async def swap_selection(
        self,
        table_id: str,
        user: int,
        expected_rev: int,
        selection: Mapping[str, Any],
        request_id: str = "",
    ) -> SelectionSwap:
        """Store ``user``'s selection if the stored one is still at revision
        ``expected_rev`` and its recorded writes (``ap``, #38) hold no write of
        press ``request_id`` -- compare-and-set, one round trip.  Nothing
        changed when another write got there first (``MOVED``: a quick tap of
        another card, look again) or this press's own (``APPLIED``: a copy of it
        delivered at once, in this process or another)."""
        value = json.dumps(selection, separators=(",", ":"))
        args: list[str | int] = [f"s:{user}", expected_rev, value, self.ttl_ms, request_id]
        return SelectionSwap(int(await self._swap_selection([self.keys.table(table_id)], args)))

    async def swap_hand(
        self, table_id: str, user: int, new: int | None, expect: object = ANY_HAND
    ) -> tuple[bool, int | None]:
        """Make ``new`` his hand message (None: he has none) -- only while his hand
        is ``expect`` (an id or None), unless ``ANY_HAND`` -- by compare-and-set,
        one round trip (#28: the hand is placed the moment it went out, whichever
        process placed another meanwhile); (written, the hand it held)."""
        checked = expect is not ANY_HAND
        wanted = "" if expect is None or not checked else str(expect)
        args: list[str | int] = [
            f"h:{user}",
            "" if new is None else str(new),
            "1" if checked else "0",
            wanted,
            self.ttl_ms,
        ]
        raw = await self._swap_hand([self.keys.table(table_id)], args)
        written, held = int(raw[0]), _text(raw[1])
        return bool(written), int(held) if held.lstrip("-").isdigit() else None

    async def forget_table(self, table_id: str) -> None:
        await self.kv.delete(self.keys.table(table_id))

    # ------------------------------------------------------------------ users
    async def prefs(self, who: int) -> Prefs:
        d = await self.kv.hgetall(self.keys.prefs(who))
        return Prefs(
            lang=d.get("lang") or None,
            tg=d.get("tg") or None,
            name=d.get("name", ""),
            started=d.get("started") == "1",
            plays=d.get("plays") or None,
            play=d.get("play") or None,
        )

    async def many_prefs(self, ids: Iterable[int]) -> dict[int, Prefs]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        keys = [self.keys.prefs(i) for i in ids]
        fields = ("lang", "tg", "name", "started", "plays", "play")
        rows = await self.kv.hmget_many(keys, fields)
        out = {}
        for i, (lang, tg, name, started, plays, play) in zip(ids, rows, strict=True):
            out[i] = Prefs(
                lang=lang or None,
                tg=tg or None,
                name=name or "",
                started=started == "1",
                plays=plays or None,
                play=play or None,
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
        plays: str | None = None,
        play: str | None = None,
    ) -> None:
        key = self.keys.prefs(who)
        fields: dict[str, str] = {}
        if lang is not None:
            fields["lang"] = lang
        if tg is not None:
            fields["tg"] = tg
        if name is not None:
            fields["name"] = name
        if started is not None:
            fields["started"] = "1" if started else "0"
        if plays is not None:
            fields["plays"] = plays
        if play is not None:
            fields["play"] = play
        dels = ["lang"] if clear_lang else []
        await self.kv.hupdate(key, set=fields, delete=dels, ttl_ms=self.prefs_ttl_ms)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
