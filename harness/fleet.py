"""Several real bot processes behind one webhook (issue #12), for the
multi-process end-to-end tests and ``bench/scale.py``:

* :class:`BotFleet` starts ``count`` ``python -m telegram_bot`` subprocesses in
  webhook mode (``TELEGRAM_API_URL``: a :class:`~sandbox.fake_api.FakeTelegram`;
  one ``REDIS_URL``, ``redis+cluster://`` for a cluster) behind a
  :class:`~sandbox.webhook_proxy.WebhookProxy` -- every process registers the
  proxy's URL with ``setWebhook`` -- and stops them with SIGINT (as Ctrl-C);
* :func:`open_group_game` starts a group game the way people do: the bot
  added to a new group, /start in each private chat, /new, Join, Start.

The fleet holds a table service and chat-state store of its own on the same
Redis, so the caller can look at the tables (the processes are out of reach).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox.fake_api import Chat, FakeTelegram, SimUser
from sandbox.local_redis import free_loopback_port
from sandbox.webhook_proxy import WebhookProxy
from tables import LiveConfig, TableService
from telegram_bot.state.chat_state import ChatStateStore

PATH = "/telegram"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
READY_LINE = "Webhook mode"
"""What a bot process prints once it serves its webhook."""


class BotFleet:
    """``async with BotFleet(fake, redis_url, prefix, count=2) as fleet:`` --
    ``count`` bot processes behind ``fleet.proxy`` (``mode``: see
    :mod:`sandbox.webhook_proxy`); ``env`` adds settings (environment variables)
    for every process."""

    def __init__(
        self,
        fake: FakeTelegram,
        redis_url: str,
        prefix: str,
        *,
        count: int = 2,
        mode: str = "round_robin",
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.fake = fake
        self.redis_url = redis_url
        self.prefix = prefix
        self.count = count
        self.env = {"DEFAULT_TIMER": "0", "SET_COMMANDS": "false", **(env or {})}
        self.secret = secrets.token_urlsafe(24)
        self.ports = [free_loopback_port() for _ in range(count)]
        targets = [f"http://127.0.0.1:{p}{PATH}" for p in self.ports]
        self.proxy = WebhookProxy(targets, mode=mode)
        self.procs: list[asyncio.subprocess.Process] = []
        self._codes: list[int | None] | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="durak-fleet-")
        self.logs = [Path(self._tmp.name) / f"bot{i}.log" for i in range(count)]
        self.svc = TableService.from_url(redis_url, LiveConfig(prefix=prefix))
        self.ui = ChatStateStore.of(self.svc)

    def log_tail(self, chars: int = 3000) -> str:
        return "\n".join(f"--- bot {i}\n{p.read_text()[-chars:]}" for i, p in enumerate(self.logs))

    async def start(self) -> None:
        await self.proxy.start()
        self.procs = [await self._spawn(i) for i in range(self.count)]
        await asyncio.gather(*(self._first_start(i) for i in range(self.count)))

    async def _first_start(self, i: int) -> None:
        """Process ``i`` serving its webhook; started again on another port when
        its free port was taken meanwhile by another test's server (a race of
        :func:`free_loopback_port`, not the bot's fault: seen once in CI)."""
        for _attempt in range(3):
            try:
                await self._listening(i, 0)
                return
            except RuntimeError:
                log = self.logs[i].read_text() if self.logs[i].exists() else ""
                if self.procs[i].returncode is None or "address already in use" not in log:
                    raise
                self.logs[i].write_text("")
                self.ports[i] = free_loopback_port()
                self.proxy.targets[i] = f"http://127.0.0.1:{self.ports[i]}{PATH}"
                self.procs[i] = await self._spawn(i)
        await self._listening(i, 0)

    async def _spawn(self, i: int) -> asyncio.subprocess.Process:
        """Start bot process ``i`` (its log is appended to)."""
        env = {
            **os.environ,
            "BOT_TOKEN": self.fake.token,
            "REDIS_URL": self.redis_url,
            "REDIS_PREFIX": self.prefix,
            "TELEGRAM_API_URL": self.fake.url,
            "WEBHOOK_URL": self.proxy.url,
            "WEBHOOK_SECRET": self.secret,
            "WEBHOOK_HOST": "127.0.0.1",
            "WEBHOOK_PORT": str(self.ports[i]),
            "WEBHOOK_PATH": PATH,
            **self.env,
        }
        with self.logs[i].open("ab") as out:
            return await asyncio.create_subprocess_exec(
                sys.executable, "-m", "telegram_bot", env=env, stdout=out, stderr=out
            )

    def _starts(self, i: int) -> int:
        return self.logs[i].read_text().count(READY_LINE) if self.logs[i].exists() else 0

    async def _listening(self, i: int, starts: int) -> None:
        """Until process ``i`` says it serves its webhook for the ``starts + 1``-th
        time (RuntimeError if it dies)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while self._starts(i) <= starts:
            if self.procs[i].returncode is not None or loop.time() > deadline:
                raise RuntimeError(f"bot process {i} did not start:\n{self.log_tail()}")
            await asyncio.sleep(0.1)

    async def signal(self, i: int, sig: int | None = signal.SIGTERM) -> int | None:
        """Send ``sig`` (None: none, it was sent) to process ``i`` and wait for it
        to exit: its exit code (None: it was still running after
        ``STOP_TIMEOUT`` s, then killed)."""
        proc = self.procs[i]
        if proc.returncode is None and sig is not None:
            proc.send_signal(sig)
        try:
            return await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return None

    async def restart(self, i: int) -> None:
        """Start process ``i`` again (after :meth:`signal`), until it serves."""
        assert self.procs[i].returncode is not None, "stop it first"
        starts = self._starts(i)
        self.procs[i] = await self._spawn(i)
        await self._listening(i, starts)

    async def stop(self) -> list[int | None]:
        """SIGINT to each process (it finishes the updates in hand, flushes its
        pending edits); their exit codes.  Once: later calls return the same."""
        if self._codes is not None:
            return self._codes
        for proc in self.procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
        codes = [await self.signal(i, None) for i in range(len(self.procs))]  # once each
        await self.proxy.stop()
        await self.svc.aclose()
        self._codes = codes
        return codes

    async def __aenter__(self) -> BotFleet:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            self._tmp.cleanup()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.stop()
        finally:
            self._tmp.cleanup()

    async def wait_hands(self, table_id: str, users: Sequence[SimUser]) -> None:
        """Until every user's hand message of the table is recorded."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:
            hands = (await self.ui.table(table_id)).hands
            if all(u.id in hands for u in users):
                return
            if loop.time() > deadline:
                raise TimeoutError(f"hand messages of {table_id} never recorded")
            await asyncio.sleep(0.05)


async def open_group_game(
    fleet: BotFleet, humans: Sequence[SimUser], variant: str = "chuvash", title: str = "Cards"
) -> tuple[str, Chat]:
    """A started group game of ``humans`` (the first creates it): its table id
    and the group."""
    owner = humans[0]
    group = owner.create_group(title, *humans[1:])
    owner.add_bot_to(group)
    for u in humans:
        u.start()
        await u.wait_message(timeout=START_TIMEOUT)
    owner.send(f"/new {variant}", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=START_TIMEOUT)
    for u in humans[1:]:
        await u.press("Join", message=lobby, chat=group).wait_answer(START_TIMEOUT)
    table = await fleet.svc.tables.where(owner.id)
    if table is None or len(table.seats) != len(humans):
        raise RuntimeError(f"the lobby did not fill: {table}")
    await owner.press("Start", message=lobby, chat=group).wait_answer(START_TIMEOUT)
    await fleet.wait_hands(table.id, humans)
    return table.id, group
