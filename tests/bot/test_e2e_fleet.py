"""Real bot processes behind a webhook proxy (issue #12): two or three
``python -m telegram_bot`` subprocesses in webhook mode, the fake Bot API with
Telegram's flood limits on, one Redis (or the 3-master cluster), the proxy
passing each update to one process in turn -- or every update to every
process. Three group games of three players are played to the end, and:

* every final message shows the final state (each hand and the group table:
  the game's result);
* no edit of a message ever showed an older table version after a newer one
  (hands: the version their buttons carry; the group table: which position of
  the game, replayed from its event log, renders that exact text -- with the
  turn's deadline line a rated game always has (#38), its time one of this
  game's deadlines);
* nothing was applied twice: the log holds exactly one move per move press
  the players' Telegram saw answered;
* no 429 from the fake Bot API.

The proxy itself (fast lane) is checked with plain aiohttp processes."""

from __future__ import annotations

import asyncio
import itertools
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from engine import Action, new_game, public_view
from harness.fleet import BotFleet, open_group_game
from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.fake_api.text import parse_text
from sandbox.webhook_proxy import SECRET_HEADER, WebhookProxy
from tables import MOVE_KINDS, LiveEvent, Table, TableService
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.views.board import rating_labels, seat_names
from telegram_bot.views.fair import commitment_lines, commitment_tag
from telegram_bot.views.i18n import Translator
from telegram_bot.views.table import render_game_over, render_table
from tests.bot.e2e_kit import SAFETY, TELEGRAM_SCALE, Harness, is_over, play_out, settle

GAMES, PLAYERS = 3, 3
OVER = 10**9  # the position of the result: after every move
SOME_DEADLINE = datetime(2000, 1, 1, tzinfo=UTC)
"""Where the oracle's texts show a turn's deadline (#38: a rated game always has
one); :func:`shown_deadlines` puts it in place of the time a table showed."""
DEADLINE_TIME = re.compile(r"(⏱ the move ends )(\d\d):(\d\d):(\d\d)( UTC)")


# ------------------------------------------------------------------ the proxy
@dataclass
class Recorder:
    """A stand-in bot process: records every POST, answers ``status``."""

    status: int = 200
    seen: list[tuple[dict[str, Any], str | None]] | None = None

    async def handle(self, request: web.Request) -> web.Response:
        assert self.seen is not None
        self.seen.append((await request.json(), request.headers.get(SECRET_HEADER)))
        return web.json_response({}, status=self.status)


