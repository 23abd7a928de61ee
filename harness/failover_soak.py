"""A master and a bot process killed mid-game (#40), for ``bench/faults.py
--fleet-failover`` and the suite's failover tests.

A fleet of ``processes`` bot processes (webhook, each update to one process)
on a Redis Cluster of 3 masters, each with a replica, the fake Bot API with
Telegram's flood limits on; ``games`` group games of ``players`` humans with a
turn timer, opened the way people do and played by careless players (random
useful buttons, a short think between presses).  Once every game is under way
the master of the first startup node is killed (``kill -9``; the cluster
promotes its replica, the node stays dead); ``bot_after`` seconds later one
bot process is killed (``kill -9``) and started again (the dead node still
first in its ``REDIS_URL``), and one player of each game stops pressing for
good at that moment -- his seat is then played by timeouts and the AI.  The
games are played to their end.

The report counts (:class:`FailoverReport`): moves lost, applied twice,
presses unanswered (beyond those in flight at the bot's kill), the 429s the
fake answered, edits that showed a message older than it showed before
(backwards), hands left showing a live game after their game ended (stale),
wasted calls (edits refused as "message is not modified", presses answered
after Telegram's window), the tracebacks in the bots' logs; and per game the
time from the master's death to its first applied press."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harness.fleet import BotFleet, open_group_game
from harness.local_cluster import LocalCluster, slot_ranges, start_cluster
from harness.soak import Soak, SoakReport, patient
from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.fake_api.world import World
from tables import PLAYING, ServiceUnavailable
from tables.client import slot_of
from telegram_bot.buttons.callbacks import SeatCb, parse_game


@dataclass
class FailoverReport(SoakReport):
    """The soak's counts, and the failover's own (see the module)."""

    master_killed: bool = False
    bot_killed: bool = False
    backwards: int = 0
    stale_hands: int = 0
    not_modified: int = 0
    too_old: int = 0
    tracebacks: int = 0
    first_press: dict[str, float] = field(default_factory=dict)  # table -> s after the kill
    first_latency: dict[str, float] = field(default_factory=dict)  # table -> its press -> answer
    # table -> s after the kill its first applied press showed in his message, if
    # later than the answer (a press answered silently while it waited, #40)
    first_shown: dict[str, float] = field(default_factory=dict)
    on_dead_master: set[str] = field(default_factory=set)  # tables in the killed master's slots
    # tables elsewhere whose presses after the death were answered "unavailable"
    # before their first applied one: another key of the game was on the killed master
    held_by_dead: set[str] = field(default_factory=set)
    # tables elsewhere whose timer shard (each move's hint) lived on the killed
    # master: their moves wait for the promotion too (#40)
    shard_on_dead: set[str] = field(default_factory=set)
    # table -> the first press *sent* after the death, its own wait: sent -> answered
    # (any answer but "unavailable"), without the player's think before it (#40)
    sent_wait: dict[str, float] = field(default_factory=dict)
    # table -> the same press, sent -> shown in his message, if later than the answer
    sent_shown: dict[str, float] = field(default_factory=dict)
    sent_moved: set[str] = field(default_factory=set)  # tables whose first sent press moved
    sent_unavailable: set[str] = field(default_factory=set)  # ... answered "unavailable"
    node_timeout_ms: int = 2000  # the cluster's cluster-node-timeout
    promoted: float | None = None  # s after the death its replica called itself master

    def rows(self) -> list[tuple[str, object]]:

        def span(values: Iterable[float]) -> str:
            v = sorted(values)
            return f"{v[0]:.2f}-{v[-1]:.2f} s ({len(v)} games)" if v else "none"

        dead, held = self.on_dead_master, self.held_by_dead - self.on_dead_master
        shard = self.shard_on_dead - dead - held

        def first(at: dict[str, float]) -> str:
            alive = set(at) - dead - held - shard
            return (
                f"{span(at[t] for t in alive)} on the other masters, "
                f"{span(at[t] for t in shard & set(at))} "
                "there but their timer shard on the killed one, "
                f"{span(at[t] for t in held & set(at))} "
                "there but answered 'unavailable' first (another key on the killed one), "
                f"{span(at[t] for t in dead & set(at))} on the killed one's slots"
            )

        latency = span(self.first_latency.values())
        return [
            *super().rows(),
            ("startup master killed (-9)", self.master_killed),
            (
                f"its replica promoted after (cluster-node-timeout {self.node_timeout_ms} ms)",
                "not seen" if self.promoted is None else f"{self.promoted:.2f} s",
            ),
            ("bot process killed (-9) and restarted", self.bot_killed),
            (
                "first applied press after the master's death, from the death",
                first(self.first_press),
            ),
            (
                "  the same, when it showed in his message (if after the answer)",
                first({**self.first_press, **self.first_shown}),
            ),
            ("first applied press after the master's death, press to answer", latency),
            (
                "first press sent after the master's death, sent -> answered (its own wait)",
                first(self.sent_wait),
            ),
            (
                "  the same, when it showed in his message (if after the answer)",
                first({**self.sent_wait, **self.sent_shown}),
            ),
            (
                "  of those first presses: moves / answered 'unavailable' (left out above)",
                f"{len(self.sent_moved)} / {len(self.sent_unavailable)}",
            ),
            ("edits going backwards", self.backwards),
            ("hands left showing a finished game", self.stale_hands),
            ("wasted calls: message is not modified", self.not_modified),
            ("wasted calls: query is too old", self.too_old),
            ("tracebacks in the bots' logs", self.tracebacks),
        ]

    @property
    def faults(self) -> int:
        """Every count that must be 0."""
        return (
            self.lost
            + self.applied_twice
            + self.unanswered_beyond_kills
            + self.retry_after
            + self.backwards
            + self.stale_hands
            + self.not_modified
            + self.too_old
            + self.tracebacks
            + self.stuck
        )


def _game_versions(markup: Any) -> dict[str, int]:
    """The newest game version each game's buttons in ``markup`` were drawn at."""
    found: dict[str, int] = {}
    for row in (markup or {}).get("inline_keyboard", []):
        for button in row:
            cb = parse_game(button.get("callback_data"))
            if cb is not None:
                found[cb.game] = max(found.get(cb.game, -1), cb.version)
    return found


