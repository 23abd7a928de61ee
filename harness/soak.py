"""A soak of rolling restarts (#28), for ``tests/bot/test_soak.py`` and
``bench/faults.py --soak``.

A fleet of bot processes (:class:`harness.fleet.BotFleet`: webhook mode behind
the proxy, the fake Bot API with Telegram's flood limits on, ephemeral writes
counted in the group unless ``FAKE_EPHEMERAL_COUNTED=0``) and ``games``
players, each in a private game against the AI (``/play``, turn timer on; a
finished game is followed by a new one).  Every player presses a useful button
of his hand message, thinks a little, presses again.  Every ``every`` seconds
one random process is stopped -- ``SIGTERM`` (a deploy) or ``SIGKILL`` (a
crash) -- and started again.

Each move press is checked against the table's log: answered silently, it made
exactly one move of his (else *lost*, or *applied twice*); refused, none; left
unanswered within Telegram's answer window, at most one (counted; a press is
*in flight at a kill* when a SIGKILL fell between its send and its window's
end).  At the end, with every process up: every game over or waiting for its
human, whose hand shows the table's current version (else *stuck*); and the
fake's 429 answers."""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from harness.fleet import BotFleet, open_group_game
from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.fake_api.models import Message
from tables import PLAYING, ServiceUnavailable
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.views.hand import PLAYABLE

ANSWER_WINDOW = 15.0  # Telegram's (and the fake's) window to answer a press
# a game whose human's hand lags its table this long at the end is stuck: well
# above a render repair (render_grace) and a restarted process's catch-up
STUCK_AFTER = 30.0
SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
PATIENCE = 120.0  # seconds a harness read waits for a failed-over cluster

T = TypeVar("T")


async def patient(read: Callable[[], Awaitable[T]]) -> T:
    """The harness's own read of the tables, again until the store answers: a
    Redis Cluster failing over a master refuses the keys of its slots for a
    few seconds (#40), and the soak's players look at their tables meanwhile."""
    loop = asyncio.get_running_loop()
    until = loop.time() + PATIENCE
    while True:
        try:
            return await read()
        except ServiceUnavailable:
            if loop.time() > until:
                raise
            await asyncio.sleep(0.2)


@dataclass
class SoakReport:
    """The soak's counts (see the module)."""

    kill: str
    processes: int
    games: int
    seconds: float
    restarts: int = 0
    stops_not_clean: int = 0  # SIGTERM: exit codes other than 0
    games_played: int = 0
    presses: int = 0
    move_presses: int = 0
    refused: int = 0
    unanswered: int = 0
    unanswered_at_kill: int = 0  # of those: in flight at a SIGKILL
    again: int = 0  # presses of a keyboard he already pressed or moved from (no move)
    slow: int = 0  # silent answers whose message was not redrawn within 10 s
    redrawn: int = 0  # Play on a keyboard of an older selection: redrawn, no move
    lost: int = 0
    applied_twice: int = 0
    stuck: int = 0
    caught_up: int = 0  # hands behind their table at the end that caught up within STUCK_AFTER
    retry_after: int = 0  # 429 answers of the fake Bot API
    extended: int = 0  # deadlines extended after a restart gap
    mode: str = "round_robin"  # the webhook proxy's
    group_players: int = 0  # group games of this many humans (0: private games vs the AI)
    lobbies_filled: int = 0
    games_over: int = 0
    duplicates: int = 0  # updates the processes dropped as already claimed (broadcast)
    stalls: list[float] = field(default_factory=list)  # this process's event loop held up > 0.2 s
    details: list[str] = field(default_factory=list)

    @property
    def unanswered_beyond_kills(self) -> int:
        return self.unanswered - self.unanswered_at_kill

    def rows(self) -> list[tuple[str, object]]:
        if self.group_players:
            head: list[tuple[str, object]] = [
                ("webhook delivery", self.mode),
                ("bot processes", self.processes),
                (f"group lobbies ({self.group_players} humans each)", self.games),
                ("  filled and started", self.lobbies_filled),
                ("  games played to the end", self.games_over),
                ("updates dropped as duplicates", self.duplicates),
            ]
        else:
            head = [
                ("stop signal", self.kill),
                ("bot processes", self.processes),
                ("live games (players)", self.games),
                ("seconds", round(self.seconds)),
                ("restarts", self.restarts),
                ("SIGTERM stops not clean", self.stops_not_clean),
                ("games played", self.games_played),
            ]
        # the fake Bot API runs in this process: while its loop is held up, calls
        # queue and then reach its windows at once (a burst the bot never sent)
        head.append(("fake Bot API's loop held up > 0.2 s", self.stall_text()))
        return [
            *head,
            ("presses", self.presses),
            ("  move presses", self.move_presses),
            ("  refused (stale, not his turn)", self.refused),
            ("  on a keyboard he already pressed or moved from", self.again),
            ("  own message not redrawn within 10 s", self.slow),
            ("  Play of an older selection: redrawn, no move", self.redrawn),
            ("  unanswered", self.unanswered),
            ("    in flight at a SIGKILL", self.unanswered_at_kill),
            ("moves lost", self.lost),
            ("moves applied twice", self.applied_twice),
            ("games stuck", self.stuck),
            ("  hands behind at the end, caught up later", self.caught_up),
            ("429 answers", self.retry_after),
            ("deadlines extended (restart gaps)", self.extended),
        ]

    def stall_text(self) -> str:
        longest = f", longest {max(self.stalls):.2f} s" if self.stalls else ""
        return f"{len(self.stalls)}{longest}"

    def table(self) -> str:
        width = max(len(k) for k, _v in self.rows())
        return "\n".join(f"{k:<{width}}  {v}" for k, v in self.rows())


