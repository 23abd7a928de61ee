"""The Mini App's live pages (#42): press -> other viewers' update (prints
figures, asserts nothing).

One bot process (``BotApp``: its Mini App, the real service, a throw-away
redis-server, the fake Bot API without limits) serves ``--tables`` tables of
4 human seats, each with 4 open pages (one per player, over WebSockets on
loopback, init data signed as Telegram signs it).  Each table's players move
from their pages, one move at a time, ``--pace`` seconds apart (0: as fast as
the answers come); for every move the time from sending it to each of the 3
other pages receiving the version it made is one sample.  Prints p50, p95 and
p99 of those, moves per second, CPU seconds per thousand page updates (the
one process: bot and clients), memory per open page and the Bot API calls
per move.  The pages run in a process of their own (the figures of CPU and
memory are the bot process's).

Bot API writes per move with pages open and closed (#42 point 6; one
process only): every player starts the bot (``/start``, handled by the bot
polling the fake), so each game sends its hand messages to the players'
private chats; the fake's writes (sends and edits) to those chats are
counted per move while the pages play, then once as the pages close (each
hand brought up to date), then per move of as many moves again made through
the same use case with no page open (the bot process plays them, at the
same pace).

``--fleet``: the same on 2 bot processes (``python -m telegram_bot`` in
webhook mode, :class:`harness.fleet.BotFleet`, each serving the Mini App on
its webhook's server) on a throw-away 3-master Redis Cluster (sharded
pub/sub); a table's pages alternate between the processes, so of a move's 3
other pages 1 or 2 are on the process that did not make it.  CPU and memory
are the two bot processes' together (``/proc``); ``--one-redis``: the same
2 processes on one redis-server (the cluster's share of the figure).

    python bench/miniapp.py [--tables 50] [--moves 30] [--pace 0] [--fleet [--one-redis]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
from aiohttp import web

from harness.fleet import BotFleet
from harness.local_cluster import start_cluster
from sandbox.fake_api import FakeTelegram, RateLimits
from sandbox.local_redis import LocalRedis, find_redis_server
from tables import TableService
from telegram_bot.app import BotApp
from telegram_bot.miniapp.auth import sign_init_data
from telegram_bot.miniapp.server import mount
from telegram_bot.publishing.changes import GameStarted
from telegram_bot.settings import Settings
from telegram_bot.usecases.press import PageMove
from telegram_bot.views.page import page_view

SEATS = 4
REFUSED: dict[str, int] = {}


class Page:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse, process: int = 0) -> None:
        self.ws = ws
        self.process = process  # the bot process it is connected to
        self.view: dict[str, Any] | None = None
        self.results: dict[str, dict[str, Any]] = {}
        self.changed = asyncio.Event()
        self.arrived: dict[int, float] = {}  # version -> when it arrived

    async def read(self) -> None:
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            if frame["t"] == "view":
                self.view = frame["view"]
                self.arrived.setdefault(frame["view"]["version"], time.perf_counter())
            elif frame["t"] == "result":
                self.results[frame["id"]] = frame
            self.changed.set()

    async def until(self, check: Any) -> Any:
        while not (value := check()):
            self.changed.clear()
            await self.changed.wait()
        return value


def init(token: str, user: int) -> str:
    person = {"id": user, "first_name": f"U{user}", "language_code": "en"}
    return sign_init_data(token, {"auth_date": int(time.time()), "user": person})


async def play_table(
    tid: str,
    pages: list[Page],
    moves: int,
    pace: float,
    rng: random.Random,
    out: list[tuple[float, bool]],
) -> int:
    made = 0
    if pace:  # the tables do not move in step: a human's pace varies
        await asyncio.sleep(rng.uniform(0, pace))
    for n in range(moves):
        mover = await asyncio.wait_for(_mover(pages), 30)
        if mover is None:
            break
        view = mover.view
        assert view is not None
        legal = view["game"]["legal"]
        action = rng.choice([a for a in legal if a[0] not in "KP"] or legal)
        rid = f"{tid[:8]}{n}"
        sent = time.perf_counter()
        await mover.ws.send_json(
            {"t": "move", "id": rid, "v": view["version"], "stamp": view["stamp"], "a": action}
        )
        result = await mover.until(lambda m=mover, rid=rid: m.results.get(rid))
        if "version" not in result:  # refused, or nothing made (a repeated tap)
            REFUSED[result["status"]] = REFUSED.get(result["status"], 0) + 1
            continue
        made += 1
        version = result["version"]
        others = [p for p in pages if p is not mover]
        await mover.until(  # his own page too: the next move is drawn on it
            lambda m=mover, version=version: m.view is not None and m.view["version"] >= version
        )
        for p in others:
            await p.until(
                lambda p=p, version=version: p.view is not None and p.view["version"] >= version
            )
            got = min(
                (t for v, t in p.arrived.items() if v >= version), default=time.perf_counter()
            )
            out.append((got - sent, p.process != mover.process))  # crossed processes?
        if pace:
            await asyncio.sleep(pace * rng.uniform(0.5, 1.5))
    return made


async def _mover(pages: list[Page]) -> Page | None:
    while True:
        for p in pages:
            v = p.view
            if v is not None and v["status"] != "playing":
                return None
            if v is not None and v["game"] and v["game"]["legal"]:
                return p
        waits = [asyncio.ensure_future(p.changed.wait()) for p in pages]
        _done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for w in pending:
            w.cancel()
        for p in pages:
            p.changed.clear()


def rss_kb() -> int:
    """The process's resident memory now (its peak where /proc is missing):
    the players' /start and the hands sent before the pages open raise the
    peak, so the peak would hide the pages' own growth."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def run(tables: int, moves: int, pace: float) -> None:
    with LocalRedis() as local:
        redis_url = local.url
        async with FakeTelegram(limits=RateLimits.off()) as fake:
            settings = Settings(
                bot_token=fake.token,
                redis_url=redis_url,
                redis_prefix="bench:",
                telegram_api_url=fake.url,
                miniapp_url="https://miniapp.test/app/",
                miniapp_moves=1000,
                default_timer=0,
                set_commands=False,
                ai_workers=0,
            )
            app = BotApp(settings)
            await app.setup()
            app.start_background()
            # the players' /start: the bot polls the fake (their hands need it)
            polling = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
            assert app.page_server is not None
            root = web.Application()
            mount(root, "/app", app.page_server.web_app())
            runner = web.AppRunner(root)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            host, port = runner.addresses[0][:2]
            try:
                await _measure(
                    Measured(
                        app.svc, [f"ws://{host}:{port}/app/live"], time.process_time, rss_kb, app
                    ),
                    fake,
                    tables,
                    moves,
                    pace,
                )
            finally:
                await runner.cleanup()
                await app.stop_polling()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling
                await app.aclose()