async def serve(recorder: Recorder) -> tuple[web.AppRunner, str]:
    recorder.seen = []
    app = web.Application()
    app.router.add_post("/telegram", recorder.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/telegram"


@pytest.mark.parametrize("mode", ["round_robin", "broadcast"])
async def test_the_proxy_passes_updates_on_with_the_secret(mode: str) -> None:
    recorders = [Recorder(), Recorder(), Recorder(status=500)]
    served = [await serve(r) for r in recorders]
    try:
        targets = [url for _r, url in served[:2]]
        async with WebhookProxy(targets, mode=mode) as proxy, aiohttp.ClientSession() as session:
            for n in range(6):
                headers = {SECRET_HEADER: "s3cret"}
                async with session.post(proxy.url, json={"update_id": n}, headers=headers) as r:
                    assert r.status == 200
        ids = [[u["update_id"] for u, _s in r.seen or []] for r in recorders[:2]]
        if mode == "round_robin":
            assert ids == [[0, 2, 4], [1, 3, 5]]
        else:
            assert ids == [list(range(6))] * 2
        assert {s for r in recorders[:2] for _u, s in r.seen or []} == {"s3cret"}
        # a process that fails (or is down) makes the proxy answer 502: Telegram redelivers
        down = [served[2][1], "http://127.0.0.1:9/x"]
        async with WebhookProxy(down, mode=mode) as proxy, aiohttp.ClientSession() as session:
            for n in range(2):
                async with session.post(proxy.url, json={"update_id": n}) as r:
                    assert r.status == 502
    finally:
        for runner, _url in served:
            await runner.cleanup()


# ------------------------------------------------------------------ the fleet
@dataclass
class FleetHarness(Harness):
    """:class:`Harness` whose table service and chat state are the fleet's
    (the bot runs in the fleet's processes), so the kit's players can play."""

    fleet: BotFleet | None = None

    @property
    def svc(self) -> TableService:
        assert self.fleet is not None
        return self.fleet.svc

    @property
    def ui(self) -> ChatStateStore:
        assert self.fleet is not None
        return self.fleet.ui


def edits_of(fake: FakeTelegram, chat: int, message_id: int) -> list[dict[str, Any]]:
    """What the message showed, send and every edit, in order."""
    return [
        e
        for e in fake.world.outbox
        if e["chat_id"] == chat and e["message_id"] == message_id and e["text"] is not None
    ]


def hand_version(entry: dict[str, Any]) -> int | None:
    """The table version a hand message's buttons were drawn at (OVER: the result)."""
    if "Game over" in entry["text"]:
        return OVER
    rows = (entry["reply_markup"] or {}).get("inline_keyboard", [])
    versions = [
        cb.version for row in rows for b in row if (cb := parse_game(b.get("callback_data")))
    ]
    return max(versions, default=None)


def shown_deadlines(text: str) -> tuple[str, list[int]]:
    """The text with each turn deadline's time replaced by :data:`SOME_DEADLINE`'s,
    and those times (seconds since midnight UTC)."""
    times: list[int] = []

    def put(m: re.Match[str]) -> str:
        h, mi, se = (int(m.group(i)) for i in (2, 3, 4))
        times.append(h * 3600 + mi * 60 + se)
        return m.group(1) + SOME_DEADLINE.strftime("%H:%M:%S") + m.group(5)

    return DEADLINE_TIME.sub(put, text), times


def within(second_of_day: int, low: float, high: float) -> bool:
    """A time of day shown (UTC) is some moment between ``low`` and ``high``."""
    day = int(low) // 86400 * 86400
    return any(low - 1 <= day + k * 86400 + second_of_day <= high + 1 for k in (0, 1))


async def positions(h: FleetHarness, tid: str) -> tuple[dict[str, list[int]], list[LiveEvent]]:
    """Per text the group table can show, the game positions (moves applied)
    that render it -- the game replayed from its seed and log; and the human
    moves (``act``) of the log.  A game with a turn timer (every rated game,
    #38) shows its deadline at each position, since it waits for a human's
    move there: the texts show it at :data:`SOME_DEADLINE`."""
    table, _state, _v = await h.svc.tables.get(tid)
    events = [e for e in await h.svc.admin.event_page(tid, 0, 100_000) if e.kind in MOVE_KINDS]
    state = new_game(table.variant, len(table.seats), table.seed, table.options, None)
    names, bot = seat_names(table, "en"), h.fake.world.bot.username
    ratings = rating_labels(table)  # each one's rating, as read at the start (#25)
    settled = await h.svc.ratings.settlement(tid, table.game_no)
    en = Translator("en")
    texts: dict[str, list[int]] = {}
    for n in range(len(events) + 1):
        if n:
            state.apply(Action.from_text(events[n - 1].seat, events[n - 1].text))
        if state.over:
            loaded = await h.svc.tables.load(tid)  # a draw's players share a place (#38)
            places = loaded.result.places if loaded.result is not None else ()
            html, _m = render_game_over(
                public_view(state),
                locale="en",
                names=names,
                code=tid,
                settlement=settled,
                places=places,
            )
            html += "\n\n" + commitment_lines(table, en)  # the result's, whole (#41)
            texts.setdefault(parse_text(html, "HTML")[0], []).append(OVER)
            break
        html, _m = render_table(
            public_view(state),
            locale="en",
            names=names,
            bot_username=bot,
            ratings=ratings,
            deadline=SOME_DEADLINE if table.timer else None,
        )
        # the deal's commitment (issue #16): whole in the first message, a tag after (#41)
        for shown in (commitment_lines, commitment_tag) if n == 0 else (commitment_tag,):
            text = parse_text(html + "\n\n" + shown(table, en), "HTML")[0]
            texts.setdefault(text, []).append(n)
    assert state.over, "the log does not replay to the game's end"
    return texts, [e for e in events if e.kind == "act"]


def went_back(shown: list[list[int]]) -> list[int]:
    """Indexes of the edits that showed an older position than one shown before
    (each edit: the positions its text may be)."""
    bound, back = -1, []
    for i, options in enumerate(shown):
        later = [p for p in options if p >= bound]
        if later:
            bound = min(later)
        else:
            back.append(i)
    return back


@dataclass
class MoveCount:
    """After each press of a game (presses are made one at a time, and a move
    press is answered once written): the presser and the human moves logged."""

    h: FleetHarness
    tid: str
    after: list[tuple[int, list[LiveEvent]]] = field(default_factory=list)

    async def moves(self) -> list[LiveEvent]:
        return [
            e for e in await self.h.svc.admin.event_page(self.tid, 0, 100_000) if e.kind == "act"
        ]

    async def __call__(self, user: SimUser) -> None:
        self.after.append((user.id, await self.moves()))

    async def twice(self, table: Table) -> list[str]:
        """Presses followed by more than their own move: one press applied
        twice, or an update applied again later (in whichever press follows)."""
        wrong, before = [], 0
        for n, (user, moves) in enumerate(self.after):
            added = moves[before:]
            if len(added) > 1 or any(table.seats[e.seat].user != user for e in added):
                wrong.append(f"press {n} by {user}: {added}")
            before = len(moves)
        if len(await self.moves()) != before:
            wrong.append(f"moves after the last press: {(await self.moves())[before:]}")
        return wrong


class WentBackwards(AssertionError):
    """A message showed an older table version after a newer one."""


async def check_game(
    h: FleetHarness,
    tid: str,
    humans: list[SimUser],
    group: int,
    count: MoveCount,
    played: tuple[float, float],
) -> list[tuple[object, ...]]:
    """Assert the final state and applied-once; the edits that went backwards
    (who, the version shown, the older one shown after it).  ``played``: the
    wall clock before the games opened and after they ended -- each deadline
    the table showed is a move's moment between them plus the turn timer."""
    fake = h.fake
    ui = await h.ui.table(tid)
    assert ui.table_message is not None
    table_msg = fake.world.chats[group].messages[ui.table_message]
    await fake.world.wait_for(lambda: "Game over" in (table_msg.text or "") or None, SAFETY)
    for u in humans:  # the final state everywhere
        assert is_over(await h.hand_message(u, tid)), u.user.first_name
    assert is_over(table_msg)
    back: list[tuple[object, ...]] = []  # never an older version after a newer one
    for u in humans:
        versions = [hand_version(e) for e in edits_of(fake, u.id, ui.hands[u.id])]
        shown = [v for v in versions if v is not None]
        assert shown[-1] == OVER
        for v0, v1 in itertools.pairwise(shown):
            if v1 < v0:
                back.append((u.user.first_name, v0, v1))
    texts, acts = await positions(h, tid)
    entries = edits_of(fake, group, ui.table_message)
    seen = [shown_deadlines(e["text"]) for e in entries]
    unknown = [e["text"] for e, (text, _t) in zip(entries, seen, strict=True) if text not in texts]
    assert not unknown, f"the table showed a text no position renders: {unknown[:1]}"
    table, _state, _v = await h.svc.tables.get(tid)
    assert table.rated_now, table
    assert table.timer, table  # #38: a rated game has a turn timer
    low, high = (at + table.timer for at in played)
    late = [t for _text, times in seen for t in times if not within(t, low, high)]
    assert not late, f"deadlines no move of this game set (s of the day): {late[:3]}"
    shown_at = [texts[text] for text, _t in seen]
    back += [("table", shown_at[i - 1], shown_at[i]) for i in went_back(shown_at)]
    assert shown_at[-1] == [OVER]
    # applied once: each press made at most its own move, nothing came later
    assert acts == await count.moves()
    assert acts
    assert not await count.twice(table)
    # #25: the game moved each one's rating once, whichever process ended it
    s = await h.svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted, s
    for u in humans:
        mine = await h.svc.ratings.of(u.id)
        assert mine.ratings[table.variant].games == 1, mine
        assert mine.recent == 1, mine
    return back


FAST = {
    "SOON_DELAY": "0.3",
    "LATER_DELAY": "1",
    "TABLE_DELAY": "2",
    "TELEGRAM_TIME_SCALE": str(TELEGRAM_SCALE),
    "RATED_AFTER_GAMES": "0",  # every account established, as in the harness (#38)
    "RATED_AFTER_DAYS": "0",
    "RATED_DIVERSITY_OPPONENTS": "0",  # nor the opponent-diversity guard
}
"""Shorter coalescing than the defaults: more edits race (and a shorter test);
Telegram's time :data:`TELEGRAM_SCALE` times as fast, as the fake's (#37)."""
FLEETS = {  # (processes, proxy mode, Redis)
    "2_processes_round_robin": (2, "round_robin", "redis_url"),
    "3_processes_round_robin_on_the_cluster": (3, "round_robin", "redis_cluster_url"),
    "2_processes_every_update_to_both": (2, "broadcast", "redis_url"),
    # #28: one claim key per update, never split over two cluster nodes
    "2_processes_every_update_to_both_on_the_cluster": (2, "broadcast", "redis_cluster_url"),
}


@pytest.fixture(params=list(FLEETS))
async def fleet_harness(
    request: pytest.FixtureRequest, redis_prefix: str
) -> AsyncIterator[FleetHarness]:
    count, mode, redis_fixture = FLEETS[request.param]
    url = request.getfixturevalue(redis_fixture)
    async with FakeTelegram(limits=RateLimits(), time_scale=TELEGRAM_SCALE) as fake:
        async with BotFleet(fake, url, redis_prefix, count=count, mode=mode, env=FAST) as fleet:
            yield FleetHarness(fake, url, redis_prefix, fleet=fleet)
            codes = await fleet.stop()
            assert codes == [0] * count, fleet.log_tail()
        assert fake.stats.retry_after == 0, fake.stats.refusals


@pytest.mark.slow
async def test_group_games_on_several_processes(fleet_harness: FleetHarness) -> None:
    h = fleet_harness
    fake, fleet = h.fake, h.fleet
    assert fleet is not None
    seed = random.randrange(10**6)
    print(f"seed {seed}")
    humans = [
        [fake.add_user(f"G{g}P{i}", language_code="en") for i in range(PLAYERS)]
        for g in range(GAMES)
    ]
    start = time.time()
    opened = await asyncio.gather(
        *(open_group_game(fleet, players, title=f"Group {g}") for g, players in enumerate(humans))
    )
    counts = [MoveCount(h, tid) for tid, _group in opened]
    await asyncio.gather(
        *(
            play_out(h, tid, players, rng=random.Random(seed + g), after_press=count)
            for g, ((tid, _group), players, count) in enumerate(
                zip(opened, humans, counts, strict=True)
            )
        )
    )
    await settle(h, quiet=1.5)  # the coalesced edits have gone out (15 Telegram s)
    played = (start, time.time())
    back: list[tuple[object, ...]] = []
    for (tid, group), players, count in zip(opened, humans, counts, strict=True):
        back += await check_game(h, tid, players, group.id, count, played)
    forwarded = [fleet.proxy.forwarded[t] for t in fleet.proxy.targets]
    if fleet.proxy.mode == "broadcast":  # every process took every update
        assert len(set(forwarded)) == 1, forwarded
    assert min(forwarded) > 0, forwarded
    assert fake.stats.retry_after == 0, fake.stats.refusals
    assert not fake.stats.errors, fake.stats.error_texts
    if back:  # last: every other check above holds
        raise WentBackwards(f"{len(back)} edits showed an older version: {back[:3]}")