def _live_games(markup: Any) -> set[str]:
    """The games whose live buttons ``markup`` carries: a move or *Take my seat back*."""
    games: set[str] = set()
    for row in (markup or {}).get("inline_keyboard", []):
        for button in row:
            data = button.get("callback_data")
            cb = parse_game(data)
            if cb is not None:
                games.add(cb.game)
                continue
            with contextlib.suppress(Exception):
                seat = SeatCb.unpack(data)
                games.add(seat.game)
    return games


def hand_in_chat(user: SimUser, tid: str) -> int | None:
    """The message of his chat that carries the newest buttons of game ``tid``."""
    best: tuple[int, int] | None = None
    for mid, message in user.chat.messages.items():
        version = _game_versions(message.reply_markup).get(tid)
        if version is not None and (best is None or (version, mid) > best):
            best = (version, mid)
    return best[1] if best else None


def backwards(outbox: Iterable[dict[str, Any]]) -> list[str]:
    """Writes that showed a game older than the same message showed before."""
    shown: dict[tuple[Any, ...], int] = {}
    found = []
    for entry in outbox:
        where = (
            entry["chat_id"],
            entry["message_id"],
            entry.get("inline_message_id"),
            entry.get("ephemeral_message_id"),
        )
        for game, version in _game_versions(entry.get("reply_markup")).items():
            key = (*where, game)
            if version < shown.get(key, -1):
                found.append(f"{where} of {game}: #{version} after #{shown[key]}")
            shown[key] = max(version, shown.get(key, -1))
    return found


def stale_hands(world: World, over: set[str]) -> list[str]:
    """Messages (and ephemeral messages) that still offer a move, or the seat
    back, in a game that is over: what each one shows now."""
    found = []
    for chat in world.chats.values():
        for kind, messages in (("message", chat.messages), ("ephemeral", chat.ephemeral)):
            for mid, message in messages.items():
                if live := _live_games(message.reply_markup) & over:
                    found.append(f"{kind} {chat.id}/{mid} shows {sorted(live)} live")
    return found


