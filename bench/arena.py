"""Benchmark of an arena (#27) through the fake Bot API (Telegram's flood limits
ON, real clock) and a throw-away redis-server: ``--players`` members of one
group join an arena of ``--seats`` players a table by pressing *Join* on its
message; each plays every game the arena seats him at, pressing random useful
buttons of his hand message in his private chat (``--think`` seconds before
each press), until the arena's ``--minutes`` are over and its last games are
finished.

The bot runs as it does in production: ``--processes N`` (default 1) real bot
processes (``python -m telegram_bot`` in webhook mode behind
:mod:`sandbox.webhook_proxy`, :class:`sandbox.fleet.BotFleet`) on the one
Redis, their timers -- the arena's wakes, its games' turn timers -- split by
the shards' leases.  Only the fake Bot API and the simulated players run in
this process: with all of it in one event loop (``--inline``) 200 players
saturate the loop, and the bot's Redis health PING times out, its flood limiter
falls back to in-process windows and the fake answers 429s -- artifacts of the
harness, not of the product.

The arena is set up as a group admin does it: the owner sends ``/arena`` in the
group, picks the game, the seats and the length on the set-up message and
presses *Announce*, so the bot posts the arena's message.  The set-up offers
30, 45, 60 or 90 minutes and the service takes 10 to 180: any other
``--minutes`` (a short smoke run) is set by the bench afterwards, one write of
the arena's end through the table service (the same CAS write the bot uses).
Then every player presses *Join* on that message.

Printed:

* pairing delay: from a game's end to its players' next table (p50, p95, max,
  how many), both moments as the service clock (in the bot processes, ms)
  recorded them -- the game's result (``at`` in the arena's games list) and the
  table's pairing (``at`` of its entry in the arena's ``playing``, written in
  the wake that makes the table, just before making it); the wait for a partner
  included.  The bench reads the arena record every 0.5 s and keeps each
  pairing's own ``at`` the first time it sees it (a game lasts far longer than
  0.5 s: none is missed), so its polling adds nothing to the figure;
* the group's writes (the bot's sends and edits in it: the arena's message, the
  tables' messages, the podium) per minute, seen in the fake: mean and the
  busiest minute, against Telegram's 20 a minute in a group;
* Redis round trips of an arena's wake (repair, pairing, tick) and of making one
  table (lobby, joins, start), from the service's own count -- only with
  ``--inline`` (the bot in this process, hooked): a bot process is out of the
  bench's reach, and a wake's or a table's round trips do not depend on how
  many run at once, so measure them with ``--inline`` at a small size
  (``--inline --players 12 --minutes 1``);
* the 429s the fake answered (any chat), games played, presses; with bot
  processes, the warnings and errors in their logs.

``--think`` is a human's pace, 2-6 s before each press by default: a person
takes seconds to look at his cards and pick one; 0.5-2 s for 200 players is a
load test of the harness, not of people (set it lower for that on purpose).

No asserts: figures.

    python bench/arena.py [--players 200] [--seats 2] [--minutes 10] [--think 2,6]
                          [--processes 1] [--inline] [--seed 27] [--stop-after SECONDS]

``--inline``: the old single-process mode -- ``--processes`` BotApps polling
the fake in this event loop, hooked for the round trips.  ``--stop-after``:
cancel the arena after that many seconds (a quick look; the games being played
are left unfinished).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bot import Figures, UiSource, player
from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from sandbox.fleet import BotFleet
from sandbox.local_redis import LocalRedis
from tables import LiveError, TableService
from tables.arena_rules import FINISHED, Arena
from tables.arena_runner import Woken
from telegram_bot.app import BotApp
from telegram_bot.settings import Settings
from telegram_bot.views.arena import MINUTES_CHOICES, SEATS_CHOICES, Setup

PREFIX = "bench-arena:"
POLL = 0.5
"""Seconds between two reads of the arena record (its new pairings, its end)."""
SAFETY = 120.0
"""Seconds to wait for the bot's answer to a step of the set-up (a hung run)."""
LOG_LINE = re.compile(r" (WARNING|ERROR|CRITICAL) (\S+): (.*)")


