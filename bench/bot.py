"""Benchmark of the whole bot through the fake Bot API (Telegram's flood limits
ON, real clock) and a throw-away redis-server: 1, 20 and 200 concurrent games of
random-but-legal players pressing buttons of their hand messages; then group
games (``g`` scenarios: each game in its own group with a table message and an
AI seat, and a member who does not play asking the busy group for /top every
few seconds).

Prints, per scenario: latency from a button press to the acting user's updated
message (p50, p99), Bot API calls per player action (messages = sends + edits;
all = also answerCallbackQuery), Redis round trips per action (the bot's process,
background loops included), the 429s received (and per game: the most any
game got), the games stalled (left with presses to make but no change for a
minute), and for group games the commands that got their reply.  No asserts.

Hard AI (issue 15): the ``20x2`` private scenario runs again alongside
``--hard-ai-games N`` games of one player against a hard AI (the search player,
thinking in the bot's process pool of ``--ai-workers`` processes): the latency
of the 20 games' presses with and without them, and of the hard games' own
presses (which include the AI's thinking).

``--human``: human-paced players instead (each thinks 0.3-1.5 s before a tap and
then taps the keyboard he looked at, even if it changed meanwhile; after a
notice he looks again once his keyboard is redrawn, or after 2 s), one
3-player Chuvash game, one 4-player and one 8-player Shchelkovsky game, all
private; prints the share of presses answered with a modal alert (show_alert,
as the fake records it; goal 0 where nothing was refused), with a toast -- and
of them the stale-button ones (the keyboard was older than the table; #29's
goals: at most 2 % in the 4-player Shchelkovsky game, 1 % in the others) and
the toasts' texts -- the share of presses that are passes, and the passes
seats made by themselves (issue 13).

``--ephemeral``: each group scenario runs twice, the players' hands first in
their private chats, then as ephemeral messages in the group (issue 14), and the
line of each shows the game's messages per action (the /top replies left out).
The fake counts every ephemeral send and edit against the group's flood limit,
or with ``FAKE_EPHEMERAL_COUNTED=0`` only against its receiver's own window
there (the other Telegram, #24: :mod:`sandbox.fake_api.limits`).

``--in-group`` (#24): every hand in the group at a human pace, on both
Telegrams.  Each row runs on its own fake Bot API (limits ON; ephemeral writes
counted against the group's 20 a minute, or not) and bot (the product's delays;
``FLOOD_EPHEMERAL_COUNTED`` as the row says), all rows at once: Chuvash games
of 3 seats (2 humans + the AI) and 6 (4 + 2), each in its own group, opened as
people do (/new, Join, Add AI, Start; every second player started the bot and
chose *My cards*, the others never started it), the players thinking 3-6 s a
press (``random.Random``, ``--seed``); by default 3-seat games are played to
the end and bigger ones for 40 presses.  Each row's line: press -> the
presser's own hand shows its outcome (p50, p95: a move's version, a toggle's
keyboard; a press that ends the game is left out, its outcome is the table
message's), press -> the next actor's hand shows the new version (his move),
the table message's lag (each write until the message shows it or a newer
one) and the worst time until it showed a game's result, writes to the group
per move (public and ephemeral sends and edits, as the fake wrote them) and
the 429s in the row's groups; then #24's goals, met or missed.  The times are
taken where things happen (hooks on the service's writes, on the edits the
bot asks for and on the fake's writes), not when a harness task wakes.

``--commands`` (#39): the Redis commands one press costs (``INFO commandstats``
of the bench's own redis-server around one 3-human private Chuvash game, one
bot process), net of the bot's idle traffic -- measured for ``--idle`` seconds
before the game, and again after it -- and the idle commands a second; the
harness finds the hands in the fake's chats, and its few reads of the table
are taken off.

``--path`` (#39): the project's modules one press (a move) goes through, in
the order it first entered them, and how often it entered each layer.

    python bench/bot.py --commands [--human] [--idle S]
    python bench/bot.py --path
    python bench/bot.py [--actions N] [--quick] [--only 20x6 | --only 4x3g | --only hard]
                        [--hard-ai-games N] [--ai-workers K] [--alongside-kind heuristic]
                        [--human] [--ephemeral]
    python bench/bot.py --in-group [--games N] [--actions N] [--seed S] [--think 3,6]
                        [--rows cc2+1,nn4+2,...] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from engine import view
from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from sandbox.fake_api.text import parse_text
from sandbox.local_redis import LocalRedis
from tables import TableService
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.delivery.address import Address
from telegram_bot.settings import Settings
from telegram_bot.state.chat_state import TableUi
from telegram_bot.views import texts
from telegram_bot.views.hand import PLAYABLE

STALE_TOASTS = frozenset(  # a press on a keyboard older than the table (the players: English)
    (texts.REFUSALS["stale_version"], texts.STALE, texts.NOT_YOUR_MESSAGE, texts.HAND_MOVED_DOWN)
)
STUCK = 60.0  # seconds without a press or a change in any chat of a game
HUMAN_PACE = (0.3, 1.5)  # seconds a human-paced player thinks before a tap (--human)
HECKLE_EVERY = 5.0  # seconds between two /top in a busy group (group scenarios)

MESSAGES = (
    "sendMessage",
    "editMessageText",
    "editMessageReplyMarkup",
    "editEphemeralMessageText",
    "editEphemeralMessageReplyMarkup",
)


@dataclass
class Figures:
    latencies: list[float] = field(default_factory=list)
    actions: int = 0
    refused: int = 0  # presses answered with a modal alert (show_alert)
    toasts: int = 0  # presses answered with a short notice (text, no show_alert)
    notices: Counter[str] = field(default_factory=Counter)  # toasts and alerts by text
    presses: int = 0
    passes: int = 0  # presses of Pass/Done or "pass for the bout"
    autopasses: int = 0  # passes seats made by themselves (the tables' logs)
    kinds: dict[str, int] = field(default_factory=dict)
    commands: int = 0  # /top sent to the busy groups
    replies: int = 0  # ... that got their leaderboard (not an apology, not lost)
    stale_kinds: Counter[str] = field(default_factory=Counter)
    """Stale-button toasts by what was pressed and what moved since it was drawn."""


def choose(message: Message, rng: random.Random) -> str | None:
    """A random button that does something now (random-but-legal player)."""
    options = []
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is None:
            continue
        kind = cb.press.kind
        if kind in ("play", "action") or (kind == "card" and b["text"].startswith(PLAYABLE)):
            options.append(b["callback_data"])
    return rng.choice(options) if options else None


class UiSource(Protocol):
    """Where a player finds his hand message: the chat-state store, or a copy."""

    async def table(self, table_id: str) -> TableUi: ...


async def player(
    svc: TableService,
    ui: UiSource,
    fake: FakeTelegram,
    tid: str,
    user: SimUser,
    rng: random.Random,
    budget: list[int],
    pulse: list[float],
    figs: Figures,
    pace: tuple[float, float] | None = None,
    think: tuple[float, float] = (0.0, 0.0),
    until: float = float("inf"),
    group: int | None = None,
) -> None:
    """Press a random useful button of his hand message whenever it offers one
    (after ``think`` seconds: a random time in that range); otherwise wait for a
    change in his chat (a cheap per-chat wait, so 400 players cost the harness
    little); stop at the budget, at the game's end, at ``until`` (monotonic), or
    when no player of the game pressed or saw a change for ``STUCK`` seconds (the
    game is stuck: the scenario reports it as stalled)."""
    world = fake.world
    seen = -1
    while budget[0] > 0 and pulse[0] + STUCK > time.monotonic() < until:
        mid = (await ui.table(tid)).hands.get(user.id)
        msg, where = hand_of(fake, user, group, mid)
        data = choose(msg, rng) if msg is not None and msg.version != seen else None
        if msg is None or not data:
            shown = msg.version if msg is not None else -1
            seen = shown
            changed = await world.wait_chat(
                where,
                lambda m=msg, v=shown: (m is None or m.version != v) or None,  # type: ignore[misc]
                2.0,
            )
            if changed is None:  # quiet for a while: is the game still on?
                table, _s, _v = await svc.tables.get(tid)
                if table.status != "playing":
                    return
                seen = -1
            else:  # the game goes on (the others' moves): keep waiting for his turn
                pulse[0] = time.monotonic()
            continue
        if think[1] > 0:  # a human looks at his cards first
            await asyncio.sleep(rng.uniform(*think))
            msg, where = hand_of(fake, user, group, mid)
            if msg is None or (data := choose(msg, rng)) is None or time.monotonic() > until:
                seen = -1
                continue
        budget[0] -= 1
        if pace is not None:  # he looks, thinks, then taps what he saw
            await asyncio.sleep(rng.uniform(*pace))
        pulse[0] = time.monotonic()
        before = msg.version
        t0 = time.perf_counter()
        q = user.press(data=data, message=msg, forged=pace is not None)
        answer = await q.wait_answer(120)
        figs.presses += 1
        press = parse_game(data).press  # type: ignore[union-attr]
        figs.passes += press.kind == "bout_pass" or press.action == "P"
        if answer.get("text"):
            figs.notices[("alert: " if answer.get("show_alert") else "") + answer["text"]] += 1
        if answer.get("text") in STALE_TOASTS:  # what was pressed, what moved meanwhile
            drawn = parse_game(data)
            assert drawn is not None
            events = await svc.admin.event_page(tid, drawn.version, 50)
            moved = ",".join(f"{e.kind}:{e.text[:1]}" for e in events if e.seat != -1)
            what = press.kind + (":" + press.action[:1] if press.action else "")
            figs.stale_kinds[f"{what} after [{moved}]"] += 1
        if answer.get("show_alert") or answer.get("text"):  # he reads the notice
            if answer.get("show_alert"):
                figs.refused += 1
            else:
                figs.toasts += 1
            # "here is the current position": he looks at the redraw it announces
            # before his next tap, not at the keyboard he was just told is out of
            # date (#41: the bench re-tapped it at once, a second stale toast)
            await world.wait_chat(
                where,
                lambda m=msg, b=before: m.version != b or None,  # type: ignore[misc]
                2.0,
            )
            seen = -1
        else:
            await world.wait_chat(
                where,
                lambda m=msg, b=before: m.version != b or None,  # type: ignore[misc]
                30,
            )
            figs.latencies.append(time.perf_counter() - t0)
            figs.actions += 1
            k = parse_game(data).press.kind  # type: ignore[union-attr]
            figs.kinds[k] = figs.kinds.get(k, 0) + 1
            seen = -1
        pulse[0] = time.monotonic()


def hand_of(
    fake: FakeTelegram, user: SimUser, group: int | None, mid: int | None
) -> tuple[Message | None, int]:
    """His hand message as he sees it and the chat it is in: his private chat, or
    (``mid`` < 0) the group, as an ephemeral message (issue 14)."""
    if mid is not None and mid < 0 and group is not None:
        return fake.world.chat(group).ephemeral_shown.get(-mid), group
    return (user.chat.messages.get(mid) if mid else None), user.id


def pct(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def heckle(user: SimUser, group: Chat, stop: asyncio.Event, figs: Figures) -> None:
    """A member of a busy group who does not play: /top every ``HECKLE_EVERY`` s."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), HECKLE_EVERY)
        if stop.is_set():
            return
        user.send("/top", group)
        figs.commands += 1
        with contextlib.suppress(TimeoutError):
            await user.wait_message("Leaderboard", group, timeout=STUCK)
            figs.replies += 1