class FailoverSoak(Soak):
    """``await FailoverSoak(fake, fleet, cluster, ...).run()``: the report."""

    def __init__(
        self,
        fake: FakeTelegram,
        fleet: BotFleet,
        cluster: LocalCluster,
        *,
        games: int,
        players: int,
        seconds: float,
        seed: int,
        master_after: float,
        bot_after: float,
        think: tuple[float, float],
    ) -> None:
        super().__init__(
            fake,
            fleet,
            games=games,
            seconds=seconds,
            every=float("inf"),
            kill="SIGKILL",
            seed=seed,
            think=think,
            group_players=players,
        )
        self.failover = FailoverReport("SIGKILL", fleet.count, games, seconds)
        self.failover.mode, self.failover.group_players = fleet.proxy.mode, players
        self.report = self.failover
        self.cluster = cluster
        self.master_after, self.bot_after = master_after, bot_after
        self.master_dead_at: float | None = None
        self.after_kill: dict[str, list[str]] = {}  # table -> its first presses after it
        self.first_sent: dict[str, float] = {}  # table -> when its first press after it went
        self.trace: list[dict[str, Any]] = []  # every press answered (for ``keep``)
        self.bot_dead = asyncio.Event()
        self.tables: list[str] = []

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
        dead = self.master_dead_at
        self.trace.append(
            {"table": tid, "sent": sent, "answered": answered, "redrawn": redrawn}
            | {"moved": moved, "text": answer.get("text"), "dead": dead}
        )
        if dead is not None and sent >= dead:
            seen = self.after_kill.setdefault(tid, [])
            if len(seen) < 4:  # the first presses after the master's death: when, what
                said = f" {str(answer.get('text'))[:30]!r}" if answer.get("text") else ""
                # when his message showed its outcome: what his next press waited for
                shown = f"~{redrawn - dead:.2f}" if redrawn is not None else ""
                plus = "+" if moved else ""
                seen.append(f"{sent - dead:.2f}->{answered - dead:.2f}{shown}{plus}{said}")
        if dead is not None and sent >= dead and sent < self.first_sent.get(tid, float("inf")):
            self._first_sent(tid, sent, answered, moved=moved, answer=answer, redrawn=redrawn)
        first = dead is not None and sent >= dead and tid not in self.failover.first_press
        if first and "unavailable" in str(answer.get("text") or "").lower():
            self.failover.held_by_dead.add(tid)
        if moved and first and dead is not None:
            self.failover.first_press[tid] = answered - dead
            if redrawn is not None and redrawn > answered:  # answered silently while it waited
                self.failover.first_shown[tid] = redrawn - dead
            self.failover.first_latency[tid] = answered - sent

    def _first_sent(
        self,
        tid: str,
        sent: float,
        answered: float,
        *,
        moved: bool,
        answer: dict[str, Any],
        redrawn: float | None,
    ) -> None:
        """The first press of ``tid`` sent after the master's death (so far: the
        presses of a game's players are answered in any order): its own wait,
        from its send -- the figure without the player's think before it (#40)."""
        r = self.failover
        self.first_sent[tid] = sent
        r.sent_wait.pop(tid, None)
        r.sent_shown.pop(tid, None)
        r.sent_moved.discard(tid)
        r.sent_unavailable.discard(tid)
        if "unavailable" in str(answer.get("text") or "").lower():
            r.sent_unavailable.add(tid)
            return
        r.sent_wait[tid] = answered - sent
        if redrawn is not None and redrawn > answered:  # answered silently while it waited
            r.sent_shown[tid] = redrawn - sent
        if moved:
            r.sent_moved.add(tid)

    # While the cluster fails over, a player presses on what his chat shows, as a
    # person does: the harness's own reads of the tables (which wait out the
    # promotion) never hold a press back (#40: they made the first press after
    # the master's death a figure of the harness, not of the bot).

    async def look(self, tid: str, user: SimUser) -> tuple[bool, int | None]:
        try:
            table, _state, _v = await self.fleet.svc.tables.get(tid)
        except ServiceUnavailable:
            pass
        else:
            if table.status != PLAYING:
                return False, None
        return True, hand_in_chat(user, tid)

    async def moved_on(
        self, tid: str, user: SimUser, data: str, *, quick: bool = True
    ) -> bool | None:
        try:
            return await super().moved_on(tid, user, data, quick=True)
        except ServiceUnavailable:  # unknown now: judged once the press is answered
            return None

    async def moves_after(self, tid: str, user: SimUser, *, refused: bool) -> int | None:
        """After a refused press ("unavailable": a key of the game on the dead
        master), one try: the player presses again after his usual pause, as a
        person would, not once the harness's own read got through the failover
        (#40: that read held him until the promotion and added a second or two
        to the first applied press); the press is judged with his next one."""
        if not refused:
            return await super().moves_after(tid, user, refused=refused)
        try:
            return await self.moves_of(tid, user, quick=True)
        except ServiceUnavailable:
            return None

    async def careless(self, user: SimUser, rng: random.Random, tid: str) -> None:
        """He plays until the bot process is killed, then never presses again."""
        play = asyncio.create_task(self.player(user, rng, tid))
        dead = asyncio.create_task(self.bot_dead.wait())
        await asyncio.wait({play, dead}, return_when=asyncio.FIRST_COMPLETED)
        for task in (play, dead):
            task.cancel()
        await asyncio.gather(play, dead, return_exceptions=True)

    async def faults(self) -> None:
        r = self.failover
        await asyncio.sleep(self.master_after)
        first, last = slot_ranges(self.cluster.masters)[0]
        r.on_dead_master = {tid for tid in self.tables if first <= slot_of(f"{{t:{tid}}}") <= last}
        shards = self.fleet.svc.keys.timers_of
        r.shard_on_dead = {tid for tid in self.tables if first <= slot_of(shards(tid)) <= last}
        self.master_dead_at = time.monotonic()
        self.cluster.kill(0)  # the first startup node's master (#40)
        r.master_killed = True
        watch = asyncio.create_task(self._promotion(self.master_dead_at))
        await asyncio.sleep(self.bot_after)
        i = self.rng.randrange(self.fleet.count)
        self.kills.append(time.monotonic())
        self.bot_dead.set()
        await self.fleet.signal(i, signal.SIGKILL)
        await asyncio.sleep(2.0)
        await self.fleet.restart(i)
        r.bot_killed = True
        r.restarts += 1
        await watch

    async def _promotion(self, dead: float) -> None:
        """When the killed master's replica (node ``masters``) calls itself master."""
        replica = self.cluster.masters  # node masters + i replicates master i
        while time.monotonic() < dead + 60:
            if await asyncio.to_thread(self.cluster.is_master, replica):
                self.failover.promoted = time.monotonic() - dead
                return
            await asyncio.sleep(0.05)

    async def _run(self) -> SoakReport:
        r = self.failover
        opened = await asyncio.gather(
            *(
                open_group_game(self.fleet, h, title=f"Group {g}")
                for g, h in enumerate(self.groups)
            ),
            return_exceptions=True,
        )
        games = [
            (got[0], humans)
            for got, humans in zip(opened, self.groups, strict=True)
            if not isinstance(got, BaseException)
        ]
        r.lobbies_filled = r.games_played = len(games)
        self.tables = [tid for tid, _humans in games]
        r.details += [f"lobby: {got!r}" for got in opened if isinstance(got, BaseException)]
        players = [
            asyncio.create_task(
                (self.careless if i == len(humans) - 1 else self.player)(
                    u, random.Random(self.rng.random()), tid
                )
            )
            for tid, humans in games
            for i, u in enumerate(humans)
        ]
        faults = asyncio.create_task(self.faults())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*players, faults), self.seconds)
        self.stop.set()
        await asyncio.gather(*players, return_exceptions=True)
        if not faults.done():
            r.details.append("the run ended before its faults")
        faults.cancel()
        await asyncio.gather(faults, return_exceptions=True)
        # the idle seats' timers play the games out
        loop = asyncio.get_running_loop()
        until = loop.time() + self.seconds
        over: set[str] = set()
        while loop.time() < until:
            over = set()
            for tid, _humans in games:
                table, _state, _v = await patient(partial(self.fleet.svc.tables.get, tid))
                if table.status != PLAYING:
                    over.add(tid)
            if len(over) == len(games):
                break
            await asyncio.sleep(1.0)
        await asyncio.sleep(15)  # the last edits go out (a held render, a repair)
        r.games_over = len(over)
        r.stuck = len(games) - len(over)
        r.details += [f"hung: {tid}" for tid, _h in games if tid not in over]
        r.details += [  # sent -> answered ~ redrawn, in s after the master's death; +: a move
            f"after the master's death, {tid}: {' '.join(seen)}"
            for tid, seen in self.after_kill.items()
        ]
        outbox = list(self.fake.world.outbox)
        went_back = backwards(outbox)
        left = stale_hands(self.fake.world, over)
        r.backwards, r.stale_hands = len(went_back), len(left)
        r.details += [f"backwards: {line}" for line in went_back[:5]]
        r.details += [f"stale: {line}" for line in left[:5]]
        if left:  # what each player of a game with a stale hand was shown, in order
            for tid, humans in games:
                hands = (await patient(partial(self.fleet.ui.table, tid))).hands
                for u in humans:
                    shown = [
                        f"{mid}{'*' if hands.get(u.id) == mid else ''}: "
                        f"{(m.text or '')[:40]!r} {sorted(_live_games(m.reply_markup))}"
                        for mid, m in u.chat.messages.items()
                    ]
                    r.details.append(f"chat of {u.id} in {tid}: {shown}")
        stats = self.fake.stats
        r.retry_after, r.not_modified, r.too_old = (
            stats.retry_after,
            stats.not_modified,
            stats.late_answers,
        )
        warned: Counter[str] = Counter()  # what the bots said of the faults, by kind
        for i, log in enumerate(self.fleet.logs):
            lines = log.read_text(errors="replace").splitlines()
            for line in lines:
                level, _, said = line.partition(" WARNING ")
                if said and level[:2] == "20":
                    warned[re.sub(r"\d+|[A-Za-z0-9_-]{11}", "#", said)[:110]] += 1
            for n, line in enumerate(lines):
                if line.startswith("Traceback (most recent call last)"):
                    r.tracebacks += 1
                    said = next((x for x in reversed(lines[:n]) if x[:2] == "20"), "")
                    last = next((x for x in lines[n + 1 :] if not x.startswith(" ")), "")
                    r.details.append(f"traceback in bot {i}: {said[:160]} -> {last[:160]}")
        r.details += [f"{n} x warning: {said}" for said, n in warned.most_common(12)]
        self.refusals()
        if r.retry_after and self.master_dead_at is not None:  # on the writes' clock
            r.details.insert(0, f"master killed at {self.master_dead_at:.2f}")
        return r