FLEET_ENV = {
    "MINIAPP_URL": "https://miniapp.test/app/",
    "MINIAPP_MOVES": "1000",
    "AI_WORKERS": "0",
    "FLOOD_LIMITER": "false",
}


async def run_fleet(tables: int, moves: int, pace: float, *, one_redis: bool = False) -> None:
    """2 bot processes on a 3-master cluster (``one_redis``: on one redis-server,
    to tell the cluster's part): the pages of each table alternate between them."""
    binary = find_redis_server()
    assert binary, "no redis-server"
    with tempfile.TemporaryDirectory(prefix="bench-miniapp-") as tmp, contextlib.ExitStack() as up:
        if one_redis:
            url, where = up.enter_context(LocalRedis(binary)).url, "one redis-server"
        else:
            cluster = start_cluster(binary, Path(tmp) / "cluster")
            up.callback(cluster.stop)
            url = "redis+cluster://" + cluster.url.split("://", 1)[1]
            where = "a 3-master cluster"
        async with (
            FakeTelegram(limits=RateLimits.off()) as fake,
            BotFleet(fake, url, "bench:", count=2, env=FLEET_ENV) as bots,
        ):
            pids = [p.pid for p in bots.procs]
            urls = [f"ws://127.0.0.1:{port}/app/live" for port in bots.ports]
            print(f"2 bot processes (pids {pids}) on {where}")
            await _measure(
                Measured(bots.svc, urls, lambda: cpu_of(pids), lambda: rss_of(pids)),
                fake,
                tables,
                moves,
                pace,
            )