async def open_game(
    fake: FakeTelegram,
    app: BotApp,
    g: int,
    players: int,
    in_group: bool,
    ephemeral: bool = False,
    hard: str = "",
    variant: str | None = None,
) -> tuple[str, list[SimUser], Chat | None, SimUser | None]:
    """A started game of ``players`` humans: private (by invite), or in its own group
    with one AI seat more and a member who watches; ``hard`` (an AI kind): a
    private game of one player against an AI of that kind.  ``variant``, or by
    default Chuvash up to 6 players (C2), Shchelkovsky beyond (S2)."""
    svc = app.svc
    if hard:
        user = fake.add_user(f"H{g}")
        user.user.started = True
        r = await svc.lobbies.create_lobby(
            user.id,
            user.user.first_name,
            variant="chuvash",
            timer=0,
            ai_kind=hard,
            rated=False,  # against the AI: casual, so no turn timer (#38)
        )
        await svc.lobbies.add_ai(r.table.id, user.id)
        await svc.games.start(r.table.id, user.id)
        return r.table.id, [user], None, None
    users = [fake.add_user(f"G{g}P{i}") for i in range(players)]
    for u in users:
        u.user.started = True
        await app.ui.set_prefs(u.id, started=True, plays="group" if ephemeral else "private")
    group = kibitzer = None
    if in_group:
        kibitzer = fake.add_user(f"G{g}K")
        group = users[0].create_group(f"Group {g}", *users[1:], kibitzer)
        users[0].add_bot_to(group)
    r = await svc.lobbies.create_lobby(  # no turn timer (as the settings say)
        users[0].id,
        users[0].user.first_name,
        chat=group.id if group is not None else None,
        variant=variant or ("chuvash" if players <= 6 else "shchelkovsky"),
        max_seats=max(players + int(in_group), 2),
        private=group is None,
        timer=app.settings.default_timer,
        rated=bool(app.settings.default_timer),  # no timer: casual games alone (#38)
    )
    for u in users[1:]:
        await svc.lobbies.join(r.table.id, u.id, u.user.first_name)
    if in_group:
        await svc.lobbies.add_ai(r.table.id, users[0].id)
    await svc.games.start(r.table.id, users[0].id)
    return r.table.id, users, group, kibitzer