def move_or_tap(message: Message, rng: random.Random) -> tuple[str, bool] | None:
    """The button a simple player presses -- Play, a choice, a playable card,
    Done or Pass, Take, in that order (one of a kind at random) -- its data,
    and whether it surely makes a move (a card tap may only select a card)."""
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
    for kind, options in by.items():
        if options:
            return rng.choice(options), kind != "card"
    return None


def selection_moved_on(data: str, message: Message) -> bool:
    """His keyboard, redrawn after the press of ``data``, is for another
    revision of his selection (the bot answers such a press silently and
    redraws: :attr:`telegram_bot.usecases.press.PressStatus.REDRAWN`)."""
    pressed = parse_game(data)
    shown = [cb for b in message.buttons if (cb := parse_game(b.get("callback_data")))]
    return pressed is not None and any(cb.sel and cb.sel != pressed.sel for cb in shown)


class Soak:
    """``await Soak(fake, fleet, ...).run()``: the report (see the module)."""

    def __init__(
        self,
        fake: FakeTelegram,
        fleet: BotFleet,
        *,
        games: int,
        seconds: float,
        every: float,
        kill: str,
        seed: int,
        think: tuple[float, float] = (0.5, 3.0),
        group_players: int = 0,
    ) -> None:
        self.fake, self.fleet = fake, fleet
        self.kill, self.seconds, self.every = kill, seconds, every
        self.rng = random.Random(seed)
        self.think = think
        self.group_players = group_players
        solo = 0 if group_players else games
        self.users = [fake.add_user(f"Soak{i}", language_code="en") for i in range(solo)]
        self.groups = [
            [fake.add_user(f"G{g}P{i}", language_code="en") for i in range(group_players)]
            for g in range(games if group_players else 0)
        ]
        self.report = SoakReport(kill, fleet.count, games, seconds)
        self.report.mode, self.report.group_players = fleet.proxy.mode, group_players
        self.kills: list[float] = []  # when each SIGKILL was sent (monotonic)
        self.stop = asyncio.Event()
        self.known: dict[tuple[str, int], int] = {}  # (table, user) -> his moves seen

    # ------------------------------------------------------------------ players
    async def table_of(self, user: SimUser, after: str = "") -> str:
        """The user's table once it is a game other than ``after``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while loop.time() < deadline:
            with contextlib.suppress(Exception):
                t = await self.fleet.svc.tables.where(user.id)
                if t is not None and t.id != after and t.status == PLAYING:
                    return t.id
            await asyncio.sleep(0.2)
        raise RuntimeError(f"{user.user.first_name} got no game")

    async def new_game(self, user: SimUser, after: str = "") -> str:
        user.send("/play chuvash")  # a game named starts at once (#41)
        tid = await self.table_of(user, after)
        await self.fleet.wait_hands(tid, [user])
        self.report.games_played += 1
        return tid

    async def moves_of(self, tid: str, user: SimUser, *, quick: bool = False) -> int:
        """The human moves of ``user`` in the table's log; ``quick``: one try
        (``ServiceUnavailable`` if the store does not answer), else again
        until it does."""
        svc = self.fleet.svc

        async def read(step: Callable[[], Awaitable[T]]) -> T:
            return await step() if quick else await patient(step)

        table, _state, _v = await read(lambda: svc.tables.get(tid))
        seats = {i for i, s in enumerate(table.seats) if s.user == user.id}
        events = await read(lambda: svc.admin.event_page(tid, 0, 1_000_000))
        return sum(1 for e in events if e.kind == "act" and e.seat in seats)

    async def moves_after(self, tid: str, user: SimUser, *, refused: bool) -> int | None:
        """His moves after a press (``refused``: answered with a refusal), to
        judge it by; None: not known now -- the press is then judged with his
        next one (a subclass's read that does not wait for the store)."""
        return await self.moves_of(tid, user)

    async def seat_events(
        self,
        tid: str,
        user: SimUser,
        data: str,
        kinds: tuple[str, ...] = (),
        *,
        quick: bool = False,
    ) -> list[str]:
        """His seat's log entries (of ``kinds``; () any) after the version the
        button was drawn at; ``quick``: one try (``ServiceUnavailable`` if the
        store does not answer), else again until it does."""
        cb = parse_game(data)
        svc = self.fleet.svc

        async def read(step: Callable[[], Awaitable[T]]) -> T:
            return await step() if quick else await patient(step)

        table, _state, _v = await read(lambda: svc.tables.get(tid))
        seats = {i for i, s in enumerate(table.seats) if s.user == user.id}
        events = await read(lambda: svc.admin.event_page(tid, 0, 1_000_000))
        since = cb.version if cb is not None else 0
        return [
            f"{e.version}:{e.kind}:{e.text}"
            for e in events
            if e.seat in seats and e.version > since and (not kinds or e.kind in kinds)
        ]

    def at_kill(self, sent: float) -> bool:
        return any(sent <= k <= sent + ANSWER_WINDOW for k in self.kills)

    async def started(self, user: SimUser) -> None:
        """His /start, answered -- sent again, as he would, when a SIGKILL took
        the process that had it (a webhook update acknowledged is not sent
        again): counted as a press unanswered at a kill."""
        while True:
            sent = time.monotonic()
            user.start()
            try:
                await user.wait_message(timeout=ANSWER_WINDOW)
                return
            except TimeoutError:
                if not self.at_kill(sent):  # a slow answer, no kill: wait on (a minute)
                    await user.wait_message(timeout=60 - ANSWER_WINDOW)
                    return
            self.report.unanswered += 1
            self.report.unanswered_at_kill += 1
            self.report.details.append(f"/start of {user.id} lost at a SIGKILL: sent again")

    async def player(self, user: SimUser, rng: random.Random, tid: str = "") -> None:
        """Play private games one after another -- or the group game ``tid``
        to its end."""
        r = self.report
        if not tid:
            await self.started(user)
            tid = await self.new_game(user)
        owed = 0  # unanswered presses not (yet) seen applied
        pressed: tuple[int, int] = (0, -1)  # the message and version of his last press
        while not self.stop.is_set():
            playing, mid = await self.look(tid, user)
            if not playing and self.group_players:
                return
            if not playing:
                tid = await self.new_game(user, after=tid)
                continue
            msg = user.chat.messages.get(mid) if mid else None
            choice = move_or_tap(msg, rng) if msg is not None else None
            if msg is None or choice is None:
                await asyncio.sleep(0.3)
                continue
            data, is_move = choice
            shown = msg.version
            # the keyboard of his last press, not redrawn since: a double tap
            # (answered silently, no move) or a tap of a selection it already shows;
            # or a keyboard he already moved from -- by a press, or by the pass his
            # seat made by itself (#28: the bot's REPEATED, silent, no move)
            moved_on = await self.moved_on(tid, user, data)
            again = pressed == (msg.message_id, shown) or bool(moved_on)
            before = await self.moves_before(tid, user)
            pressed = (msg.message_id, shown)
            r.again += again
            r.presses += 1
            r.move_presses += is_move
            sent = time.monotonic()
            try:
                query = user.press(data=data, message=msg)
            except LookupError:  # redrawn while he looked: look again
                r.presses -= 1
                r.move_presses -= is_move
                r.again -= again
                pressed = (0, -1)
                continue
            try:
                answer = await query.wait_answer(ANSWER_WINDOW)
            except TimeoutError:
                answer = None
            answered = time.monotonic()
            refused = answer is not None and bool(answer.get("text"))
            # when his message showed the outcome (an edit may wait for tokens); his
            # moves are read after it: a press answered silently before its move
            # was made (it waited for a failover, #40) is judged by the move
            silent = answer is not None and not refused
            redrawn = await self.redrawn(user, msg, shown) if silent else None
            got = await self.moves_after(tid, user, refused=refused)
            if got is None:  # judged with his next press: its count starts before this one
                r.refused += 1
                pressed = (0, -1)
                self.applied(tid, sent, answered, moved=False, answer=answer or {})
                await asyncio.sleep(rng.uniform(*self.think))
                continue
            after = got
            self.known[tid, user.id] = after
            added = after - before
            again = await self.again_after(
                tid, user, data, again=again, added=added, known=moved_on
            )
            if answer is None:
                r.unanswered += 1
                r.unanswered_at_kill += self.at_kill(sent)
                owed += 1 - min(added, 1)
                r.applied_twice += max(0, added - 1)
                continue
            refused = bool(answer.get("text"))
            r.refused += refused
            # nothing changed: the same keyboard pressed again is no double tap
            pressed = (0, -1) if refused else pressed
            # a move press: one move; a card tap: a move or a selection
            least = 1 if is_move and not refused and not again else 0
            most = 0 if refused or again else 1
            late = min(owed, max(0, added - most))  # an earlier unanswered one landed
            owed -= late
            added -= late
            if added < least and selection_moved_on(data, msg):
                r.redrawn += 1  # REDRAWN: drawn for another revision of his selection
            elif added < least:
                r.lost += 1
                r.details.append(
                    f"lost: {user.user.first_name} {data} -> {answer}; "
                    f"since: {await self.seat_events(tid, user, data)}"
                )
            elif added > most:
                r.applied_twice += added - most
                r.details.append(
                    f"twice: {user.user.first_name} {data} -> {answer}; before {before}, "
                    f"again {again}, owed {owed}; since: {await self.seat_events(tid, user, data)}"
                )
            moved = added > 0 and not refused
            self.applied(tid, sent, answered, moved=moved, answer=answer, redrawn=redrawn)
            await asyncio.sleep(rng.uniform(*self.think))

    async def redrawn(self, user: SimUser, msg: Message, shown: int) -> float | None:
        """When his message ``msg``, shown at world version ``shown`` when he
        pressed it, was redrawn (None: not within 10 s, counted slow)."""

        def edited() -> bool | None:
            return msg.version != shown or None

        try:
            await user.world.wait_for(edited, 10)
        except TimeoutError:
            self.report.slow += 1
            return None
        return time.monotonic()

    def applied(
        self,
        tid: str,
        sent: float,
        answered: float,
        *,
        moved: bool,
        answer: dict[str, Any],
        redrawn: float | None = None,
    ) -> None:
        """A press of table ``tid`` sent at ``sent`` was answered at ``answered``
        (monotonic) with ``answer``, and ``moved``: it made a move; his message
        showed its outcome at ``redrawn`` (None: not within 10 s, or refused) --
        for a subclass's figures."""

    async def look(self, tid: str, user: SimUser) -> tuple[bool, int | None]:
        """Whether table ``tid`` still plays, and the message id of his hand:
        read from the service (again until it answers)."""
        table, _state, _v = await patient(partial(self.fleet.svc.tables.get, tid))
        if table.status != PLAYING:
            return False, None
        return True, (await patient(partial(self.fleet.ui.table, tid))).hands.get(user.id)

    async def moved_on(
        self, tid: str, user: SimUser, data: str, *, quick: bool = False
    ) -> bool | None:
        """His seat moved since the keyboard of ``data`` was drawn: by a press,
        or by the pass his seat made by itself (#28).  ``None``: not known yet
        (a subclass's read that does not wait for the store)."""
        kinds = ("act", "autopass")
        return bool(await self.seat_events(tid, user, data, kinds, quick=quick))

    async def again_after(
        self, tid: str, user: SimUser, data: str, *, again: bool, added: int, known: bool | None
    ) -> bool:
        """:meth:`moved_on` not ``known`` at the press, judged after it was
        answered: a press that made no move, on a keyboard his seat had moved
        from (counted)."""
        if known is not None or again or added:
            return again
        again = bool(await self.seat_events(tid, user, data, ("act", "autopass")))
        self.report.again += again
        return again

    async def moves_before(self, tid: str, user: SimUser) -> int:
        """His moves in ``tid`` before this press: the count his last press's
        bookkeeping read (only his presses add to it: ``act``), or the log's."""
        known = self.known.get((tid, user.id))
        return known if known is not None else await self.moves_of(tid, user)

    # ------------------------------------------------------------------ restarts
    async def restarts(self) -> None:
        sig = SIGNALS[self.kill]
        loop = asyncio.get_running_loop()
        start = loop.time()
        n = 1
        while True:
            wake = start + n * self.every
            if wake >= start + self.seconds:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), wake - loop.time())
                return
            i = self.rng.randrange(self.fleet.count)
            if sig == signal.SIGKILL:
                self.kills.append(time.monotonic())
            code = await self.fleet.signal(i, sig)
            if sig == signal.SIGTERM and code != 0:
                self.report.stops_not_clean += 1
                self.report.details.append(f"process {i} stopped with {code}")
            await self.fleet.restart(i)
            self.report.restarts += 1
            n += 1

    # ------------------------------------------------------------------ the end
    async def stuck(self, tid: str, user: SimUser) -> str | None:
        """Why the game is stuck -- not over, and not waiting for its human with
        his hand on the table's current version --, or None."""
        table, state, version = await self.fleet.svc.tables.get(tid)
        if table.status != PLAYING or state is None or state.over:
            return None
        humans = {i for i, s in enumerate(table.seats) if s.user == user.id}
        if not humans & set(state.to_act()):
            return f"the AI's turn at #{version} (seats {state.to_act()}), never moved"
        mid = (await self.fleet.ui.table(tid)).hands.get(user.id)
        msg = user.chat.messages.get(mid) if mid else None
        if msg is None:
            return f"his turn at #{version}, no hand message (id {mid})"
        versions = [cb.version for b in msg.buttons if (cb := parse_game(b.get("callback_data")))]
        if max(versions, default=-1) != version:
            return f"his turn at #{version}, his hand {mid} shows #{max(versions, default=-1)}"
        return None

    async def run_groups(self) -> SoakReport:
        """The group games: opened the way people do, played to the end (or
        until ``seconds`` ran out: the rest hung)."""
        r = self.report
        opened = await asyncio.gather(
            *(
                open_group_game(self.fleet, h, title=f"Group {g}")
                for g, h in enumerate(self.groups)
            ),
            return_exceptions=True,
        )
        games = [
            (tid, humans)
            for got, humans in zip(opened, self.groups, strict=True)
            if not isinstance(got, BaseException)
            for tid in [got[0]]
        ]
        r.lobbies_filled = r.games_played = len(games)
        r.details += [f"lobby: {got!r}" for got in opened if isinstance(got, BaseException)]
        players = [
            asyncio.create_task(self.player(u, random.Random(self.rng.random()), tid))
            for tid, humans in games
            for u in humans
        ]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*players), self.seconds)
        self.stop.set()
        await asyncio.gather(*players, return_exceptions=True)
        await asyncio.sleep(5)  # the last edits go out
        for tid, _humans in games:
            table, _state, _v = await self.fleet.svc.tables.get(tid)
            if table.status == PLAYING:
                r.stuck += 1
                r.details.append(f"hung: {tid}")
            else:
                r.games_over += 1
        r.duplicates = sum(
            log.read_text().count(" is a duplicate: dropped") for log in self.fleet.logs
        )
        r.retry_after = self.fake.stats.retry_after
        self.refusals()
        return r

    async def watch_loop(self) -> None:
        """Note each time this process's event loop (the fake's) was held up."""
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.05)
            late = loop.time() - before - 0.05
            if late > 0.2:
                self.report.stalls.append(late)
                at = float(self.fake.world.clock())  # the outbox's clock
                self.report.details.append(f"loop held up {late:.2f} s until {at:.2f}")

    async def run(self) -> SoakReport:
        watch = asyncio.create_task(self.watch_loop())
        try:
            return await self._run()
        finally:
            watch.cancel()

    async def _run(self) -> SoakReport:
        if self.group_players:
            return await self.run_groups()
        r = self.report
        players = [
            asyncio.create_task(self.player(u, random.Random(self.rng.random())))
            for u in self.users
        ]
        t0 = time.monotonic()
        await self.restarts()
        await asyncio.sleep(max(0.0, self.seconds - (time.monotonic() - t0)))
        self.stop.set()
        await asyncio.gather(*players)
        await asyncio.sleep(15)  # every process up: pending renders and timers settle
        suspects: dict[str, tuple[SimUser, str]] = {}
        for u in self.users:
            t = await self.fleet.svc.tables.where(u.id)
            if t is None:
                continue
            events = await self.fleet.svc.admin.event_page(t.id, 0, 1_000_000)
            r.extended += sum(1 for e in events if e.kind == "extend")
            why = await self.stuck(t.id, u)
            if why is not None:
                suspects[t.id] = (u, why)
        # the games' turn timers go on firing meanwhile (the players stopped):
        # a game caught between a timeout's write and its render is not stuck
        # unless it stays so for STUCK_AFTER seconds
        loop = asyncio.get_running_loop()
        until = loop.time() + STUCK_AFTER
        while suspects and loop.time() < until:
            await asyncio.sleep(1.0)
            for tid, (u, _why) in list(suspects.items()):
                why = await self.stuck(tid, u)
                if why is None:
                    del suspects[tid]
                    r.caught_up += 1
                else:
                    suspects[tid] = (u, why)
        for tid, (u, why) in suspects.items():
            events = await self.fleet.svc.admin.event_page(tid, 0, 1_000_000)
            r.stuck += 1
            last = " ".join(f"#{e.version}:{e.kind}:{e.seat}:{e.text}" for e in events[-6:])
            r.details.append(f"stuck: {tid} of {u.user.first_name}: {why}; last: {last}")
        r.retry_after = self.fake.stats.retry_after
        self.refusals()
        return r

    def refusals(self) -> None:
        """Which window refused the fake's 429s (first: the assertion shows the
        first details), the chats that drew them with their writes just before,
        and the bots' own warnings of the flood limiter (a fallback, a hold)."""
        if not self.fake.stats.retry_after:
            return
        stats = self.fake.stats
        refused = list(zip(stats.refusals, stats.refused_at, strict=True))
        lines = [f"429 at {at:.2f}: {why}" for why, at in refused[:3]]
        for chat, n in stats.retry_after_by_chat.items():
            sent = [e for e in self.fake.world.outbox if e["chat_id"] == chat]
            # its writes around its first 429 (the window's 3 s before it), else its last
            at = next(
                (t for why, t in refused if f"chat {chat}:" in why),
                None,
            )
            near = [e for e in sent if at is None or at - 4 <= e.get("at", 0) <= at + 1]
            tail = " ".join(f"{e['kind']}@{e.get('at', 0):.2f}" for e in (near or sent)[-8:])
            lines.append(f"429 x{n} in chat {chat}; its writes around it: {tail}")
        for i, log in enumerate(self.fleet.logs):
            for line in log.read_text(errors="replace").splitlines():
                if "flood" in line.lower() and ("WARNING" in line or "ERROR" in line):
                    lines.append(f"bot {i}: {line[:300]}")
        self.report.details[:0] = lines