def cpu_of(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` used so far."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_of(pids: list[int]) -> int:
    """The processes' resident memory now, kB together."""
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


class Measured:
    """What a run measures: the service (to set the tables up), the bot
    processes' live channels (a table's pages go to them in turn), their CPU
    seconds so far and their memory (kB); ``app``: the one bot process, in
    this process (its players' hands counted; None: a fleet)."""

    def __init__(
        self,
        svc: TableService,
        urls: list[str],
        cpu: Callable[[], float],
        rss: Callable[[], int],
        app: BotApp | None = None,
    ) -> None:
        self.svc, self.urls, self.cpu, self.rss = svc, urls, cpu, rss
        self.app = app


async def _tables(
    bot: Measured, fake: FakeTelegram, tables: int
) -> tuple[list[tuple[str, list[int]]], set[int]]:
    """The tables, started; with the bot in this process its players first
    start the bot, and each game sends its hands (the players' chats)."""
    svc, app = bot.svc, bot.app
    ids: list[tuple[str, list[int]]] = []
    players = []
    for t in range(tables):
        sims = [fake.add_user(f"T{t}S{s}", language_code="en") for s in range(SEATS)]
        if app is not None:
            for sim in sims:
                sim.start()  # he starts the bot: his hand may go to his private chat
        players += sims
        ids.append(("", [sim.id for sim in sims]))
    if app is not None:
        for sim in players:  # the bot answered every /start
            await sim.wait_message(timeout=120)
    for n, (_tid, users) in enumerate(ids):
        tid = (await svc.lobbies.create_lobby(users[0], "U0", variant="shchelkovsky")).table_id
        for s, u in enumerate(users[1:], 1):
            await svc.lobbies.join(tid, u, f"U{s}")
        await svc.games.start(tid, users[0])
        if app is not None:
            assert app.publisher is not None
            await app.publisher.show(GameStarted(tid))  # as the bot starts a game: the hands
        ids[n] = (tid, users)
    chats = {sim.chat.id for sim in players}
    if app is not None:
        await settled(app, fake)
    return ids, chats


async def _measure(bot: Measured, fake: FakeTelegram, tables: int, moves: int, pace: float) -> None:
    app = bot.app
    ids, chats = await _tables(bot, fake, tables)
    hands_before = hand_writes(fake, chats)
    rss_before = bot.rss()
    calls_before = fake.stats.total_calls
    # the pages live in a process of their own: the bot's CPU is the bot's
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    clients = ctx.Process(
        target=pages_process, args=(child, bot.urls, fake.token, ids, moves, pace), daemon=True
    )
    clients.start()
    opened = await asyncio.to_thread(parent.recv)  # the pages are open
    rss_open = bot.rss()
    cpu_before = bot.cpu()
    parent.send("go")
    samples, made, wall, refused = await asyncio.to_thread(parent.recv)
    cpu = bot.cpu() - cpu_before
    calls = fake.stats.total_calls - calls_before
    if app is not None:
        await settled(app, fake)
    hands_open = hand_writes(fake, chats) - hands_before
    parent.send("close")
    await asyncio.to_thread(parent.recv)  # the pages closed
    if app is not None:
        await settled(app, fake)
    hands_closing = hand_writes(fake, chats) - hands_before - hands_open
    await asyncio.to_thread(clients.join, 30)
    closed: list[int] = []
    hands_closed = sends_closed = 0
    if app is not None:  # as many moves again, with no page open: the same use case
        closed, hands_closed, sends_closed = await _closed_moves(app, fake, chats, ids, moves, pace)
    total = sum(made)
    ms = sorted(x * 1000 for x, _crossed in samples)
    q = statistics.quantiles(ms, n=100) if len(ms) > 1 else [ms[0]] * 99
    print(f"tables {tables} x {SEATS} pages, pace {pace} s: {total} moves in {wall:.1f} s")
    print(
        f"  move -> other pages' update: p50 {q[49]:.1f} ms, p95 {q[94]:.1f} ms, "
        f"p99 {q[98]:.1f} ms ({len(ms)} samples)"
    )
    if len(bot.urls) > 1:
        for crossed, where in ((False, "on the mover's process"), (True, "on the other process")):
            part = sorted(x * 1000 for x, c in samples if c == crossed)
            if len(part) > 1:
                pq = statistics.quantiles(part, n=100)
                print(
                    f"    pages {where}: p50 {pq[49]:.1f} ms, p95 {pq[94]:.1f} ms, "
                    f"p99 {pq[98]:.1f} ms ({len(part)} samples)"
                )
    updates = len(ms) + total  # the others' and the mover's own
    per_k = cpu / max(updates, 1) * 1000 * 1000
    who = "bot process's" if len(bot.urls) == 1 else f"{len(bot.urls)} bot processes'"
    print(f"  the {who} CPU: {per_k:.0f} ms per 1000 page updates ({cpu:.1f} s)")
    growth = (rss_open - rss_before) / max(opened, 1)
    print(f"  the {who} RSS growth with the pages open: {growth:.1f} kB per page")
    print(f"  moves refused: {refused or 'none'}")
    print(f"  Bot API calls per move (pages open): {calls / max(total, 1):.2f}")
    if app is None:
        return
    print(
        f"  Bot API writes to the players' hands per move: pages open "
        f"{hands_open / max(total, 1):.2f} ({hands_open} in {total} moves); "
        f"pages closed {hands_closed / max(sum(closed), 1):.2f} "
        f"({hands_closed} in {sum(closed)} moves, {sends_closed} of them sends)"
    )
    print(
        f"  as the pages closed: {hands_closing} writes for {opened} pages "
        f"({hands_closing / max(opened, 1):.2f} a page: each hand brought up to date once)"
    )
    errors = dict(fake.stats.errors)
    print(f"  the fake's error answers: {errors or 'none'} {fake.stats.error_texts[:3]}")


async def _closed_moves(
    app: BotApp,
    fake: FakeTelegram,
    chats: set[int],
    ids: list[tuple[str, list[int]]],
    moves: int,
    pace: float,
) -> tuple[list[int], int, int]:
    """``moves`` moves a table with no page open: the moves made, the writes
    to the players' chats and how many of them were sends."""
    before = hand_writes(fake, chats)
    sends_before = hand_writes(fake, chats, "send")
    rng = random.Random(43)
    closed = await asyncio.gather(
        *(play_closed(app, tid, users, moves, pace, rng) for tid, users in ids)
    )
    await settled(app, fake)
    writes = hand_writes(fake, chats) - before
    return list(closed), writes, hand_writes(fake, chats, "send") - sends_before


def hand_writes(fake: FakeTelegram, chats: set[int], kind: str | None = None) -> int:
    """The fake's writes (sends, edits; or of one ``kind``) to the players'
    private chats so far."""
    return sum(1 for e in fake.world.outbox if e["chat_id"] in chats and kind in (None, e["kind"]))


async def settled(app: BotApp, fake: FakeTelegram) -> None:
    """Until the renders asked for so far went out: the pending edits flushed
    and no call reached the fake for 3 s (the flood limiter's backlog, the
    closing pages' draws still asked)."""
    seen = -1
    while (now := fake.stats.total_calls) != seen:
        seen = now
        await app.delivery.flush()
        await asyncio.sleep(3.0)


async def play_closed(
    app: BotApp, tid: str, users: list[int], moves: int, pace: float, rng: random.Random
) -> int:
    """``moves`` moves of one table with no page open, made in the bot process
    through the page's use case and shown as a page's move is."""
    made = 0
    cases, publisher = app.cases, app.publisher
    assert cases is not None
    assert publisher is not None
    if pace:
        await asyncio.sleep(rng.uniform(0, pace))
    for n in range(moves):
        loaded = await cases.page.load(tid)
        if loaded is None or loaded.table.status != "playing":
            break
        views = [(u, page_view(loaded, u)) for u in users]
        movers = [(u, v) for u, v in views if v["game"] and v["game"].get("legal")]
        if not movers:
            break
        user, view = movers[0]
        legal = view["game"]["legal"]
        action = rng.choice([a for a in legal if a[0] not in "KP"] or legal)
        move = PageMove(user, tid, view["version"], view["stamp"], action, f"c{tid[:8]}{n}")
        outcome = await cases.page.move(move)
        if outcome.version is None:
            continue
        made += 1
        await publisher.show(outcome.change)
        if pace:
            await asyncio.sleep(pace * rng.uniform(0.5, 1.5))
    return made


def pages_process(
    conn: Any,
    urls: list[str],
    token: str,
    ids: list[tuple[str, list[int]]],
    moves: int,
    pace: float,
) -> None:
    """The child process: every page, then the moves."""
    asyncio.run(_pages(conn, urls, token, ids, moves, pace))


async def _pages(
    conn: Any,
    urls: list[str],
    token: str,
    ids: list[tuple[str, list[int]]],
    moves: int,
    pace: float,
) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        all_pages: list[list[Page]] = []
        readers = []
        for t, (tid, users) in enumerate(ids):
            pages = []
            for s, u in enumerate(users):
                process = (t + s) % len(urls)  # the processes in turn
                ws = await http.ws_connect(urls[process])
                page = Page(ws, process)
                readers.append(asyncio.create_task(page.read()))
                await ws.send_json({"t": "hello", "init": init(token, u), "table": tid})
                pages.append(page)
            all_pages.append(pages)
        for pages in all_pages:
            for p in pages:
                await p.until(lambda p=p: p.view)
        conn.send(sum(len(p) for p in all_pages))
        await asyncio.to_thread(conn.recv)  # go
        start = time.perf_counter()
        samples: list[tuple[float, bool]] = []
        rng = random.Random(42)
        made = await asyncio.gather(
            *(
                play_table(tid, pages, moves, pace, rng, samples)
                for (tid, _u), pages in zip(ids, all_pages, strict=True)
            )
        )
        wall = time.perf_counter() - start
        conn.send((samples, made, wall, REFUSED))
        await asyncio.to_thread(conn.recv)  # close: the bot counted the moves' writes
        for table_pages in all_pages:
            for p in table_pages:
                await p.ws.close()
        for reader in readers:
            with contextlib.suppress(Exception):
                await reader
    conn.send("closed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--moves", type=int, default=30, help="moves per table")
    parser.add_argument("--pace", type=float, default=0.0, help="seconds between a table's moves")
    parser.add_argument(
        "--fleet", action="store_true", help="2 bot processes on a 3-master cluster"
    )
    parser.add_argument(
        "--one-redis", action="store_true", help="--fleet: on one redis-server, not a cluster"
    )
    args = parser.parse_args()
    if args.fleet:
        asyncio.run(run_fleet(args.tables, args.moves, args.pace, one_redis=args.one_redis))
    else:
        asyncio.run(run(args.tables, args.moves, args.pace))


if __name__ == "__main__":
    main()