async def scenario(
    url: str,
    prefix: str,
    games: int,
    players: int,
    actions: int,
    verbose: bool = False,
    in_group: bool = False,
    limits: RateLimits | None = None,
    hard_games: int = 0,
    ai_workers: int | None = None,
    hard_kind: str = "search",
    pace: tuple[float, float] | None = None,
    ephemeral: bool = False,
    variant: str | None = None,
) -> None:
    async with FakeTelegram(limits=limits or RateLimits.from_env()) as fake:
        settings = Settings(
            bot_token=fake.token,
            redis_url=url,
            redis_prefix=prefix,
            telegram_api_url=fake.url,
            default_timer=0,
            set_commands=False,
            ai_workers=Settings().ai_workers if ai_workers is None else ai_workers,
        )
        app = BotApp(settings)
        await app.setup()
        polling = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
        svc, pub = app.svc, app.publisher
        assert pub is not None
        opened = [
            await open_game(fake, app, g, players, in_group, ephemeral, variant=variant)
            for g in range(games)
        ]
        tables = [(tid, users, grp.id if grp else None) for tid, users, grp, _k in opened]
        hard = [
            (await open_game(fake, app, g, 1, False, hard=hard_kind))[:2] for g in range(hard_games)
        ]
        starting = [tid for tid, _u, _g in tables] + [tid for tid, _u in hard]
        await asyncio.gather(*(pub.start_game(tid) for tid in starting))
        fake.stats.reset()
        before = app.delivery.stats.as_dict()
        trips = svc.store.round_trips
        figs = Figures()
        rng = random.Random(1)
        t0 = time.perf_counter()
        budgets = {tid: [actions] for tid in starting}
        hard_figs = Figures()
        stop = asyncio.Event()
        hecklers = [
            asyncio.create_task(heckle(k, group, stop, figs))
            for _t, _u, group, k in opened
            if group is not None and k is not None
        ]
        hard_players = [
            asyncio.create_task(
                player(
                    svc,
                    app.ui,
                    fake,
                    tid,
                    u,
                    random.Random(rng.random()),
                    budgets[tid],
                    pulse,
                    hard_figs,
                )
            )
            for tid, users in hard
            for pulse in [[time.monotonic()]]
            for u in users
        ]
        await asyncio.gather(
            *(
                player(
                    app.svc,
                    app.ui,
                    fake,
                    tid,
                    u,
                    random.Random(rng.random()),
                    budgets[tid],
                    pulse,
                    figs,
                    pace,
                    group=grp,
                )
                for tid, users, grp in tables
                for pulse in [[time.monotonic()]]
                for u in users
            )
        )
        elapsed = time.perf_counter() - t0
        for task in hard_players:  # the measured games are done: the hard ones may stop
            task.cancel()
        await asyncio.gather(*hard_players, return_exceptions=True)
        stop.set()
        await asyncio.gather(*hecklers)
        await app.delivery.flush()
        stalled = []  # games left with presses to make that nobody could make
        for tid, users, grp in tables:
            table, _state, version = await svc.tables.get(tid)
            if table.status == "playing" and budgets[tid][0] > 0:
                shown = []
                for u in users:
                    mid = (await app.ui.table(tid)).hands.get(u.id)
                    m, _chat = hand_of(fake, u, grp, mid)
                    vs = [
                        cb.version
                        for b in (m.buttons if m else [])
                        if (cb := parse_game(b.get("callback_data")))
                    ]
                    shown.append((max(vs, default=-1), choose(m, rng) is not None if m else None))
                stalled.append((tid, version, shown))
        trips = svc.store.round_trips - trips
        calls = fake.stats.calls
        msgs = sum(calls[m] for m in MESSAGES)
        allc = msgs + calls["answerCallbackQuery"]
        lat = sorted(figs.latencies) or [0.0]
        p99 = pct(lat, 0.99)
        n = max(figs.actions, 1)
        by_chat = fake.stats.retry_after_by_chat
        per_game = [
            sum(by_chat[c] for c in [*(u.id for u in users), *([group.id] if group else [])])
            for _t, users, group, _k in opened
        ]
        where = (
            ("in groups, hands in the group" if ephemeral else "in groups")
            if in_group
            else "private"
        )
        if variant:
            where += f", {variant}"
        if hard_games:
            what = "hard-AI" if hard_kind == "search" else f"{hard_kind}-AI"
            where += f", alongside {hard_games:>3} {what} games"
        replies = (
            f" | /top replied {figs.replies}/{figs.commands} | game messages/action "
            f"{(msgs - figs.replies) / n:.2f}"  # without the /top replies
            if in_group
            else ""
        )
        print(
            f"{games:>4} games x {players} players {where}: {figs.actions:>5} actions in "
            f"{elapsed:6.1f} s | latency p50 {statistics.median(lat) * 1000:7.1f} ms  "
            f"p99 {p99 * 1000:7.1f} ms | calls/action: messages {msgs / n:.2f}, "
            f"all {allc / n:.2f} | Redis round trips/action {trips / n:.1f} | "
            f"429s {fake.stats.retry_after} (per game max "
            f"{max(per_game, default=0)}) | stalled games {len(stalled)}{replies}",
            flush=True,
        )
        if hard_games:
            hl = sorted(hard_figs.latencies) or [0.0]
            decider = app.decider
            print(
                f"      the games alongside, their own presses: {hard_figs.actions} | latency p50 "
                f"{statistics.median(hl) * 1000:7.1f} ms  p99 {pct(hl, 0.99) * 1000:7.1f} ms"
                f" | AI decisions in the pool: {getattr(decider, 'pooled', 0)} "
                f"(fallbacks {getattr(decider, 'fallbacks', 0)}, "
                f"workers {app.settings.ai_workers})",
                flush=True,
            )
        if pace is not None:
            for tid, _users, _g in tables:
                events = await svc.admin.event_page(tid, 0, 1_000_000)
                figs.autopasses += sum(e.kind == "autopass" for e in events)
            n_press = max(figs.presses, 1)
            stale = sum(n for text, n in figs.notices.items() if text in STALE_TOASTS)
            goal = 0.02 if variant == "shchelkovsky" and players == 4 else 0.01
            print(
                f"      human-paced: {figs.presses} presses | modal alerts "
                f"{figs.refused} ({figs.refused / n_press:.1%}; goal 0) | toasts "
                f"{figs.toasts} ({figs.toasts / n_press:.1%}), stale-button ones {stale} "
                f"({stale / n_press:.1%}; goal <= {goal:.0%}: "
                f"{'met' if stale <= goal * n_press and not figs.refused else 'MISSED'}) "
                f"| passes pressed {figs.passes} "
                f"({figs.passes / n_press:.1%} of presses) | passes made by themselves "
                f"{figs.autopasses}",
                flush=True,
            )
            for text, n in figs.notices.most_common():
                print(f"        {n:4d} x {text}", flush=True)
            for what, n in figs.stale_kinds.most_common():
                print(f"          stale: {n:3d} x {what}", flush=True)
        if verbose:
            after = app.delivery.stats.as_dict()
            print(
                f"      presses refused (stale keyboards): {figs.refused}",
                f"| actions by button {figs.kinds}",
                f"| messages per press: {msgs / max(figs.actions + figs.refused, 1):.2f}",
                flush=True,
            )
            if stalled:  # (table, version, per player: version shown, a button to press?)
                print("      stalled:", stalled[:5], flush=True)
            print(
                "      calls:",
                dict(sorted(calls.items())),
                "| delivery:",
                {k: after[k] - before.get(k, 0) for k in after},
                flush=True,
            )
        await app.stop_polling()
        await asyncio.wait_for(polling, 30)
        await app.aclose()


# ------------------------------------------------------------------ Redis commands (#39)
class FakeHands:
    """Where each player's hand message is, read off the fake's chats (no Redis):
    his newest message with buttons (a hand: its only game here) -- so that the harness's own
    reads do not count as the bot's commands."""

    def __init__(self, users: list[SimUser]) -> None:
        self.users = users
        self.known: dict[int, int] = {}  # user -> his hand (kept once its buttons go)

    async def table(self, table_id: str) -> TableUi:
        for u in self.users:
            for mid in sorted(u.chat.messages, reverse=True):
                if mid < self.known.get(u.id, 0):
                    break
                if u.chat.messages[mid].buttons:  # his hand: cards, some inactive
                    self.known[u.id] = mid
                    break
        return TableUi(hands=dict(self.known))


class CountedService:
    """The table service as the harness uses it, counting its calls (their
    Redis commands are taken off the bot's)."""

    def __init__(self, svc: TableService) -> None:
        self.svc = svc
        self.calls: Counter[str] = Counter()
        self.tables = self._Part(svc.tables, "tables", self.calls)
        self.admin = self._Part(svc.admin, "admin", self.calls)

    class _Part:
        def __init__(self, part: Any, name: str, calls: Counter[str]) -> None:
            self._part, self._name, self._calls = part, name, calls

        def __getattr__(self, attr: str) -> Any:
            self._calls[f"{self._name}.{attr}"] += 1
            return getattr(self._part, attr)


async def server_commands(r: Any) -> Counter[str]:
    """Calls by command since the server started (``INFO commandstats``)."""
    info = await r.info("commandstats")
    calls = {k.removeprefix("cmdstat_"): v["calls"] for k, v in info.items()}
    return Counter({k: v for k, v in calls.items() if k != "info"})  # the bench's own