async def fleet_failover(
    *,
    binary: str,
    processes: int = 3,
    games: int = 6,
    players: int = 3,
    timer: int = 30,
    master_after: float = 20.0,
    bot_after: float = 20.0,
    seconds: float = 600.0,
    think: tuple[float, float] = (0.5, 2.0),
    seed: int = 1,
    prefix: str = "ff:",
    node_timeout_ms: int = 2000,
    keep: Path | None = None,
) -> FailoverReport:
    """One run on a throw-away cluster of 3 masters and 3 replicas (see the
    module), its ``cluster-node-timeout`` ``node_timeout_ms``; ``keep``: a
    directory for what a diagnosis reads (:func:`keep_trace`)."""
    with tempfile.TemporaryDirectory(prefix="durak-failover-") as tmp:
        cluster = start_cluster(
            binary, Path(tmp), 3, replicas=1, full_coverage=False, node_timeout_ms=node_timeout_ms
        )
        try:
            masters = cluster.ports[: cluster.masters]
            url = "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in masters) + "/0"
            env = {"DEFAULT_TIMER": str(timer), "AI_WORKERS": "0"}
            async with (
                FakeTelegram(limits=RateLimits.from_env()) as fake,
                BotFleet(fake, url, prefix, count=processes, env=env) as fleet,
            ):
                soak = FailoverSoak(
                    fake,
                    fleet,
                    cluster,
                    games=games,
                    players=players,
                    seconds=seconds,
                    seed=seed,
                    master_after=master_after,
                    bot_after=bot_after,
                    think=think,
                )
                soak.failover.node_timeout_ms = node_timeout_ms
                report = await soak.run()
                assert isinstance(report, FailoverReport)
                if keep is not None:
                    keep_trace(keep, soak)
                return report
        finally:
            cluster.stop()


def keep_trace(where: Path, soak: FailoverSoak) -> None:
    """The run's trace in ``where``: each bot process's log (``bot<i>.log``),
    every press answered (``presses.jsonl``: its table, when it was sent,
    answered and shown in his message, whether it moved, the answer's text,
    the master's death; monotonic seconds) and every write of the fake Bot
    API (``outbox.jsonl``, ``at`` on the same clock)."""
    where.mkdir(parents=True, exist_ok=True)
    for i, log in enumerate(soak.fleet.logs):
        if log.exists():
            (where / f"bot{i}.log").write_bytes(log.read_bytes())
    with (where / "presses.jsonl").open("w") as out:
        out.writelines(json.dumps(entry) + "\n" for entry in soak.trace)
    with (where / "outbox.jsonl").open("w") as out:
        out.writelines(json.dumps(entry, default=str) + "\n" for entry in soak.fake.world.outbox)