async def soak(
    redis_url: str,
    prefix: str,
    *,
    kill: str = "SIGTERM",
    processes: int = 3,
    games: int = 50,
    seconds: float = 100.0,
    every: float = 30.0,
    seed: int = 1,
    env: dict[str, str] | None = None,
) -> SoakReport:
    """One soak on its own fake Bot API and fleet (see the module)."""
    settings = {"DEFAULT_TIMER": "30", "SOLO_OPPONENTS": "1", "AI_WORKERS": "0", **(env or {})}
    async with (
        FakeTelegram(limits=RateLimits.from_env()) as fake,
        BotFleet(fake, redis_url, prefix, count=processes, env=settings) as fleet,
    ):
        return await Soak(
            fake, fleet, games=games, seconds=seconds, every=every, kill=kill, seed=seed
        ).run()


async def broadcast_fleet(
    redis_url: str,
    prefix: str,
    *,
    processes: int = 2,
    lobbies: int = 10,
    players: int = 3,
    seconds: float = 600.0,
    seed: int = 1,
) -> SoakReport:
    """Every update to every process (the proxy's broadcast mode): ``lobbies``
    group games of ``players`` humans opened and played to the end (#28: on a
    cluster, claims split over two nodes dropped presses, lobbies and games)."""
    settings = {"DEFAULT_TIMER": "0", "AI_WORKERS": "0"}
    async with (
        FakeTelegram(limits=RateLimits.from_env()) as fake,
        BotFleet(fake, redis_url, prefix, count=processes, mode="broadcast", env=settings) as fleet,
    ):
        check = Soak(
            fake,
            fleet,
            games=lobbies,
            seconds=seconds,
            every=float("inf"),
            kill="",
            seed=seed,
            think=(0.1, 0.5),
            group_players=players,
        )
        return await check.run()