async def commands_per_press(url: str, pace: tuple[float, float] | None, idle: float) -> None:
    """#39: Redis commands a press costs, net of the bot's idle traffic, in one
    3-human private Chuvash game with one bot process (no turn timer); and the
    idle traffic itself, before the game and after it (a finished table held)."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(url)
    async with FakeTelegram(limits=RateLimits.from_env()) as fake:
        settings = Settings(
            bot_token=fake.token,
            redis_url=url,
            redis_prefix="cmds:",
            telegram_api_url=fake.url,
            default_timer=0,
            set_commands=False,
        )
        app = BotApp(settings)
        await app.setup()
        polling = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
        tid, users, _g, _k = await open_game(fake, app, 0, 3, False, variant="chuvash")
        assert app.publisher is not None
        await app.publisher.start_game(tid)
        await app.delivery.flush()
        await asyncio.sleep(2.0)  # the start's renders settle
        _t, _s, started_at = await app.svc.tables.get(tid)  # (before the count)
        c0 = await server_commands(r)
        await asyncio.sleep(idle)
        c1 = await server_commands(r)
        svc = CountedService(app.svc)
        figs = Figures()
        budget = [1_000_000]
        # one pulse for the game, as in scenario(): a player whose own chat is
        # quiet while another toggles cards for a minute must not quit -- he
        # did, and the game "stalled" on his turn with his hand showing it
        pulse = [time.monotonic()]
        t0 = time.perf_counter()
        await asyncio.gather(
            *(
                player(
                    svc,  # type: ignore[arg-type]
                    FakeHands(users),
                    fake,
                    tid,
                    u,
                    random.Random(39 + i),
                    budget,
                    pulse,
                    figs,
                    pace,
                )
                for i, u in enumerate(users)
            )
        )
        elapsed = time.perf_counter() - t0
        await app.delivery.flush()
        c2 = await server_commands(r)
        await asyncio.sleep(2.0)
        c3 = await server_commands(r)
        await asyncio.sleep(idle)
        c4 = await server_commands(r)
        table, state, version = await app.svc.tables.get(tid)
        if table.status == "playing" and state is not None:  # stalled: each hand at the end
            hands = (await FakeHands(users).table(tid)).hands
            for u in users:  # a hand drawn before the seat's options changed: lost render
                msg = u.chat.messages.get(hands.get(u.id, -1))
                buttons = [] if msg is None else msg.buttons
                offered = [b.get("text") for b in buttons]
                drawn = [cb.version for b in buttons if (cb := parse_game(b.get("callback_data")))]
                legal = view(state, table.seat_of(u.id) or 0)["legal"]
                print(
                    f"  stalled: {u.id}'s hand (drawn at v{max(drawn, default='-')} of "
                    f"v{version}; legal now {legal}): {offered}"
                )
        await app.stop_polling()
        await asyncio.wait_for(polling, 30)
        # the harness's own reads (a quiet player asks whether the game goes on),
        # each measured once with the bot's loops stopped
        harness = 0
        for what, n in svc.calls.items():
            part, attr = what.split(".")
            before = await server_commands(r)
            fn = getattr(getattr(app.svc, part), attr)
            await (fn(tid) if attr == "get" else fn(tid, 0, 50))
            harness += n * sum((await server_commands(r) - before).values())
        await app.aclose()
    idle_cmds = c1 - c0
    idle_rate = sum(idle_cmds.values()) / idle
    idle_after = sum((c4 - c3).values()) / idle
    game = c2 - c1
    presses = max(figs.presses, 1)
    total = sum(game.values()) - harness
    net = total - idle_rate * elapsed
    print(
        f"one 3-human Chuvash game ({'human pace' if pace else 'fast'}, one bot process): "
        f"{figs.presses} presses ({figs.actions} answered without a notice; the game's "
        f"version {version}, {table.status}; {(version - started_at) / presses:.2f} moves "
        f"a press) in {elapsed:.1f} s",
        flush=True,
    )
    print(
        f"  Redis commands per press: {total / presses:.1f} in all, "
        f"{net / presses:.1f} net of idle | idle: {idle_rate:.1f} commands/s before "
        f"the game, {idle_after:.1f}/s after it (harness reads taken off: {harness})",
        flush=True,
    )
    idle_share = Counter({k: v * elapsed / idle for k, v in idle_cmds.items()})
    net_by = Counter({k: v - idle_share.get(k, 0) for k, v in game.items()})
    print(
        "  per press by command, net of idle:",
        ", ".join(f"{k} {v / presses:.1f}" for k, v in net_by.most_common(16)),
        flush=True,
    )
    print(
        f"  idle by command (per s over {idle:.0f} s):",
        ", ".join(f"{k} {v / idle:.2f}" for k, v in idle_cmds.most_common(10)),
        flush=True,
    )
    await r.aclose()


LAYERS = (
    "telegram_bot.handlers",
    "telegram_bot.usecases",
    "telegram_bot.publishing",
    "telegram_bot.views",
    "telegram_bot.buttons",
    "telegram_bot.delivery",
    "telegram_bot.state",
    "tables",
    "engine",
)
"""The layers a press may go through, as :func:`press_path` names them."""


def layer_of(module: str) -> str | None:
    return next((lay for lay in LAYERS if module == lay or module.startswith(lay + ".")), None)


def shows_other(msg: Message, version: int) -> bool | None:
    """``msg`` no longer shows ``version`` (None: it still does)."""
    return msg.version != version or None


def first_press(users: list[SimUser], mids: dict[int, int]) -> tuple[SimUser, Message, str]:
    """A press that moves: an action button, else a card that can be played."""
    moves = [
        (u, m, b["callback_data"])
        for u in users
        if (m := u.chat.messages.get(mids.get(u.id, 0))) is not None
        for b in m.buttons
        if (cb := parse_game(b.get("callback_data"))) and cb.press.kind == "action"
    ]
    if not moves:  # a lead: a card first (its move is one press in Chuvash: C6)
        moves = [
            (u, m, b["callback_data"])
            for u in users
            if (m := u.chat.messages.get(mids.get(u.id, 0))) is not None
            for b in m.buttons
            if (cb := parse_game(b.get("callback_data")))
            and cb.press.kind == "card"
            and b["text"].startswith(PLAYABLE)
        ]
    return moves[0]


async def press_path(url: str) -> None:
    """#39: the path of one press that makes a move -- the project's modules in
    the order the press first entered them, and how often it entered each
    layer (from another layer) -- from the update's arrival until the
    presser's message shows the move; the background loops (timers, sweeps)
    are slowed down so that they stay out of it."""
    import sys

    async with FakeTelegram(limits=RateLimits.from_env()) as fake:
        settings = Settings(
            bot_token=fake.token,
            redis_url=url,
            redis_prefix="path:",
            telegram_api_url=fake.url,
            default_timer=0,
            set_commands=False,
            timer_interval=3600,
            render_grace=3600,
        )
        app = BotApp(settings)
        await app.setup()
        polling = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
        tid, users, _g, _k = await open_game(fake, app, 0, 2, False, variant="chuvash")
        assert app.publisher is not None
        await app.publisher.start_game(tid)
        await app.delivery.flush()
        await asyncio.sleep(1.0)
        hands = FakeHands(users)
        mids = (await hands.table(tid)).hands
        user, msg, data = first_press(users, mids)
        entered: list[str] = []  # modules in the order of their first call
        calls: Counter[str] = Counter()  # calls into a layer from another (no resumes)
        stack: list[str | None] = []
        live: set[int] = set()  # frames running: a coroutine's resume is no new call

        def profile(frame: Any, event: str, _arg: Any) -> None:
            if event not in ("call", "return"):
                return
            lay = layer_of(frame.f_globals.get("__name__", ""))
            if event == "call":
                if id(frame) not in live and lay is not None:
                    module = frame.f_globals["__name__"]
                    if module not in entered:
                        entered.append(module)
                    if lay != next((x for x in reversed(stack) if x is not None), None):
                        calls[lay] += 1
                live.add(id(frame))
                stack.append(lay)
            elif stack:
                stack.pop()
                if frame.f_code.co_flags & 0x380 == 0 or frame.f_lasti < 0:
                    live.discard(id(frame))  # a plain function's frame is done

        for _ in range(3):  # a card that only ticks it: then his Play makes the move
            before, wrote = msg.version, (await app.svc.tables.load(tid)).version
            entered.clear()
            calls.clear()
            sys.setprofile(profile)
            try:
                q = user.press(data=data, message=msg)
                await q.wait_answer(30)
                await fake.world.wait_chat(user.id, partial(shows_other, msg, before), 30)
                await app.delivery.flush()
            finally:
                sys.setprofile(None)
            if (await app.svc.tables.load(tid)).version != wrote:
                break
            play = [
                b["callback_data"]
                for b in msg.buttons
                if (c := parse_game(b.get("callback_data"))) and c.press.kind == "play"
            ]
            if not play:
                break
            data = play[0]
        cb = parse_game(data)
        assert cb is not None
        print(f"the path of one press that makes a move ({cb.press}), modules in order:")
        runs: list[tuple[str, list[str]]] = []
        for module in entered:
            lay = layer_of(module) or module
            if not runs or runs[-1][0] != lay:
                runs.append((lay, []))
            runs[-1][1].append(module.removeprefix(lay).lstrip(".") or lay)
        for lay, mods in runs:
            print(f"  {lay:<24} {', '.join(mods)}", flush=True)
        print(
            "  calls into each layer from another (resumes not counted):",
            ", ".join(f"{lay.removeprefix('telegram_bot.')} {calls[lay]}" for lay in LAYERS),
            flush=True,
        )
        await app.stop_polling()
        await asyncio.wait_for(polling, 30)
        await app.aclose()


# ------------------------------------------------------------------ in-group play (#24)
THINK = (3.0, 6.0)
"""Seconds a player of ``--in-group`` thinks before each press (seeded)."""
GROUP_STUCK = 150.0
"""An ``--in-group`` game with no write and no press for this long is stuck
(longer than the product's 60 s turn timer, which moves for a silent seat)."""
LONG_GAME = 40
"""Presses a game of more than 3 seats makes by default (played to the end, a
6-seat game at human pace outlasts the run's ~12 minutes)."""
FLOOD_MARK = "🐢"
"""The line of a hand the group's limit held back (``telegram_bot.views.hand``;
spelt here so that the bench runs on trees from before #24 item 6)."""
FINAL_WAIT = 60.0
"""Seconds the harness waits for the table message to show a game's result."""


@dataclass(frozen=True)
class Row:
    """One row of ``--in-group``: the fake's Telegram (ephemeral writes ``counted``
    against the group's minute or not), the bot's starting assumption
    (``FLOOD_EPHEMERAL_COUNTED``) and the seats (humans, AI)."""

    counted: bool
    assumed: bool
    humans: int
    ais: int

    @property
    def name(self) -> str:
        return (
            f"{'c' if self.counted else 'n'}{'c' if self.assumed else 'n'}{self.humans}+{self.ais}"
        )


IN_GROUP_ROWS = (
    Row(True, True, 2, 1),
    Row(True, True, 4, 2),
    Row(False, False, 2, 1),
    Row(False, False, 4, 2),
    Row(True, False, 2, 1),  # the bot assumes wrongly: it must learn from 429s
)


@dataclass
class Write:
    """A write of a table as the service made it (the bench's hook on
    ``Tables.write``): when, its version, the seats whose move the game waits
    for then (their users; None for an AI seat), the seats that moved by a
    press (``act``), and whether it ended the game."""

    t: float
    version: int
    waits_for: list[int | None]
    acts: list[int]
    over: bool


@dataclass
class HandWrite:
    """A write of a player's hand (an ephemeral message in the group, or his
    private hand): when, the table version and selection revision its keyboard
    was drawn at, and its buttons."""

    t: float
    version: int
    sel: str
    buttons: tuple[str, ...]


@dataclass
class PressRec:
    """A press of an ``--in-group`` player: when (``t0``), on which keyboard
    (its table version, selection revision and buttons), how it was answered
    (``silent``: neither a toast nor an alert) and when."""

    user: int
    seat: int
    t0: float
    version: int
    sel: str
    buttons: tuple[str, ...]
    silent: bool = False
    answered: float = 0.0


@dataclass
class GroupGame:
    """One game of a row, in its own group."""

    tid: str
    group: Chat
    users: list[SimUser]
    seats: dict[int, int]  # user -> seat
    over: asyncio.Event = field(default_factory=asyncio.Event)
    writes: list[Write] = field(default_factory=list)
    presses: list[PressRec] = field(default_factory=list)
    table_message: int | None = None
    asked: list[tuple[float, int, str]] = field(default_factory=list)  # table edits asked
    shown: list[tuple[float, str]] = field(default_factory=list)  # table message written
    group_writes: Counter[str] = field(default_factory=Counter)  # pub/eph x send/edit
    hinted: set[int] = field(default_factory=set)  # players told the limit slows them
    stalled: bool = False
    last: float = field(default_factory=time.perf_counter)


def keyboard(message: Message) -> tuple[int, str, tuple[str, ...]]:
    """A hand message's table version and selection revision (from its game
    buttons; -1 and "" without any) and its buttons' data."""
    version, sel, datas = -1, "", []
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is None:
            continue
        version, sel = max(version, cb.version), cb.sel
        datas.append(b["callback_data"])
    return version, sel, tuple(datas)


class Probe:
    """Timestamps of everything an ``--in-group`` row measures, taken where it
    happens: the service's writes (a hook on ``Tables.write``), the table
    message edits the bot asks for with the version they render (a hook on
    ``Delivery.edit``), and every message the fake wrote -- hands, the table
    message, the group's other messages (a hook on ``World.record_outgoing``)."""

    def __init__(self, app: BotApp, fake: FakeTelegram) -> None:
        self.games: dict[str, GroupGame] = {}
        self.by_group: dict[int, GroupGame] = {}
        self.by_user: dict[int, GroupGame] = {}
        self.hands: defaultdict[int, list[HandWrite]] = defaultdict(list)
        self.drawn: defaultdict[int, dict[str, int]] = defaultdict(dict)  # hand text -> version
        tables, delivery, world = app.svc.tables, app.delivery, fake.world
        write, edit, record = tables.write, delivery.edit, world.record_outgoing

        async def on_write(loaded: Any, plan: Any, **kwargs: Any) -> Any:
            result = await write(loaded, plan, **kwargs)
            game = self.games.get(result.table_id)
            if game is not None and not result.duplicate and plan.state is not None:
                state, seats = plan.state, plan.table.seats
                over = bool(state.over or plan.result is not None)
                acts = [s for kind, s, _x in plan.events if kind == "act"]
                waits = [seats[s].user if seats[s].ai is None else None for s in state.to_act()]
                now = time.perf_counter()
                game.writes.append(Write(now, result.version, waits, acts, over))
                game.last = now
                if over:
                    game.over.set()
            return result

        async def on_edit(to: Address, text: str, *args: Any, **kw: Any) -> Any:
            game = self.by_group.get(to.chat)
            version = str(kw.get("version", ""))
            if game is not None and "#" in version:
                plain = parse_text(text, "HTML")[0]
                v = int(version.rpartition("#")[2])
                if to.message == game.table_message and not to.ephemeral:
                    game.asked.append((time.perf_counter(), v, plain))
                elif to.receiver is not None:  # his hand, whose keyboard may carry no version
                    drawn = self.drawn[to.receiver]
                    drawn[plain] = max(drawn.get(plain, -1), v)
            return await edit(to, text, *args, **kw)

        def on_record(message: Message, kind: str) -> None:
            record(message, kind)
            now = time.perf_counter()
            game = self.by_group.get(message.chat_id)
            ephemeral = message.ephemeral_message_id is not None
            if game is not None:
                game.group_writes[f"{'eph' if ephemeral else 'pub'} {kind}"] += 1
                if message.message_id == game.table_message and not ephemeral:
                    game.shown.append((now, message.text or ""))
            owner = message.receiver_id if ephemeral else message.chat_id
            if game is not None and ephemeral and FLOOD_MARK in (message.text or ""):
                game.hinted.add(owner or 0)  # #24 item 6: held back, he was told so
            if owner is not None and owner in self.by_user:
                version, sel, datas = keyboard(message)
                version = max(version, self.drawn[owner].get(message.text or "", -1))
                if version >= 0:  # his hand (not a notice to him)
                    self.hands[owner].append(HandWrite(now, version, sel, datas))

        tables.write = on_write  # type: ignore[method-assign]
        delivery.edit = on_edit  # type: ignore[method-assign]
        world.record_outgoing = on_record  # type: ignore[method-assign]

    def add(self, game: GroupGame) -> None:
        self.games[game.tid] = game
        self.by_group[game.group.id] = game
        for u in game.users:
            self.by_user[u.id] = game

    def first_hand(
        self, user: int, after: float, version: int = -1, other_than: tuple[str, ...] | None = None
    ) -> float | None:
        """When his hand was first written after ``after`` drawn at ``version`` or
        newer (and with other buttons than ``other_than``)."""
        for w in self.hands[user]:
            if w.t >= after and w.version >= version and w.buttons != other_than:
                return w.t
        return None


def human_choice(message: Message, rng: random.Random) -> str | None:
    """The button a player of ``--in-group`` presses (None: nothing to do now):
    *Play* once he chose cards (now and then one card more first), a choice
    offered for a card, a cover rather than Take, now a throw-in and now
    Done/Pass, a lead card.  Pass for the bout, Clear and pages are never pressed."""
    by: dict[str, list[str]] = {"play": [], "choice": [], "card": [], "P": [], "K": []}
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is None:
            continue
        p = cb.press
        if p.kind == "play":
            by["play"].append(b["callback_data"])
        elif p.kind == "action":
            by[p.action if p.action in ("P", "K") else "choice"].append(b["callback_data"])
        elif p.kind == "card" and b["text"].startswith(PLAYABLE):
            by["card"].append(b["callback_data"])
    if by["play"] and (not by["card"] or rng.random() < 0.85):
        return by["play"][0]
    if by["choice"]:
        return rng.choice(by["choice"])
    if by["card"] and by["K"]:  # he defends: mostly he covers
        return rng.choice(by["card"] if rng.random() < 0.9 else by["K"])
    if by["card"] and by["P"]:  # he may throw in: now and then he does
        return rng.choice(by["card"] if rng.random() < 0.35 else by["P"])
    for kind in ("card", "P", "K"):
        if by[kind]:
            return rng.choice(by[kind])
    return None


async def open_group_game(
    fake: FakeTelegram, app: BotApp, label: str, row: Row, probe: Probe
) -> GroupGame:
    """A Chuvash game in a new group, opened as people do it (as the e2e test of
    both Telegrams does): every second player started the bot and chose hands in
    the group (*My cards*, his preferences), the others never started it; /new in
    the group, Join, Add AI, Start.  Returns once every hand is in the group."""
    users = [fake.add_user(f"{label}P{i}", language_code="en") for i in range(row.humans)]
    for u in users[::2]:
        u.start()
        await u.wait_message(timeout=STUCK)
        await app.ui.set_prefs(u.id, plays="group")
    owner = users[0]
    group = owner.create_group(f"Card night {label}", *users[1:])
    owner.add_bot_to(group)
    await owner.wait_message("/new", group, timeout=STUCK)
    owner.send("/new chuvash", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=STUCK)
    for u in users[1:]:
        await u.press("Join", message=lobby, chat=group).wait_answer(STUCK)
    for _ in range(row.ais):
        await owner.press("Add AI", message=lobby, chat=group).wait_answer(STUCK)
    table = await app.svc.tables.where(owner.id)
    assert table is not None
    assert len(table.seats) == row.humans + row.ais, table
    seats = {u.id: table.seat_of(u.id) or 0 for u in users}
    game = GroupGame(table.id, group, users, seats)
    probe.add(game)
    await owner.press("Start", message=lobby, chat=group).wait_answer(STUCK)
    deadline = time.monotonic() + STUCK
    while True:
        ui = await app.ui.table(table.id)
        if all(ui.hands.get(u.id, 0) < 0 for u in users) and ui.table_message:
            game.table_message = ui.table_message
            return game
        assert time.monotonic() < deadline, f"hands never shown in the group: {ui.hands}"
        await asyncio.sleep(0.05)


async def group_player(
    app: BotApp,
    fake: FakeTelegram,
    game: GroupGame,
    user: SimUser,
    rng: random.Random,
    think: tuple[float, float],
    budget: list[int],
) -> None:
    """A player of ``--in-group``: whenever his hand in the group offers a move
    he thinks ``think`` seconds, looks again and presses what he sees then; after
    a press answered without a notice he waits (up to 30 s) until his hand shows
    something new -- the press -> own message redrawn wait of the other
    scenarios -- then looks again."""
    world = fake.world
    seen = -1
    while not game.over.is_set() and budget[0] > 0:
        if time.perf_counter() - game.last > GROUP_STUCK:
            game.stalled = True
            return
        mid = (await app.ui.table(game.tid)).hands.get(user.id)
        msg, where = hand_of(fake, user, game.group.id, mid)
        if msg is None or msg.version == seen or human_choice(msg, random.Random(0)) is None:
            shown = msg.version if msg is not None else -1
            seen = shown
            await world.wait_chat(
                where,
                lambda m=msg, v=shown: (m is None or m.version != v) or None,  # type: ignore[misc]
                2.0,
            )
            if msg is None:
                seen = -1
            continue
        await asyncio.sleep(rng.uniform(*think))
        mid = (await app.ui.table(game.tid)).hands.get(user.id)
        msg, where = hand_of(fake, user, game.group.id, mid)
        data = human_choice(msg, rng) if msg is not None else None
        if msg is None or data is None or game.over.is_set():
            seen = -1
            continue
        budget[0] -= 1
        version, sel, datas = keyboard(msg)
        rec = PressRec(user.id, game.seats[user.id], time.perf_counter(), version, sel, datas)
        game.presses.append(rec)
        game.last = rec.t0
        before = msg.version
        answer = await user.press(data=data, message=msg).wait_answer(120)
        rec.answered = time.perf_counter()
        rec.silent = not answer.get("text") and not answer.get("show_alert")
        if rec.silent:
            await world.wait_chat(
                where,
                lambda m=msg, b=before: m.version != b or None,  # type: ignore[misc]
                30,
            )
        seen = -1


@dataclass
class RowFigures:
    """What a row measured, over its games."""

    row: Row
    games: int = 0
    presses: int = 0
    moves: int = 0  # presses that made a move
    own: list[float] = field(default_factory=list)
    own_moves: list[float] = field(default_factory=list)  # presses that made a move
    own_never: int = 0  # silent presses after which his hand never changed
    own_final: int = 0  # presses that ended the game (their outcome: the table message)
    notices: int = 0  # presses answered with a toast or an alert
    nxt: list[float] = field(default_factory=list)
    nxt_never: int = 0
    lag: list[float] = field(default_factory=list)
    lag_never: int = 0
    end: list[float] = field(default_factory=list)  # per game: the result on the table
    ended: int = 0
    writes: Counter[str] = field(default_factory=Counter)
    r429: int = 0
    r429_all: int = 0
    stalled: int = 0
    hinted: int = 0
    learned: list[str] = field(default_factory=list)
    seconds: float = 0.0


def measure(probe: Probe, game: GroupGame, figs: RowFigures) -> None:
    """A finished game's figures, from the probe's timestamps."""
    figs.games += 1
    figs.stalled += game.stalled
    figs.hinted += len(game.hinted)
    figs.writes.update(game.group_writes)
    measure_presses(probe, game, figs)
    measure_table(game, figs)


def measure_presses(probe: Probe, game: GroupGame, figs: RowFigures) -> None:
    """Press -> his own view, press -> the next actor's view."""
    writes = game.writes
    for i, p in enumerate(game.presses):
        figs.presses += 1
        if not p.silent:
            figs.notices += 1
            continue
        later = [q.t0 for q in game.presses[i + 1 :] if q.user == p.user]
        again = later[0] if later else float("inf")  # his next press
        made = next(
            (w for w in writes if p.t0 <= w.t <= max(p.answered, p.t0) + 1.0 and p.seat in w.acts),
            None,
        )
        if made is not None:
            figs.moves += 1
            if made.over:
                figs.own_final += 1
                continue
            seen = probe.first_hand(p.user, p.t0, made.version)
            for u in {u for u in made.waits_for if u is not None and u != p.user}:
                t = probe.first_hand(u, made.t, made.version)
                if t is None:
                    figs.nxt_never += 1
                else:
                    figs.nxt.append(t - p.t0)
        else:  # a toggle, a choice opened, a redraw: his keyboard changed
            seen = probe.first_hand(p.user, p.t0, other_than=p.buttons)
            if seen is not None and seen > again:
                seen = None
        if seen is None:
            figs.own_never += 1
        else:
            figs.own.append(seen - p.t0)
            if made is not None:
                figs.own_moves.append(seen - p.t0)


def measure_table(game: GroupGame, figs: RowFigures) -> None:
    """The table message: from each write until it shows that version or a newer one."""
    writes = game.writes
    events: list[tuple[float, int, Any]] = [(w.t, 0, w) for w in writes]
    events += [(t, 1, (v, text)) for t, v, text in game.asked]
    events += [(t, 2, text) for t, text in game.shown]
    events.sort(key=lambda e: (e[0], e[1]))
    rendered: dict[str, int] = {}
    shown_text, shown_v = "", -1
    pending: list[Write] = []
    for t, kind, what in events:
        if kind == 0:
            pending.append(what)
        elif kind == 1:
            v, text = what
            rendered[text] = max(rendered.get(text, -1), v)
            if text == shown_text:  # nothing to edit: it shows this version already
                shown_v = max(shown_v, v)
        else:
            shown_text = what
            shown_v = max(shown_v, rendered.get(what, -1))
        for w in [w for w in pending if w.version <= shown_v]:
            pending.remove(w)
            figs.lag.append(t - w.t)
            if w.over:
                figs.end.append(t - w.t)
    figs.lag_never += len(pending)
    figs.ended += any(w.over for w in writes)
    figs.end += [FINAL_WAIT for w in pending if w.over]  # never shown: at least this long


def fake_limits(counted: bool) -> RateLimits:
    """Telegram's limits in the fake, ephemeral writes ``counted`` in the group's
    minute or not (a fake from before #24 always counts them: the row's
    ``counted`` must be True there -- the one-tap comparison runs this file on
    an older tree)."""
    if "ephemeral_counted" in {f.name for f in dataclasses.fields(RateLimits)}:
        return RateLimits(ephemeral_counted=counted)  # type: ignore[call-arg,unused-ignore]
    assert counted, "this fake always counts ephemeral writes in the group"
    return RateLimits()


async def in_group_row(
    url: str,
    prefix: str,
    row: Row,
    games: int,
    seed: int,
    think: tuple[float, float],
    actions: int | None,
    verbose: bool,
) -> RowFigures:
    """One row: its own fake Bot API (limits ON, ``row.counted``) and bot (the
    product's delays, ``FLOOD_EPHEMERAL_COUNTED`` = ``row.assumed``), ``games``
    games at once, each in its own group, played to the end (or ``actions``
    presses each)."""
    figs = RowFigures(row)
    limits = fake_limits(row.counted)
    async with FakeTelegram(limits=limits) as fake:
        settings = Settings(
            bot_token=fake.token,
            redis_url=url,
            redis_prefix=prefix,
            telegram_api_url=fake.url,
            set_commands=False,
            ai_workers=0,
            flood_ephemeral_counted=row.assumed,
        )
        app = BotApp(settings)
        await app.setup()
        polling = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
        deals = random.Random(f"{seed}:{row.name}:deals")
        app.svc.games.new_seed = lambda: deals.getrandbits(62)
        probe = Probe(app, fake)
        opened = [
            await open_group_game(fake, app, f"{row.name}g{g}", row, probe) for g in range(games)
        ]
        t0 = time.perf_counter()
        if actions is None:
            actions = 0 if row.humans + row.ais <= 3 else LONG_GAME
        budgets = {g.tid: [actions or 10**9] for g in opened}
        await asyncio.gather(
            *(
                group_player(
                    app,
                    fake,
                    g,
                    u,
                    random.Random(f"{seed}:{row.name}:{n}:{u.user.first_name}"),
                    think,
                    budgets[g.tid],
                )
                for n, g in enumerate(opened)
                for u in g.users
            )
        )
        for g in opened:  # the result on the table message, or FINAL_WAIT s
            if g.over.is_set():
                with contextlib.suppress(TimeoutError):
                    await fake.world.wait_for(result_shown(g), FINAL_WAIT)
        await asyncio.sleep(5.0)  # the last edits of the hands and the table go out
        figs.seconds = time.perf_counter() - t0
        for g in opened:
            measure(probe, g, figs)
            figs.r429 += fake.stats.retry_after_by_chat[g.group.id]
            learned = getattr(app.svc, "budgets", None)  # since #24
            budget = await learned.get(g.group.id) if learned is not None else None
            if budget is not None and budget.learned:
                figs.learned.append(
                    f"counted={budget.counted} public={budget.public}/min "
                    f"refused pub/eph {budget.refused_public}/{budget.refused_ephemeral}"
                )
        figs.r429_all = fake.stats.retry_after
        if verbose:
            print(
                f"      {row.name}: calls {dict(sorted(fake.stats.calls.items()))} | delivery "
                f"{app.delivery.stats.as_dict()}",
                flush=True,
            )
        await app.stop_polling()
        await asyncio.wait_for(polling, 30)
        await app.aclose()
    return figs


def result_shown(game: GroupGame) -> Callable[[], bool | None]:
    """Does the group's table message show the result (its *Rematch* button)?"""

    def shown() -> bool | None:
        msg = game.group.messages.get(game.table_message or 0)
        datas = [b.get("callback_data", "") for b in msg.buttons] if msg else []
        return any(d.startswith("l:") and ":re" in d for d in datas) or None

    return shown


def ms(values: list[float], q: float) -> str:
    return f"{pct(sorted(values), q):5.2f}" if values else "    -"


def in_group_table(rows: list[RowFigures]) -> list[str]:
    """The printed table (Markdown): one line per row."""
    out = [
        "| Telegram (ephemerals) | bot assumes | seats | games | presses / moves "
        "| own view p50 / p95 s | next actor p50 / p95 s | table lag p50 / p95 s "
        "| result on table, max s | group writes / move: public + ephemeral | 429s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in rows:
        r = f.row
        moves = max(f.moves, 1)
        pub = f.writes["pub send"] + f.writes["pub edit"]
        eph = f.writes["eph send"] + f.writes["eph edit"]
        own = f"{ms(f.own, 0.5)} / {ms(f.own, 0.95)}"
        if f.own_never:
            own += f" ({f.own_never} never)"
        nxt = f"{ms(f.nxt, 0.5)} / {ms(f.nxt, 0.95)}"
        if f.nxt_never:
            nxt += f" ({f.nxt_never} never)"
        lag = f"{ms(f.lag, 0.5)} / {ms(f.lag, 0.95)}"
        if f.lag_never:
            lag += f" ({f.lag_never} never)"
        end = f"{max(f.end):.1f} ({f.ended}/{f.games} ended)" if f.end else f"- (0/{f.games} ended)"
        out.append(
            f"| {'counted' if r.counted else 'not counted'} "
            f"| {'counted' if r.assumed else 'not counted'} "
            f"| {r.humans + r.ais} ({r.humans}+{r.ais} AI) | {f.games} "
            f"| {f.presses} / {f.moves} | {own} | {nxt} | {lag} | {end} "
            f"| {pub / moves:.2f} + {eph / moves:.2f} = {(pub + eph) / moves:.2f} "
            f"| {f.r429} |"
        )
    return out


def goals(rows: list[RowFigures]) -> list[str]:
    """#24's goals (3 seats, 2 humans + AI, the bot assuming what its Telegram
    does), met or missed."""
    out = []

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    for f in rows:
        r = f.row
        if (r.humans, r.ais) != (2, 1) or r.counted != r.assumed:
            continue
        p50, p95 = pct(sorted(f.own) or [0.0], 0.5), pct(sorted(f.own) or [0.0], 0.95)
        if r.counted:
            ok = p50 <= 1.5 and p95 <= 5.0
            what = f"ephemerals counted: own view p50 {p50:.2f} s <= 1.5, p95 {p95:.2f} s <= 5"
        else:
            ok = p95 <= 1.5
            what = f"ephemerals not counted: own view p95 {p95:.2f} s <= 1.5"
        out.append(f"goal, {what}: {verdict(ok)}")
        out.append(
            f"goal, ephemerals {'' if r.counted else 'not '}counted: 0 x 429 "
            f"(got {f.r429}): {verdict(f.r429 == 0)}"
        )
    ended = [f for f in rows if f.ended]
    if ended:
        worst = max(max(f.end) for f in ended)
        ok = worst <= 10.0 and all(len(f.end) == f.ended for f in ended)
        out.append(
            f"goal, the result on the table within 10 s of a game's end (worst "
            f"{worst:.1f} s, every row): {verdict(ok)}"
        )
    return out


async def run_in_group(args: argparse.Namespace) -> None:
    """``--in-group``: the rows of #24's benchmark at once, each on its own fake and
    bot (one event loop), and their table."""
    rows = list(IN_GROUP_ROWS)
    if args.rows:
        rows = [r for r in rows if r.name in args.rows.split(",")]
    low, high = (float(x) for x in args.think.split(","))
    think = (low, high)
    print(
        f"in-group benchmark (#24): seed {args.seed}, think {think[0]:g}-{think[1]:g} s a press, "
        f"{args.games} game(s) a row, "
        + (
            f"{args.actions} presses a game"
            if args.actions
            else "played to the end"
            if args.actions == 0
            else f"3 seats played to the end, more: {LONG_GAME} presses a game"
        ),
        flush=True,
    )
    lag: list[float] = []
    done = asyncio.Event()

    async def loop_lag() -> None:  # how late the event loop wakes (all rows share it)
        while not done.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.1)
            lag.append(time.perf_counter() - t - 0.1)

    watcher = asyncio.create_task(loop_lag())
    t0 = time.perf_counter()
    with LocalRedis() as server:
        figs = await asyncio.gather(
            *(
                in_group_row(
                    server.url,
                    f"ingroup{i}:",
                    row,
                    args.games,
                    args.seed,
                    think,
                    args.actions,
                    args.verbose,
                )
                for i, row in enumerate(rows)
            )
        )
    done.set()
    await watcher
    print("\n".join(in_group_table(list(figs))), flush=True)
    for f in figs:
        extra = []
        if f.learned:
            extra.append("learned: " + "; ".join(sorted(set(f.learned))))
        if f.stalled:
            extra.append(f"stalled games {f.stalled}")
        if f.hinted:
            extra.append(f"players told the group's limit slows their cards {f.hinted}")
        if f.own_final or f.notices:
            extra.append(
                f"presses ending the game {f.own_final}, answered with a notice {f.notices}"
            )
        extra.append(
            f"own view of moves p50 / p95 {ms(f.own_moves, 0.5)} / {ms(f.own_moves, 0.95)} s, "
            f"of the other presses {len(f.own) - len(f.own_moves)}"
        )
        extra.append(f"writes {dict(sorted(f.writes.items()))}")
        extra.append(f"429s in all chats {f.r429_all}")
        print(f"  {f.row.name} ({f.seconds:.0f} s): " + " | ".join(extra), flush=True)
    for line in goals(list(figs)):
        print(line, flush=True)
    print(
        f"wall {time.perf_counter() - t0:.0f} s; event loop late p99 "
        f"{pct(sorted(lag) or [0.0], 0.99) * 1000:.0f} ms, max {max(lag, default=0) * 1000:.0f} ms",
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--actions",
        type=int,
        help="actions per game (default 40; --in-group: presses per game, 0: to the end; "
        f"default: 3 seats to the end, more {LONG_GAME})",
    )
    parser.add_argument("--quick", action="store_true", help="skip the 200-game scenario")
    parser.add_argument("--verbose", action="store_true", help="calls by method, delivery stats")
    parser.add_argument(
        "--group-limit",
        type=int,
        metavar="N",
        help="the fake allows N messages a minute in a group (Telegram: about 20; "
        "less: a Telegram stricter than the bot's budget)",
    )
    parser.add_argument(
        "--only",
        metavar="GAMESxPLAYERS",
        help="one scenario, e.g. 20x6 (with --actions); 'hard': only the hard-AI pair",
    )
    parser.add_argument(
        "--hard-ai-games",
        type=int,
        default=20,
        metavar="N",
        help="hard-AI games alongside the 20x2 scenario's second run (default 20; 0: none)",
    )
    parser.add_argument(
        "--ai-workers", type=int, metavar="K", help="AI_WORKERS of the bot (default: its own)"
    )
    parser.add_argument(
        "--alongside-kind",
        default="search",
        choices=("search", "heuristic"),
        help="the AI of the games alongside: heuristic shows what their traffic alone costs",
    )
    parser.add_argument(
        "--human", action="store_true", help="human-paced players: alert and pass shares"
    )
    parser.add_argument(
        "--human-game",
        type=int,
        choices=(0, 1, 2),
        help="with --human: only 0 (3-player Chuvash), 1 (4-player Shchelkovsky) or 2 (8)",
    )
    parser.add_argument(
        "--ephemeral",
        action="store_true",
        help="each group scenario twice: hands in private, then as ephemeral messages "
        "in the group (issue 14)",
    )
    parser.add_argument(
        "--in-group",
        action="store_true",
        help="#24: 3- and 6-seat games, every hand in the group, human pace, on both Telegrams",
    )
    parser.add_argument(
        "--games", type=int, default=1, help="--in-group: games a row, played at once"
    )
    parser.add_argument(
        "--seed", type=int, default=24, help="--in-group: the players' and deals' seed"
    )
    parser.add_argument(
        "--think", default="3,6", help="--in-group: a player's thinking before a press, MIN,MAX s"
    )
    parser.add_argument(
        "--rows",
        help="--in-group: only these rows, e.g. cc2+1,nn4+2 (Telegram counts ephemerals c/n, "
        "the bot assumes c/n, humans+AI)",
    )
    parser.add_argument(
        "--commands",
        action="store_true",
        help="#39: Redis commands per press net of idle, and idle commands a second "
        "(one 3-human Chuvash game; --human: at a human pace)",
    )
    parser.add_argument(
        "--path",
        action="store_true",
        help="#39: the modules one press goes through, in order, and each layer's entries",
    )
    parser.add_argument(
        "--idle", type=float, default=20.0, help="--commands: seconds of idle measured"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.path:
        with LocalRedis() as server:
            await press_path(server.url)
        return
    if args.commands:
        with LocalRedis() as server:
            await commands_per_press(server.url, HUMAN_PACE if args.human else None, args.idle)
        return
    if args.in_group:
        await run_in_group(args)
        return
    args.actions = args.actions or 40
    pace = HUMAN_PACE if args.human else None
    runs = [(1, 2, False, 0), (20, 2, False, 0), (20, 6, False, 0), (1, 3, True, 0)]
    runs.append((4, 3, True, 0))
    if args.hard_ai_games:  # the 20x2 scenario again, next to the hard-AI games
        runs.append((20, 2, False, args.hard_ai_games))
    variants: dict[int, str] = {}
    if args.human:  # #29: the 4-human private Shchelkovsky game too
        runs = [(1, 3, False, 0), (1, 4, False, 0), (1, 8, False, 0)]
        variants = {0: "chuvash", 1: "shchelkovsky", 2: "shchelkovsky"}
        if args.human_game is not None:  # one of them alone
            runs = [runs[args.human_game]]
            variants = {0: variants[args.human_game]}
    if not args.quick and not args.human:
        runs.append((200, 2, False, 0))  # ~8,000 actions: about 10 minutes
    if args.only == "hard":
        runs = [(20, 2, False, 0), (20, 2, False, args.hard_ai_games)]
    elif args.only:
        games, _x, players = args.only.partition("x")
        in_group = players.endswith("g")
        runs = [(int(games), int(players.removesuffix("g")), in_group, 0)]
    n = args.group_limit
    group = {"per_group_per_minute": n, "per_group_burst": n} if n else {}
    limits = RateLimits.from_env(**group)
    hands = (False, True) if args.ephemeral else (False,)
    with LocalRedis() as server:
        for i, (games, players, in_group, hard_games) in enumerate(runs):
            for ephemeral in hands if in_group else (False,):
                await scenario(
                    server.url,
                    f"bench{i}{'e' * ephemeral}:",
                    games,
                    players,
                    args.actions,
                    args.verbose,
                    in_group,
                    limits,
                    hard_games,
                    args.ai_workers,
                    args.alongside_kind,
                    pace,
                    ephemeral,
                    variants.get(i),
                )


if __name__ == "__main__":
    asyncio.run(main())