@dataclass
class Bots:
    """The bot as the bench sees it: a table service and chat-state store on its
    Redis and, with bot processes, what they logged (filled at their stop)."""

    svc: TableService
    ui: UiSource
    logs: list[str] = field(default_factory=list)
    codes: list[int | None] = field(default_factory=list)


class Meter:
    """What the bench counts: the group's writes (the fake, in this process), the
    arena's pairings (its record, polled), round trips (hooks; ``--inline``)."""

    def __init__(self) -> None:
        self.group = 0
        self.group_writes: Counter[int] = Counter()  # minute -> writes in the group
        self.seated: dict[int, list[int]] = {}  # user -> the times (ms) he was seated
        self.pairings: dict[str, int] = {}  # table -> its pairing's time (ms)
        self.inbox: dict[int, asyncio.Queue[str]] = {}  # user -> his new tables
        self.wake_trips: list[float] = []
        self.table_trips: list[float] = []

    def watch_fake(self, fake: FakeTelegram) -> None:
        world = fake.world
        record = world.record_outgoing

        def on_record(message: Message, kind: str) -> None:
            record(message, kind)
            if message.chat_id == self.group and message.ephemeral_message_id is None:
                self.group_writes[int(time.monotonic() // 60)] += 1

        world.record_outgoing = on_record  # type: ignore[method-assign]

    def watch_app(self, app: BotApp) -> None:
        """``--inline``: the round trips of each wake and of each table made."""
        runner = app.svc.timers.arenas
        assert runner is not None
        store = app.svc.store
        wake = runner.wake
        make = runner._make

        async def on_wake(arena_id: str) -> Woken:
            before = store.round_trips
            woken = await wake(arena_id)
            self.wake_trips.append(store.round_trips - before)
            return woken

        async def on_make(*args: Any, **kwargs: Any) -> Any:
            before = store.round_trips
            try:
                return await make(*args, **kwargs)
            finally:
                self.table_trips.append(store.round_trips - before)

        runner.wake = on_wake  # type: ignore[method-assign]
        runner._make = on_make  # type: ignore[method-assign]

    def seen(self, arena: Arena) -> None:
        """The pairings of ``arena`` not seen before: their own time, and a word
        to their players."""
        for p in arena.playing:
            if p.table in self.pairings:
                continue
            self.pairings[p.table] = p.at
            for u in p.users:
                self.seated.setdefault(u, []).append(p.at)
                if (inbox := self.inbox.get(u)) is not None:
                    inbox.put_nowait(p.table)

    async def watch_arena(self, svc: TableService, arena_id: str, stop_after: float) -> Arena:
        """Read the arena every ``POLL`` s until it is over (cancelled after
        ``stop_after`` s if given): the arena as it ended."""
        t0 = time.monotonic()
        cancelled = False
        while True:
            arena = await svc.arenas.get(arena_id)
            self.seen(arena)
            if arena.over:
                return arena
            if stop_after and not cancelled and time.monotonic() - t0 > stop_after:
                await svc.arenas.cancel(arena_id, "bench --stop-after")
                cancelled = True
            await asyncio.sleep(POLL)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def made(svc: TableService, user: int, table_id: str, inbox: asyncio.Queue[str]) -> bool:
    """Until the table the arena seated him at exists with him at it (False: it
    never appeared, or a newer one came)."""
    deadline = time.monotonic() + SAFETY
    while time.monotonic() < deadline and inbox.empty():
        table = await svc.tables.where(user)
        if table is not None and table.id == table_id:
            return True
        await asyncio.sleep(0.2)
    return False


async def play_arena(
    bots: Bots,
    fake: FakeTelegram,
    user: SimUser,
    inbox: asyncio.Queue[str],
    rng: random.Random,
    figs: Figures,
    pace: tuple[float, float],
) -> None:
    """One member: every table the arena seats him at (told by the bench's read
    of the arena), until he is cancelled."""
    while True:
        table_id = await inbox.get()
        while not inbox.empty():  # the newest
            table_id = inbox.get_nowait()
        if not await made(bots.svc, user.id, table_id, inbox):
            continue
        try:
            await player(
                bots.svc,
                bots.ui,
                fake,
                table_id,
                user,
                rng,
                [10**6],
                [time.monotonic()],
                figs,
                think=pace,
            )
        except LiveError:  # the table is gone (expired, released)
            continue


@asynccontextmanager
async def inline_bots(
    args: argparse.Namespace, fake: FakeTelegram, redis_url: str, meter: Meter
) -> AsyncIterator[Bots]:
    """``--inline``: ``--processes`` BotApps polling the fake in this event loop."""
    settings = Settings(
        bot_token=fake.token,
        redis_url=redis_url,
        redis_prefix=PREFIX,
        telegram_api_url=fake.url,
        set_commands=False,
        ai_workers=0,
    )
    apps = [BotApp(settings) for _ in range(args.processes)]
    for app in apps:
        await app.setup()
        meter.watch_app(app)
    polls = [
        asyncio.create_task(a.run_polling(handle_signals=False, polling_timeout=5)) for a in apps
    ]
    try:
        yield Bots(apps[0].svc, apps[0].ui)
    finally:
        for a in apps:
            await a.stop_polling()
        await asyncio.gather(*polls, return_exceptions=True)
        for a in apps:
            await a.aclose()


@asynccontextmanager
async def fleet_bots(
    args: argparse.Namespace, fake: FakeTelegram, redis_url: str, meter: Meter
) -> AsyncIterator[Bots]:
    """``--processes`` real bot processes behind the webhook proxy; the fleet's own
    table service and chat-state store (on the same Redis) for the bench."""
    async with BotFleet(fake, redis_url, PREFIX, count=args.processes) as fleet:
        bots = Bots(fleet.svc, fleet.ui)
        try:
            yield bots
        finally:
            bots.codes = await fleet.stop()  # they flush; their logs are complete
            bots.logs = [p.read_text() for p in fleet.logs]


def has_button(fake: FakeTelegram, message: Message, data: str) -> Callable[[], bool | None]:
    """Whether ``message`` (as the fake holds it now) has a button with ``data``."""
    shown = fake.world.chat(message.chat_id).messages

    def check() -> bool | None:
        now = shown.get(message.message_id)
        return (
            now is not None and any(b.get("callback_data") == data for b in now.buttons)
        ) or None

    return check


async def announce(
    args: argparse.Namespace, bots: Bots, fake: FakeTelegram, owner: SimUser, group: Chat
) -> tuple[Arena, Message]:
    """The owner sets the arena up as an admin does (``/arena``, the choices,
    *Announce*): the arena and its message, posted by the bot; ``--minutes``
    not on offer is then written by the bench."""
    owner.send("/arena", group)
    setup = await owner.wait_message("A new arena", group, timeout=SAFETY)
    chosen = Setup()
    wanted = {
        "variant": args.variant,
        "seats": args.seats,
        "minutes": args.minutes if args.minutes in MINUTES_CHOICES else chosen.minutes,
    }
    for name, value in wanted.items():
        if getattr(chosen, name) == value:
            continue
        await owner.press(
            data=chosen.button(**{name: value}), message=setup, chat=group
        ).wait_answer(SAFETY)
        chosen = replace(chosen, **{name: value})
        await fake.world.wait_for(has_button(fake, setup, chosen.button("go")), SAFETY, "a redraw")
    await owner.press(data=chosen.button("go"), message=setup, chat=group).wait_answer(SAFETY)
    board = await owner.wait_message("Arena ·", group, timeout=SAFETY)
    arena = await bots.svc.arenas.current(group.id)
    assert arena is not None, "the bot made no arena"
    if arena.minutes != args.minutes:  # a length the set-up does not offer

        def change(a: Arena) -> Arena:
            return replace(a, ends=a.starts + args.minutes * 60_000)

        arena = await bots.svc.arenas.mutate(arena.id, change)
        await bots.svc.arenas.hint(arena.id, arena.ends)
    return arena, board


@dataclass
class ArenaRun:
    wall: float
    joined: float
    final: Arena
    games: list[dict[str, Any]]
    figs: Figures
    podium: bool


async def arena_run(
    args: argparse.Namespace,
    bots: Bots,
    fake: FakeTelegram,
    meter: Meter,
    pace: tuple[float, float],
) -> ArenaRun:
    users = [fake.add_user(f"Player {i}", language_code="en") for i in range(args.players)]
    owner = users[0]
    group = owner.create_group("Arena bench", *users[1:])
    meter.group = group.id
    owner.add_bot_to(group)
    for u in users:
        u.start()
    await asyncio.gather(*(u.wait_message(timeout=SAFETY) for u in users))
    print("players started the bot; the arena is set up", file=sys.stderr, flush=True)
    arena, board = await announce(args, bots, fake, owner, group)
    fake.stats.reset()
    t0 = time.monotonic()
    for u in users:  # the join storm: everybody presses Join
        await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
    joined = time.monotonic() - t0
    print(f"joined in {joined:.1f} s", file=sys.stderr, flush=True)
    figs = Figures()
    rng = random.Random(args.seed)
    players = []
    for u in users:
        inbox = meter.inbox[u.id] = asyncio.Queue()
        players.append(
            asyncio.create_task(
                play_arena(bots, fake, u, inbox, random.Random(rng.random()), figs, pace)
            )
        )
    final = await meter.watch_arena(bots.svc, arena.id, args.stop_after)
    wall = time.monotonic() - t0
    print(f"arena over after {wall:.0f} s", file=sys.stderr, flush=True)
    for task in players:  # between tables, or (--stop-after) in a game left unfinished
        task.cancel()
    await asyncio.gather(*players, return_exceptions=True)
    podium = False
    if final.status == FINISHED:
        try:
            await owner.wait_message("The arena is over", group, timeout=30)
            podium = True
        except TimeoutError:
            pass
    games = await bots.svc.arenas.games(arena.id, 0, 100_000)
    return ArenaRun(wall, joined, final, games, figs, podium)


def log_summary(logs: list[str]) -> list[str]:
    """The bot processes' warnings and errors, the commonest first (numbers
    folded, so one kind of line counts once)."""
    kinds: Counter[str] = Counter()
    levels: Counter[str] = Counter()
    for text in logs:
        for line in text.splitlines():
            m = LOG_LINE.search(line)
            if m is None:
                continue
            levels[m[1]] += 1
            kinds[f"{m[1]} {m[2]}: {re.sub(r'[0-9]+', 'N', m[3])[:110]}"] += 1
    out = [
        f"bot processes' logs: {levels['WARNING']} warnings, "
        f"{levels['ERROR'] + levels['CRITICAL']} errors"
    ]
    out += [f"  {n} x {kind}" for kind, n in kinds.most_common(8)]
    return out


def report(
    args: argparse.Namespace,
    pace: tuple[float, float],
    meter: Meter,
    out: ArenaRun,
    bots: Bots,
    retry_after: int,
) -> None:
    ends: dict[int, list[int]] = {}
    for g in out.games:
        for u in g["users"]:
            ends.setdefault(u, []).append(int(g["at"]))
    delays: list[float] = []
    for user, seats in meter.seated.items():
        for end in ends.get(user, []):
            later = [s for s in seats if s >= end]
            if later:
                delays.append((min(later) - end) / 1000)
    lengths = [
        (int(g["at"]) - meter.pairings[g["table"]]) / 1000
        for g in out.games
        if g["table"] in meter.pairings
    ]
    minutes = sorted(meter.group_writes.items())[1:-1] or sorted(meter.group_writes.items())
    per_minute = [n for _m, n in minutes]
    how = "in this process (--inline)" if args.inline else "as separate processes"
    print(
        f"arena benchmark (#27): {args.players} players, {args.seats} a table, "
        f"{args.variant}, {args.minutes} min, {args.processes} bot process(es) {how}, "
        f"think {pace[0]}-{pace[1]} s, seed {args.seed}"
    )
    print(
        f"ran {out.wall:.0f} s (join storm {out.joined:.1f} s); games {out.final.games}, "
        f"tables made {len(meter.pairings)}, presses {out.figs.presses}"
    )
    print(
        f"pairing delay after a game's end: p50 {pct(delays, 0.5):.1f} s, "
        f"p95 {pct(delays, 0.95):.1f} s, max {max(delays, default=0):.1f} s "
        f"({len(delays)} pairings; goal p95 <= 15 s)"
    )
    print(
        f"a game (pairing to result): p50 {pct(lengths, 0.5):.0f} s, "
        f"max {max(lengths, default=0):.0f} s; press to updated hand: "
        f"p50 {pct(out.figs.latencies, 0.5) * 1000:.0f} ms, "
        f"p95 {pct(out.figs.latencies, 0.95) * 1000:.0f} ms"
    )
    print(
        f"group writes per minute: mean {statistics.fmean(per_minute or [0]):.1f}, "
        f"busiest {max(per_minute, default=0)} (Telegram: 20 a minute in a group)"
    )
    if args.inline:
        print(
            f"Redis round trips: an arena's wake p50 {pct(meter.wake_trips, 0.5):.0f} "
            f"(max {max(meter.wake_trips, default=0)}), making a table p50 "
            f"{pct(meter.table_trips, 0.5):.0f}"
        )
    else:
        print(
            "Redis round trips: not counted in bot processes (out of the bench's reach); "
            "measure them with --inline at a small size (--inline --players 12 --minutes 1)"
        )
    print(f"429s: {retry_after} (goal 0)")
    status = out.final.status + (", podium posted" if out.podium else "")
    print(f"arena {status}; presses answered {out.figs.actions} moves, {out.figs.toasts} toasts")
    if not args.inline:
        for line in log_summary(bots.logs):
            print(line)
        if any(c not in (0, None) for c in bots.codes) or None in bots.codes:
            print(f"bot processes' exit codes: {bots.codes}")


async def run(args: argparse.Namespace) -> None:
    low, high = (float(x) for x in args.think.split(","))
    pace = (low, high)
    if args.seats not in SEATS_CHOICES or args.variant not in ("chuvash", "shchelkovsky"):
        raise SystemExit(f"the set-up offers {SEATS_CHOICES} seats, chuvash or shchelkovsky")
    meter = Meter()
    bots_of = inline_bots if args.inline else fleet_bots
    with LocalRedis() as redis:
        async with FakeTelegram(limits=RateLimits.from_env()) as fake:
            meter.watch_fake(fake)
            async with bots_of(args, fake, redis.url, meter) as bots:
                out = await arena_run(args, bots, fake, meter, pace)
            retry_after = fake.stats.retry_after
    report(args, pace, meter, out, bots, retry_after)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--minutes", type=int, default=10)
    ap.add_argument("--variant", default="chuvash")
    ap.add_argument(
        "--think", default="2,6", help="seconds a player thinks before a press (a human's pace)"
    )
    ap.add_argument("--processes", type=int, default=1, help="bot processes")
    ap.add_argument(
        "--inline", action="store_true", help="the bot in this event loop (hooked: round trips)"
    )
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument(
        "--stop-after", type=float, default=0, help="cancel the arena after this many seconds"
    )
    asyncio.run(run(args=ap.parse_args()))


if __name__ == "__main__":
    main()
