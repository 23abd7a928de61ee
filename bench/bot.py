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
then taps the keyboard he looked at, even if it changed meanwhile), one
3-player Chuvash game and one 8-player Shchelkovsky game; prints the share of
presses answered with a modal alert (show_alert, as the fake records it; goal
at most 1%), with a toast, the share of presses that are passes, and the passes
seats made by themselves (issue 13).

``--ephemeral``: each group scenario runs twice, the players' hands first in
their private chats, then as ephemeral messages in the group (issue 14: every
ephemeral send and edit counts against the group's flood limit), and the line
of each shows the game's messages per action (the /top replies left out).

    python bench/bot.py [--actions N] [--quick] [--only 20x6 | --only 4x3g | --only hard]
                        [--hard-ai-games N] [--ai-workers K] [--alongside-kind heuristic]
                        [--human] [--ephemeral]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Protocol

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from sandbox.local_redis import LocalRedis
from tables import TableService
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.settings import Settings
from telegram_bot.state.chat_state import TableUi
from telegram_bot.views.hand import PLAYABLE

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
    presses: int = 0
    passes: int = 0  # presses of Pass/Done or "pass for the bout"
    autopasses: int = 0  # passes seats made by themselves (the tables' logs)
    kinds: dict[str, int] = field(default_factory=dict)
    commands: int = 0  # /top sent to the busy groups
    replies: int = 0  # ... that got their leaderboard (not an apology, not lost)


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
        if answer.get("show_alert"):
            figs.refused += 1
            seen = -1
        elif answer.get("text"):
            figs.toasts += 1
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
) -> tuple[str, list[SimUser], Chat | None, SimUser | None]:
    """A started game of ``players`` humans: private (by invite), or in its own group
    with one AI seat more and a member who watches; ``hard`` (an AI kind): a
    private game of one player against an AI of that kind.  Chuvash up to 6
    players (C2), Shchelkovsky beyond (S2)."""
    svc = app.svc
    if hard:
        user = fake.add_user(f"H{g}")
        user.user.started = True
        r = await svc.lobbies.create_lobby(
            user.id, user.user.first_name, variant="chuvash", timer=0, ai_kind=hard
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
        variant="chuvash" if players <= 6 else "shchelkovsky",
        max_seats=max(players + int(in_group), 2),
        private=group is None,
        timer=app.settings.default_timer,
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
) -> None:
    async with FakeTelegram(limits=limits or RateLimits()) as fake:
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
        opened = [await open_game(fake, app, g, players, in_group, ephemeral) for g in range(games)]
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
            print(
                f"      human-paced: {figs.presses} presses | modal alerts "
                f"{figs.refused} ({figs.refused / n_press:.1%}; goal <= 1%) | toasts "
                f"{figs.toasts} ({figs.toasts / n_press:.1%}) | passes pressed {figs.passes} "
                f"({figs.passes / n_press:.1%} of presses) | passes made by themselves "
                f"{figs.autopasses}",
                flush=True,
            )
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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--actions", type=int, default=40, help="actions per game")
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
        "--ephemeral",
        action="store_true",
        help="each group scenario twice: hands in private, then as ephemeral messages "
        "in the group (issue 14)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    pace = HUMAN_PACE if args.human else None
    runs = [(1, 2, False, 0), (20, 2, False, 0), (20, 6, False, 0), (1, 3, True, 0)]
    runs.append((4, 3, True, 0))
    if args.hard_ai_games:  # the 20x2 scenario again, next to the hard-AI games
        runs.append((20, 2, False, args.hard_ai_games))
    if args.human:
        runs = [(1, 3, False, 0), (1, 8, False, 0)]
    if not args.quick and not args.human:
        runs.append((200, 2, False, 0))  # ~8,000 actions: about 10 minutes
    if args.only == "hard":
        runs = [(20, 2, False, 0), (20, 2, False, args.hard_ai_games)]
    elif args.only:
        games, _x, players = args.only.partition("x")
        in_group = players.endswith("g")
        runs = [(int(games), int(players.removesuffix("g")), in_group, 0)]
    n = args.group_limit
    limits = RateLimits(per_group_per_minute=n, per_group_burst=n) if n else RateLimits()
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
                )


if __name__ == "__main__":
    asyncio.run(main())
